// The verdicts of the claims of an output directory's spec on the runs stored there, as
// `attnlab reproduce` decides them (claims_evaluate, claims.h) when every planned run is stored
// (reproduce also marks the verdicts of a partial run; this does not): DIR/results.sqlite's
// metadata gives the spec the store was last run with (claims, [select]) and the swept keys,
// its runs those of the current plan (experiment_plan_runs), the chosen ones under [select].
// For front ends that run one spec (Python's attnlab.run and attnlab.results); nothing is
// written.
#pragma once

#include <string>
#include <vector>

#include "experiment/claims.h"

namespace attn {

// IoError when DIR has no results.sqlite; an empty list for a spec without claims.
std::vector<ClaimResult> experiment_claims(const std::string& dir);

}  // namespace attn
