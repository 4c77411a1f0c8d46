// Claim checks: declarative statements about an experiment's results, decided on the stored
// runs (status ok only) with their uncertainty across seeds (statistics in claim_stats.h;
// the full rules in docs/spec-format.md §Claims).
//
// Evidence. A claim's filter selects runs; each seed's value is the mean of the metric over
// that seed's matching runs (several grid points pool into one value per seed). The seeds'
// values give a mean and Student-t bounds at the claim's confidence (each bound one-sided).
// With a single seed, a metric that is a mean over test samples is judged by its own
// standard error (the stored test_*_se); otherwise a single seed decides nothing.
//
// Verdicts. PASS when the claim holds at the confidence, FAIL when its negation does,
// INCONCLUSIVE otherwise (with a rough count of seeds that would decide it), NOT EVALUATED
// when the runs cannot contain the evidence (e.g. a trend along N when every run has one N,
// or no run matches the filter at all).
//
//   less_than   mean(a) < factor · mean(b): paired by seed (a_s − factor · b_s), or Welch
//               when the two sides share fewer than two seeds (`where` restricts both)
//   below / above  mean < threshold / mean > threshold
//   decreasing / increasing  the change from the first to the last value of `along`,
//               paired by seed, is < 0 / > 0, and no single step surely goes the other way
//               by more than `margin` (0: at all; a smaller reversal counts as flat)
//   ratio_increasing  the same test on mean(a) / mean(b) per value of `along`
//   flat        every pair of values of `along` differs by at most threshold (paired by seed)
//   size_increasing  per value of `along`, the smallest swept `size` whose mean reaches the
//               goal, bracketed by the bounds: [the smallest size that may reach it, the
//               smallest that surely does]; PASS when the bracket at the first value lies
//               below the one at the last and no later bracket lies surely below an earlier
//   size_flat   every value's needed size surely reached, largest / smallest <= factor
//   size_equals_along  at every value x of `along` the needed size is surely x: the bracket
//               is [x, x] (every smaller size tried surely misses the goal, x surely reaches
//               it); FAIL when some bracket surely excludes x (e.g. needed H = q, Mousavi-
//               Hosseini et al. 2025: q − 1 heads stay above the goal, q reach it)
//   size_ratio_increasing  the ratio needed size of a / needed size of b, bracketed from
//               the two brackets (a size never reached is larger than the largest tried),
//               grows along `along` by the size_increasing rule
//   power_law   the slope of log(metric) on log(along) (the exponent), per seed, compared
//               with the theory's `exponent`: within ± margin (compare = "equal"), at most
//               exponent + margin ("at_most") or at least exponent − margin ("at_least")
//   reach       from the series METRIC_by_SLICE: the largest slice value whose mean metric
//               reaches the goal (below / above threshold) at it and every smaller value,
//               bracketed by the bounds at each value [surely, may]; compared with `reach`
//               (at_least: the sure end ≥ reach; at_most: the may end ≤ reach; equal: both)
//   reach_growth  the slope of log2(each seed's reach) on along, compared with `exponent`
//               as power_law's (e.g. 1: the reach doubles per unit of along)
//
// Each kind is one row of claim_kinds.cpp (its keys, validation, evaluate function, doc);
// claim_evaluate calls the row's function.
#pragma once

#include <string>
#include <vector>

#include "experiment/claim_stats.h"
#include "experiment/spec.h"
#include "experiment/store.h"

namespace attn {

enum class Verdict { Pass, Fail, Inconclusive, NotEvaluated };

// "PASS", "FAIL", "INCONCLUSIVE", "NOT EVALUATED".
const char* verdict_name(Verdict v);

struct ClaimResult {
  std::string id, text;
  Verdict verdict = Verdict::NotEvaluated;
  std::string detail;  // the numbers compared, in words: estimate, bounds, seeds, margin
};

// One number a claim compared, so a figure of the same runs can be checked against it
// (tests/test_figure_data.cpp): the mean over seeds of the claim's metric over the ok runs
// matching `filter`, with its bounds at the claim's confidence; for the size claims the
// bracket of the needed size at the along value the filter names (`may`, `sure`; infinite:
// not reached). Recorded by below, above, less_than (each side), decreasing, increasing and
// flat (per value of `along`, when every seed has every value), size_increasing, size_flat and
// size_equals_along.
struct ClaimCell {
  RunFilter filter;
  Interval interval;
  bool size = false;
  double may = 0, sure = 0;
};

// Whether a run matches a filter (values compared as numbers when both parse as numbers).
bool run_matches(const StoredRun& run, const RunFilter& filter);

// The verdict; with `cells`, also the numbers it compared.
ClaimResult claim_evaluate(const ClaimSpec& claim, const std::vector<StoredRun>& runs,
                           std::vector<ClaimCell>* cells = nullptr);
// Every claim's verdict on the same runs, in the claims' order.
std::vector<ClaimResult> claims_evaluate(const std::vector<ClaimSpec>& claims,
                                         const std::vector<StoredRun>& runs);

}  // namespace attn
