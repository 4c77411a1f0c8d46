// Shared by the claim checks (claims.cpp, claims_trend.cpp, claims_size.cpp) and the figure
// data (figure_data*.cpp), so a claim and its figure compute a number the same way:
// collecting evidence from stored runs as per-seed samples, the smallest size that reaches a
// goal, and wording numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "experiment/claim_stats.h"
#include "experiment/claims.h"

namespace attn::claims_detail {

bool as_number(const std::string& text, double* out);
std::string fmt_num(double v);
// v with enough digits that it does not print like `bar` (0.99999 against 1 is not "1").
std::string fmt_near(double v, double bar);
std::string filter_text(const RunFilter& f);
std::string level_text(double confidence);  // "95%"
RunFilter filter_and(const RunFilter& side, const RunFilter& where);

// One seed's value of a metric: the mean over its matching runs, and (for a single seed)
// the standard error of that mean over its test samples, when every run stored one.
struct SeedValue {
  double sum = 0, se_sq = 0, df = 0;
  int runs = 0;
  bool has_se = true;
  double value() const { return sum / runs; }
};
using SeedValues = std::map<uint64_t, SeedValue>;
// Adds one ok run's metric (and its test_*_se, test_samples) to a seed's value.
void seed_value_add(const StoredRun& run, const std::string& metric, SeedValue& v);

// How many runs match a filter at all (any status) and how many of those are ok.
struct Matches {
  int64_t any = 0, ok = 0;
};
Matches runs_matching(const std::vector<StoredRun>& runs, const RunFilter& filter);

// Per-seed values of `metric` over ok runs matching `filter` (and, when given, whose value
// `keep` accepts).
SeedValues seed_values(const std::vector<StoredRun>& runs, const RunFilter& filter,
                       const std::string& metric,
                       const std::function<bool(double)>& keep = nullptr);
// The same per value of the numeric key `along` (runs without a numeric value are skipped).
std::map<double, SeedValues> seed_values_along(const std::vector<StoredRun>& runs,
                                               const RunFilter& filter, const std::string& metric,
                                               const std::string& along);
// Whether the runs matching `scope` hold two or more values of the claim's `along`; else
// *out is NOT EVALUATED, saying which value (if any) they hold.
bool along_values_enough(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                         const RunFilter& scope, ClaimResult* out);
// Whether every value of `along` held by runs matching `scope` has a finished run; else *out
// is INCONCLUSIVE naming the values whose runs all failed (a trend judged without them would
// cover a shorter range than the spec asks, on evidence that is missing, not against it).
bool along_values_finished(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                           const RunFilter& scope, ClaimResult* out);
// The distinct numeric values of `along` among runs matching `filter` (any status).
std::vector<double> along_values(const std::vector<StoredRun>& runs, const RunFilter& filter,
                                 const std::string& along);

// Seed values as a Sample (with the standard-error hint when there is one seed).
Sample sample_of(const SeedValues& v);

// "mean = 0.81, 95% bounds [0.78, 0.84] over 3 seeds" (numbers near `bar` told apart from it).
std::string interval_text(const Interval& iv, double bar, double confidence);

// The verdict of "mean > bar" (above = true) or "mean < bar" from an interval, and the words
// that go with it: margin, and for INCONCLUSIVE the seeds that would decide it.
Verdict verdict_vs(const Interval& iv, double bar, bool above, double confidence,
                   std::string* words);

ClaimResult result(const ClaimSpec& c, Verdict v, std::string detail);

// The smallest size that reaches a goal (mean below or above `threshold`), from each tried
// size's seed values, bracketed by the confidence bounds: `may` the smallest size whose bounds
// allow reaching it, `sure` the smallest whose bounds are past it, `by_mean` the smallest whose
// mean is past it (infinite: no size tried does); `largest` the largest size tried;
// `none_may` true when no size tried may reach it. `grid_floor`: the smallest size of the grid
// the bracket is on (size_brackets_on_grid; 0 for a bracket of one value alone).
constexpr double kNever = std::numeric_limits<double>::infinity();
struct SizeBracket {
  double may = kNever, sure = kNever, by_mean = kNever, largest = 0, grid_floor = 0;
  bool none_may = true;
};
SizeBracket size_bracket(const std::map<double, SeedValues>& by_size, bool above,
                         double threshold, double confidence);

// The brackets of each value of `along` (cells: along value -> size -> seed values) on the grid
// of every size tried at any value (docs/spec-format.md#size-brackets). A size of that grid not
// tried at one value (not in its sweep, or its runs failed) could be what that value needs, so
// the lower end `may` moves down past every such size below it; where no size tried may reach
// the goal, `may` is the grid's next size above the largest tried there (∞ past the grid's end).
// `sure` and `by_mean` stay as size_bracket gives them.
std::map<double, SizeBracket> size_brackets_on_grid(
    const std::map<double, std::map<double, SeedValues>>& cells, bool above, double threshold,
    double confidence);

// `filter` with `key` = x added (the runs of one value of `along`).
RunFilter filter_at(const RunFilter& filter, const std::string& key, double x);

// The numbers a claim compared (ClaimCell), appended when `cells` is not null.
using Cells = std::vector<ClaimCell>;

// The evaluate functions of the claim kinds' rows (claim_kinds.cpp), by the rules in claims.h.
// claims.cpp: below, above (level_claim) and less_than.
ClaimResult level_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
ClaimResult less_than_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
// claims_trend.cpp: decreasing, increasing and ratio_increasing (monotone_claim), flat,
// power_law.
ClaimResult monotone_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
ClaimResult flat_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
ClaimResult power_law_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
// claims_size.cpp: size_increasing, size_flat, size_ratio_increasing.
ClaimResult size_increasing_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                                  Cells* cells);
ClaimResult size_flat_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
ClaimResult size_equals_along_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                                    Cells* cells);
ClaimResult size_ratio_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
// claims_reach.cpp: reach; claims_trend.cpp: reach_growth (its per-seed values from
// reach_values_along).
ClaimResult reach_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells);
ClaimResult reach_growth_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                               Cells* cells);

// Per-slice metrics: a run stores METRIC_by_SLICE (step = the slice value, e.g. k) and its
// standard errors METRIC_se_by_SLICE. slice_runs turns each ok run's series into one row per
// slice value, with the slice as a parameter and the value (and _se, test_samples) as metrics,
// so the per-seed evidence of one slice value is collected like any metric's.
std::vector<StoredRun> slice_runs(const std::vector<StoredRun>& runs, const std::string& metric,
                                  const std::string& slice);
// The reach of a curve over slice values (ascending): the largest value whose metric reaches
// the goal (below / above threshold) at it and at every smaller value; the first value − 1
// when the first does not. Per seed, at each value of `along`, over the ok runs matching
// `where` (a seed lacking a slice value stops its reach there).
std::map<double, SeedValues> reach_values_along(const ClaimSpec& c,
                                                const std::vector<StoredRun>& runs);

}  // namespace attn::claims_detail
