// Size claims (rules in claims.h): per value of `along`, the smallest swept `size` whose mean
// metric reaches the goal, bracketed by the confidence bounds of each size's mean across
// seeds: `may` is the smallest size whose bounds allow reaching the goal, `sure` the smallest
// whose bounds are past it (infinite when no size tried is). The needed size lies in
// [may, sure] at the claim's confidence (sizes assumed to help monotonically).
#include <algorithm>
#include <cmath>
#include <limits>

#include "experiment/claims_evidence.h"

namespace attn::claims_detail {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Bracket {
  double may = kNever, sure = kNever, largest = 0;
};

std::string bracket_text(const Bracket& b) {
  auto size = [&](double s) { return s == kNever ? "none up to " + fmt_num(b.largest) : fmt_num(s); };
  if (b.may == b.sure) return size(b.sure);
  return "between " + size(b.may) + " and " + size(b.sure);
}

std::map<double, Bracket> brackets_along(const ClaimSpec& c, const std::vector<StoredRun>& runs) {
  // along value -> size -> seed values
  std::map<double, std::map<double, SeedValues>> cells;
  double x, size;
  for (const auto& r : runs)
    if (r.status == "ok" && run_matches(r, c.where) && !std::isnan(r.metric(c.metric)) &&
        as_number(r.param(c.along), &x) && as_number(r.param(c.size), &size)) {
      seed_value_add(r, c.metric, cells[x][size][r.seed]);
    }
  const bool above = c.goal == "above";
  std::map<double, Bracket> out;
  for (const auto& [along, by_size] : cells) {
    Bracket b;
    b.largest = by_size.rbegin()->first;
    for (const auto& [s, seeds] : by_size) {  // increasing size
      const Interval iv = sample_interval(sample_of(seeds), c.confidence);
      const bool may = !iv.ok || (above ? iv.hi > c.threshold : iv.lo < c.threshold);
      const bool sure = iv.ok && (above ? iv.lo > c.threshold : iv.hi < c.threshold);
      if (may && b.may == kNever) b.may = s;
      if (sure && b.sure == kNever) b.sure = s;
    }
    out[along] = b;
  }
  return out;
}

}  // namespace

ClaimResult size_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs) {
  const std::vector<double> xs = along_values(runs, c.where, c.along);
  if (xs.size() < 2)
    return result(c, Verdict::NotEvaluated,
                  "not evaluated at this size: the runs matching {" + filter_text(c.where) +
                      "} hold " + (xs.empty() ? "no value" : "one value (" + fmt_num(xs[0]) + ")") +
                      " of " + c.along + "; the claim needs two or more");
  const auto needed = brackets_along(c, runs);
  const std::string what = "smallest " + c.size + " with mean " + c.metric +
                           (c.goal == "above" ? " > " : " < ") + fmt_num(c.threshold) + " over {" +
                           filter_text(c.where) + "} (" + level_text(c.confidence) + " bounds)";
  if (needed.size() < 2)
    return result(c, Verdict::Inconclusive,
                  "needs finished runs at two or more values of " + c.along + "; found " +
                      std::to_string(needed.size()));
  std::string seq;
  std::vector<Bracket> v;
  for (const auto& [x, b] : needed) {
    seq += (seq.empty() ? "" : ", ") + c.along + "=" + fmt_num(x) + ": " + bracket_text(b);
    v.push_back(b);
  }
  if (c.type == "size_flat") {
    double min_may = kNever, max_may = 0, min_sure = kNever, max_sure = 0;
    for (const auto& b : v) {
      min_may = std::min(min_may, b.may);
      max_may = std::max(max_may, b.may);
      min_sure = std::min(min_sure, b.sure);
      max_sure = std::max(max_sure, b.sure);
    }
    const bool pass = max_sure < kNever && max_sure <= c.factor * min_may;
    const bool fail = max_may == kNever || max_may > c.factor * min_sure;
    const Verdict verdict = pass ? Verdict::Pass : fail ? Verdict::Fail : Verdict::Inconclusive;
    return result(c, verdict,
                  what + " along " + c.along + ": " + seq + "; claim: reached everywhere, " +
                      "largest / smallest <= " + fmt_num(c.factor));
  }
  // size_increasing: surely smaller at the first value than at the last, and never surely
  // smaller at a later value than at an earlier one.
  bool decrease = false;
  for (size_t k = 1; k < v.size(); ++k)
    for (size_t j = 0; j < k; ++j) decrease = decrease || v[k].sure < v[j].may;
  const bool pass = !decrease && v.front().sure < v.back().may;
  const bool fail = decrease || v.back().sure <= v.front().may;
  const Verdict verdict = pass ? Verdict::Pass : fail ? Verdict::Fail : Verdict::Inconclusive;
  return result(c, verdict,
                what + " along " + c.along + ": " + seq + "; claim: grows from the first to the " +
                    "last value and never shrinks" +
                    (verdict == Verdict::Inconclusive ? " (undecided at these bounds: add seeds or sizes)" : ""));
}

}  // namespace attn::claims_detail
