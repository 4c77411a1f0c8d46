// The verdicts of the claims of an output directory's spec on the runs stored there, as
// `attnlab reproduce` decides them (claims.h): DIR/spec.json gives the claims, the swept keys
// and [select]; DIR/results.sqlite the runs of the current plan (experiment_plan_runs), the
// chosen ones under [select]. For front ends that run one spec (Python's attnlab.run and
// attnlab.results); nothing is written.
#pragma once

#include <string>
#include <vector>

#include "experiment/claims.h"

namespace attn {

// IoError when DIR has no readable spec.json or results.sqlite; an empty list for a spec
// without claims.
std::vector<ClaimResult> experiment_claims(const std::string& dir);

}  // namespace attn
