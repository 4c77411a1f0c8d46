// Reach claims (rules in claims.h): from a per-slice series METRIC_by_SLICE (e.g. a token error
// per hop count k), the largest slice value whose metric reaches a goal at it and at every
// smaller value (the "largest k solved" of a depth experiment). `reach` brackets it by the
// bounds at each slice value and compares it with a number; reach_growth (claims_trend.cpp)
// fits log2 of each seed's reach against `along`.
#include <cmath>
#include <limits>

#include "experiment/claims_evidence.h"

namespace attn::claims_detail {

std::vector<StoredRun> slice_runs(const std::vector<StoredRun>& runs, const std::string& metric,
                                  const std::string& slice) {
  const std::string values = metric + "_by_" + slice, errors = metric + "_se_by_" + slice;
  std::vector<StoredRun> out;
  for (const StoredRun& r : runs) {
    if (r.status != "ok") continue;
    std::map<int64_t, std::pair<double, double>> by_step;  // step -> (value, se)
    for (const auto& p : r.series) {
      if (p.series == values) by_step.try_emplace(p.step, NAN, NAN).first->second.first = p.value;
      if (p.series == errors) by_step.try_emplace(p.step, NAN, NAN).first->second.second = p.value;
    }
    for (const auto& [step, value_se] : by_step) {
      StoredRun row;
      row.run_id = r.run_id;
      row.seed = r.seed;
      row.status = r.status;
      row.params = r.params;
      row.params.emplace_back(slice, std::to_string(step));
      row.metrics = {{metric, value_se.first},
                     {metric + "_se", value_se.second},
                     {"test_samples", r.metric("test_samples")}};
      out.push_back(std::move(row));
    }
  }
  return out;
}

namespace {

bool reaches(const ClaimSpec& c, double v) {
  return c.goal == "above" ? v > c.threshold : v < c.threshold;
}

// Per seed, its reach over the values of `by_slice` (a seed lacking a value stops there).
std::map<uint64_t, double> seed_reach(const ClaimSpec& c,
                                      const std::map<double, SeedValues>& by_slice) {
  std::map<uint64_t, double> reach;
  std::map<uint64_t, bool> going;
  if (by_slice.empty()) return reach;
  const double first = by_slice.begin()->first;
  for (const auto& [s, seeds] : by_slice)
    for (const auto& [seed, v] : seeds) going.emplace(seed, true), reach.emplace(seed, first - 1);
  for (const auto& [s, seeds] : by_slice)
    for (auto& [seed, on] : going) {
      if (!on) continue;
      const auto it = seeds.find(seed);
      on = it != seeds.end() && reaches(c, it->second.value());
      if (on) reach[seed] = s;
    }
  return reach;
}

// The reach bracketed by the bounds at each slice value: `sure` the largest value whose bounds
// are past the level at it and every smaller value, `may` the same for bounds that allow
// reaching it, `by_mean` the same for the means.
struct ReachBracket {
  double sure = 0, may = 0, by_mean = 0;
  std::string curve;  // "k=0: 0.01 [0.008, 0.012], k=1: ..."
};

ReachBracket reach_bracket(const ClaimSpec& c, const std::map<double, SeedValues>& by_slice) {
  ReachBracket b;
  const double first = by_slice.begin()->first;
  b.sure = b.may = b.by_mean = first - 1;
  bool sure = true, may = true, mean = true;
  const bool above = c.goal == "above";
  for (const auto& [s, seeds] : by_slice) {
    const Interval iv = sample_interval(sample_of(seeds), c.confidence);
    const bool surely = iv.ok && (above ? iv.lo > c.threshold : iv.hi < c.threshold);
    const bool maybe = !(iv.ok && (above ? iv.hi <= c.threshold : iv.lo >= c.threshold));
    sure = sure && surely;
    may = may && maybe;
    mean = mean && reaches(c, iv.mean);
    if (sure) b.sure = s;
    if (may) b.may = s;
    if (mean) b.by_mean = s;
    b.curve += (b.curve.empty() ? "" : ", ") + c.slice + "=" + fmt_num(s) + ": " +
               fmt_num(iv.mean) +
               (iv.ok ? " [" + fmt_num(iv.lo) + ", " + fmt_num(iv.hi) + "]" : std::string());
  }
  // Every slice value tried may be reached: the reach may lie past the largest one, so the
  // bracket's upper end is open (an at_most or equal claim cannot pass on such runs).
  if (may) b.may = std::numeric_limits<double>::infinity();
  return b;
}

std::string reach_text(double r, double first, double last) {
  if (std::isinf(r)) return "beyond " + fmt_num(last);
  return r < first ? "none (" + fmt_num(r) + ")" : fmt_num(r);
}

}  // namespace

std::map<double, SeedValues> reach_values_along(const ClaimSpec& c,
                                                const std::vector<StoredRun>& runs) {
  const std::vector<StoredRun> rows = slice_runs(runs, c.metric, c.slice);
  std::map<double, SeedValues> out;
  for (double x : along_values(rows, c.where, c.along)) {
    const auto by_slice =
        seed_values_along(rows, filter_at(c.where, c.along, x), c.metric, c.slice);
    for (const auto& [seed, r] : seed_reach(c, by_slice)) {
      SeedValue& v = out[x][seed];
      v.sum = r;
      v.runs = 1;
      v.has_se = false;
    }
  }
  return out;
}

ClaimResult reach_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells*) {
  const Matches m = runs_matching(runs, c.where);
  const std::string scope = "{" + filter_text(c.where) + "}";
  if (m.any == 0) return result(c, Verdict::NotEvaluated, "no run matches " + scope);
  const std::vector<StoredRun> rows = slice_runs(runs, c.metric, c.slice);
  const auto by_slice = seed_values_along(rows, c.where, c.metric, c.slice);
  if (by_slice.empty())
    return result(c, Verdict::Inconclusive,
                  "none of the " + std::to_string(m.any) + " runs matching " + scope +
                      " has finished with the series " + c.metric + "_by_" + c.slice);
  const ReachBracket b = reach_bracket(c, by_slice);
  const double first = by_slice.begin()->first, last = by_slice.rbegin()->first;
  int64_t seeds = 0;
  for (const auto& [s, v] : by_slice)
    seeds = std::max<int64_t>(seeds, static_cast<int64_t>(v.size()));
  Verdict v = Verdict::Inconclusive;
  std::string want;
  if (c.compare == "at_least") {
    want = "at least " + fmt_num(c.reach);
    v = b.sure >= c.reach ? Verdict::Pass : b.may < c.reach ? Verdict::Fail : v;
  } else if (c.compare == "at_most") {
    want = "at most " + fmt_num(c.reach);
    v = b.may <= c.reach ? Verdict::Pass : b.sure > c.reach ? Verdict::Fail : v;
  } else {
    want = "equal to " + fmt_num(c.reach);
    v = b.sure == c.reach && b.may == c.reach ? Verdict::Pass
        : b.may < c.reach || b.sure > c.reach ? Verdict::Fail
                                              : v;
  }
  const std::string goal = (c.goal == "above" ? "above " : "below ") + fmt_num(c.threshold);
  return result(c, v,
                "largest " + c.slice + " with mean " + c.metric + " " + goal +
                    " at it and every smaller " + c.slice + " over " + scope + ": " +
                    reach_text(b.by_mean, first, last) + " by the means, bracketed by the " +
                    level_text(c.confidence) + " bounds [" + reach_text(b.sure, first, last) +
                    ", " + reach_text(b.may, first, last) + "] over " + std::to_string(seeds) +
                    (seeds == 1 ? " seed" : " seeds") + "; claim: " + want + "; " + b.curve);
}

}  // namespace attn::claims_detail
