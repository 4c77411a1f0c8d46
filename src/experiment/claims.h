// Claim checks: declarative statements about an experiment's results, evaluated on the
// stored runs (status ok only), each giving PASS or FAIL with the numbers compared.
//
//   less_than   mean(metric over runs matching a) < factor * mean(metric over b)
//               (`where`, if given, restricts both sides)
//   below       mean(metric over runs matching where) < threshold
//   above       mean(metric over runs matching where) > threshold
//   decreasing  the means per value of `along` (numeric order, runs matching where)
//               decrease: each <= previous * (1 + tolerance), and last < first
//   increasing  the mirror image
//   ratio_increasing  the ratio mean(a) / mean(b) per value of `along` (runs also matching
//               where) increases: each >= previous * (1 - tolerance), and last > first
//   flat        the means per value of `along` spread by at most threshold (max - min)
//   size_increasing  per value of `along`, the smallest value of the swept key `size` whose
//               mean metric reaches the goal (< threshold for goal "below", > for "above");
//               PASS when it is reached at the first value, never smaller at a later value,
//               and larger at the last (a value where no size reaches the goal counts as
//               larger than every size tried)
//   size_flat   the same smallest sizes are reached at every value of `along` and
//               largest / smallest <= factor
// A claim with no matching runs fails (it cannot be checked).
#pragma once

#include <string>
#include <vector>

#include "experiment/spec.h"
#include "experiment/store.h"

namespace attn {

struct ClaimResult {
  std::string id, text;
  bool pass = false;
  std::string detail;  // the numbers compared, in words
};

// Whether a run matches a filter (values compared as numbers when both parse as numbers).
bool run_matches(const StoredRun& run, const RunFilter& filter);

ClaimResult claim_evaluate(const ClaimSpec& claim, const std::vector<StoredRun>& runs);

}  // namespace attn
