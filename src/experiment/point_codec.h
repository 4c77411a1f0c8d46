// Run points as text, for handing them to another process (the ranks of an MPI sweep).
//
// The text carries the point's index, seed, run id and canonical configuration JSON, plus
// the values of execution settings (e.g. train.distributed), which the configuration JSON
// leaves out. The receiver resolves the configuration again through the same schemas and
// checks that it hashes to the same run id, so a rank running a different attnlab build
// refuses the point (UserError) instead of computing something else under its id.
// The swept-key map of the point is not carried (executing a run does not need it).
#pragma once

#include <string>

#include "experiment/plan.h"

namespace attn {

std::string run_point_encode(const RunPoint& point);
RunPoint run_point_decode(const std::string& text);

}  // namespace attn
