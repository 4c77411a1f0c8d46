// Trend claims (rules in claims.h): decreasing, increasing and ratio_increasing by the
// paired change from the first to the last value of `along` (and no step surely the other
// way, beyond the claim's margin), flat by the paired differences between every two values,
// power_law by the slope of log(metric) on log(along) fitted per seed, reach_growth by the slope
// of log2(reach) on along (claims_reach.cpp). All are judged across seeds; one seed by its
// points' test-sample errors (a slope, else, by the fit's residuals).
#include <algorithm>
#include <cmath>
#include <set>

#include "experiment/claims_evidence.h"

namespace attn::claims_detail {
namespace {

// The curve a trend is fitted to: coordinates x, and per seed (only seeds present at every
// x) the values y and, with a single seed, each point's standard error.
struct Curve {
  std::vector<double> along, x;
  std::map<uint64_t, std::vector<double>> y;
  std::vector<double> point_se;  // one seed: per point (empty when unknown)
  double df = 0;
  std::vector<double> means;  // mean over seeds per x, for the words
  int64_t dropped = 0;        // seeds left out for missing an x
  int64_t unusable = 0;       // seeds left out for a value that cannot be used: ≤ 0 under a
                              // log (power_law, reach_growth), a zero denominator (ratio)
};

bool is_power_law(const ClaimSpec& c) { return c.type == ClaimKind::power_law; }
bool is_reach(const ClaimSpec& c) { return c.type == ClaimKind::reach_growth; }
// Slope kinds fit log(y): natural for power_law, base 2 for reach_growth.
bool is_slope(const ClaimSpec& c) { return is_power_law(c) || is_reach(c); }
bool is_ratio(const ClaimSpec& c) { return c.type == ClaimKind::ratio_increasing; }

// The value of one seed at one x, its standard error, or false when it cannot be used.
bool point_value(const ClaimSpec& c, const SeedValue& a, const SeedValue* b, double* y, double* se,
                 double* df) {
  const double va = a.value();
  const double sa = a.has_se ? std::sqrt(a.se_sq) / a.runs : -1;
  *df = a.df;
  if (b) {  // ratio a / b, standard error by the delta method
    const double vb = b->value();
    if (vb == 0) return false;
    *y = va / vb;
    const double sb = b->has_se ? std::sqrt(b->se_sq) / b->runs : -1;
    // se(a / b)² = (sa / b)² + (y · sb / b)²: written without dividing by a, which may be 0.
    *se = sa < 0 || sb < 0 ? -1 : std::hypot(sa, std::fabs(*y) * sb) / std::fabs(vb);
    *df = std::min(a.df, b->df);
    return true;
  }
  if (is_slope(c)) {
    if (!(va > 0)) return false;
    *y = is_reach(c) ? std::log2(va) : std::log(va);
    *se = sa < 0 ? -1 : sa / va / (is_reach(c) ? std::log(2.0) : 1.0);
    return true;
  }
  *y = va;
  *se = sa;
  return true;
}

Curve curve_make(const ClaimSpec& c, const std::vector<StoredRun>& runs) {
  Curve cv;
  const bool ratio = is_ratio(c);
  const auto a = is_reach(c) ? reach_values_along(c, runs)
                             : seed_values_along(runs, ratio ? filter_and(c.a, c.where) : c.where,
                                                 c.metric, c.along);
  const auto b = ratio ? seed_values_along(runs, filter_and(c.b, c.where), c.metric, c.along)
                       : std::map<double, SeedValues>{};
  std::set<uint64_t> seeds;
  for (const auto& [x, by_seed] : a)
    for (const auto& [seed, v] : by_seed) seeds.insert(seed);
  for (const auto& [x, by_seed] : a) {
    if (ratio && !b.count(x)) continue;
    if (is_power_law(c) && !(x > 0)) continue;
    cv.along.push_back(x);
  }
  for (size_t i = 0; i < cv.along.size(); ++i)
    cv.x.push_back(is_power_law(c) ? std::log(cv.along[i])
                   : is_reach(c)   ? cv.along[i]
                                   : static_cast<double>(i));
  cv.means.assign(cv.along.size(), 0);
  std::vector<std::vector<double>> se_by_seed;
  for (uint64_t seed : seeds) {
    std::vector<double> ys, ses;
    double df = 1e300;
    bool complete = true, unusable = false;
    for (double x : cv.along) {
      const auto& at = a.at(x);
      const auto ia = at.find(seed);
      const SeedValue* vb = nullptr;
      if (ratio) {
        const auto ib = b.at(x).find(seed);
        vb = ib == b.at(x).end() ? nullptr : &ib->second;
      }
      double y, se, point_df;
      if (ia == at.end() || (ratio && !vb)) {
        complete = false;
        break;
      }
      if (!point_value(c, ia->second, vb, &y, &se, &point_df)) {
        complete = false;
        unusable = true;
        break;
      }
      ys.push_back(y);
      ses.push_back(se);
      df = std::min(df, point_df);
    }
    if (!complete) {
      ++(unusable ? cv.unusable : cv.dropped);
      continue;
    }
    cv.y[seed] = ys;
    if (std::all_of(ses.begin(), ses.end(), [](double s) { return s >= 0; })) {
      cv.point_se = ses;
      cv.df = df;
    } else {
      cv.point_se.clear();
    }
  }
  for (const auto& [seed, ys] : cv.y)
    for (size_t i = 0; i < ys.size(); ++i) cv.means[i] += ys[i] / static_cast<double>(cv.y.size());
  if (cv.y.size() != 1) cv.point_se.clear();
  return cv;
}

// The slope's interval: across seeds, or for one seed from its points' errors or residuals.
Interval slope_interval(const Curve& cv, double confidence) {
  Sample s;
  for (const auto& [seed, ys] : cv.y) s.values.push_back(slope_fit(cv.x, ys).slope);
  if (cv.y.size() == 1) {
    const Slope fit = slope_fit(cv.x, cv.y.begin()->second);
    if (!cv.point_se.empty()) {
      double mx = 0, sxx = 0, var = 0;
      for (double x : cv.x) mx += x / static_cast<double>(cv.x.size());
      for (double x : cv.x) sxx += (x - mx) * (x - mx);
      for (size_t i = 0; i < cv.x.size(); ++i)
        var += std::pow((cv.x[i] - mx) / sxx * cv.point_se[i], 2);
      s.se_hint = std::sqrt(var);
      s.df_hint = cv.df;
    } else if (fit.se >= 0) {
      s.se_hint = fit.se;
      s.df_hint = fit.df;
    }
  }
  return sample_interval(s, confidence);
}

std::string curve_text(const ClaimSpec& c, const Curve& cv) {
  std::string seq;
  for (size_t i = 0; i < cv.along.size(); ++i)
    seq += (seq.empty() ? "" : ", ") + c.along + "=" + fmt_num(cv.along[i]) + ": " +
           fmt_num(is_power_law(c) ? std::exp(cv.means[i])
                   : is_reach(c)   ? std::exp2(cv.means[i])
                                   : cv.means[i]);
  if (cv.dropped)
    seq += " (" + std::to_string(cv.dropped) + " seeds left out: not at every " + c.along + ")";
  if (cv.unusable)
    seq += " (" + std::to_string(cv.unusable) + " seeds left out: " +
           (is_ratio(c) ? "a zero denominator" : "a value <= 0, which has no log") + ")";
  return seq;
}

// The paired difference y[j] − y[i] across seeds (one seed: its points' errors).
Interval pair_interval(const Curve& cv, size_t i, size_t j, double confidence) {
  Sample s;
  for (const auto& [seed, ys] : cv.y) s.values.push_back(ys[j] - ys[i]);
  if (cv.y.size() == 1 && !cv.point_se.empty()) {
    s.se_hint = std::hypot(cv.point_se[i], cv.point_se[j]);
    s.df_hint = cv.df;
  }
  return sample_interval(s, confidence);
}

// decreasing / increasing / ratio_increasing: the change from the first to the last value
// surely has the claimed sign, and no single step surely has the other.
ClaimResult monotone_verdict(const ClaimSpec& c, const Curve& cv, const std::string& what) {
  const bool up = c.type != ClaimKind::decreasing;
  const size_t last = cv.along.size() - 1;
  const Interval total = pair_interval(cv, 0, last, c.confidence);
  std::string words;
  Verdict v = verdict_vs(total, 0, up, c.confidence, &words);
  // A step that surely goes the other way fails the claim. With a margin (an equivalence
  // margin, as in a TOST test) it fails only when it surely goes that way by more than the
  // margin; one whose bounds lie within the margin counts as flat (and is named); one surely
  // reversed whose bounds reach past the margin leaves the claim INCONCLUSIVE.
  const double bar = up ? -c.margin : c.margin;
  std::string flat_steps, undecided_step;
  for (size_t k = 1; k <= last; ++k) {
    const Interval step = pair_interval(cv, k - 1, k, c.confidence);
    const std::string step_text =
        "the step " + c.along + "=" + fmt_num(cv.along[k - 1]) + " -> " + fmt_num(cv.along[k]);
    if (!step.ok || !(up ? step.hi < 0 : step.lo > 0)) continue;  // not surely reversed
    if (up ? step.hi < bar : step.lo > bar) {
      v = Verdict::Fail;
      words += "; but " + step_text + " surely goes the other way" +
               (c.margin > 0 ? " by more than the margin " + fmt_num(c.margin) : "") + " (" +
               interval_text(step, bar, c.confidence) + ")";
      break;
    }
    const bool within = up ? step.lo >= bar : step.hi <= bar;
    (within ? flat_steps : undecided_step) +=
        "; " + step_text + " goes the other way " +
        (within
             ? "within the margin (" + interval_text(step, bar, c.confidence) + "), counted as flat"
             : "and may pass the margin (" + interval_text(step, bar, c.confidence) + ")");
  }
  if (v != Verdict::Fail) {
    words += flat_steps + undecided_step;
    if (!undecided_step.empty() && v == Verdict::Pass) v = Verdict::Inconclusive;
  }
  if (c.margin > 0) words += "; margin: a step may go the other way by up to " + fmt_num(c.margin);
  return result(c, v,
                "change of " + what + " from " + c.along + "=" + fmt_num(cv.along[0]) + " to " +
                    fmt_num(cv.along[last]) + ", paired by seed, " +
                    interval_text(total, 0, c.confidence) + "; claim: " + (up ? "> 0" : "< 0") +
                    ", " + words + "; " + curve_text(c, cv));
}

ClaimResult flat_verdict(const ClaimSpec& c, const Curve& cv, const std::string& what) {
  // Every pair of values of `along`, paired by seed.
  bool all_within = true, some_outside = false;
  double worst = 0;
  std::string worst_pair;
  for (size_t i = 0; i < cv.along.size(); ++i)
    for (size_t j = i + 1; j < cv.along.size(); ++j) {
      const Interval iv = pair_interval(cv, i, j, c.confidence);
      all_within = all_within && iv.ok && iv.lo >= -c.threshold && iv.hi <= c.threshold;
      some_outside = some_outside || (iv.ok && (iv.lo > c.threshold || iv.hi < -c.threshold));
      if (std::fabs(iv.mean) >= worst) {
        worst = std::fabs(iv.mean);
        worst_pair = c.along + "=" + fmt_num(cv.along[j]) + " − " + fmt_num(cv.along[i]) + " " +
                     interval_text(iv, c.threshold, c.confidence);
      }
    }
  const Verdict v = all_within     ? Verdict::Pass
                    : some_outside ? Verdict::Fail
                                   : Verdict::Inconclusive;
  return result(c, v,
                what + " spreads by " + fmt_num(worst) + " (largest pair: " + worst_pair +
                    "); claim: every pair within ±" + fmt_num(c.threshold) +
                    (v == Verdict::Inconclusive ? " (undecided at these bounds: add seeds)" : "") +
                    "; " + curve_text(c, cv));
}

ClaimResult power_law_verdict(const ClaimSpec& c, const Curve& cv, const std::string& what) {
  const Interval iv = slope_interval(cv, c.confidence);
  const double lo_ok = c.exponent - c.margin, hi_ok = c.exponent + c.margin;
  Verdict v = Verdict::Inconclusive;
  std::string want;
  if (c.compare == "at_most") {
    want = "at most " + fmt_num(hi_ok);
    if (iv.ok) v = iv.hi <= hi_ok ? Verdict::Pass : iv.lo > hi_ok ? Verdict::Fail : v;
  } else if (c.compare == "at_least") {
    want = "at least " + fmt_num(lo_ok);
    if (iv.ok) v = iv.lo >= lo_ok ? Verdict::Pass : iv.hi < lo_ok ? Verdict::Fail : v;
  } else {
    want = "within " + fmt_num(c.exponent) + " ± " + fmt_num(c.margin);
    if (iv.ok)
      v = iv.lo >= lo_ok && iv.hi <= hi_ok ? Verdict::Pass
          : iv.hi < lo_ok || iv.lo > hi_ok ? Verdict::Fail
                                           : v;
  }
  const std::string measured =
      iv.ok ? fmt_num(iv.mean) + " ± " + fmt_num((iv.hi - iv.lo) / 2) + " (" +
                  level_text(c.confidence) + " bounds [" + fmt_num(iv.lo) + ", " + fmt_num(iv.hi) +
                  "], " + std::to_string(iv.seeds) + (iv.seeds == 1 ? " seed)" : " seeds)")
            : fmt_num(iv.mean) + " (one seed, two points: no spread to judge it by)";
  const std::string rate =
      is_reach(c) ? "slope of log2 of " + what + " per unit of " + c.along : "exponent of " + what;
  return result(c, v,
                rate + ": measured " + measured + "; the theory's rate is " + fmt_num(c.exponent) +
                    ", claim: " + want + "; " + curve_text(c, cv));
}

// The curve's points as the claim's numbers (when no seed was left out, so each point is the
// mean over every seed that has it): the runs at along = x, mean and bounds over seeds.
void curve_cells(const ClaimSpec& c, const Curve& cv, Cells* cells) {
  if (!cells || cv.dropped > 0 || cv.unusable > 0 || is_ratio(c) || is_slope(c)) return;
  for (size_t i = 0; i < cv.along.size(); ++i) {
    Sample s;
    for (const auto& [seed, ys] : cv.y) s.values.push_back(ys[i]);
    if (cv.y.size() == 1 && !cv.point_se.empty()) {
      s.se_hint = cv.point_se[i];
      s.df_hint = cv.df;
    }
    cells->push_back(ClaimCell{filter_at(c.where, c.along, cv.along[i]),
                               sample_interval(s, c.confidence), false, 0, 0});
  }
}

// The verdict of one trend kind on its curve.
using CurveVerdict = ClaimResult (*)(const ClaimSpec& c, const Curve& cv, const std::string& what);

// A trend claim: its curve, decided by `decide`, unless the runs cannot hold a trend (one
// value of `along`, or no seed at two values).
ClaimResult trend_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells,
                        CurveVerdict decide) {
  const bool ratio = is_ratio(c);
  ClaimResult out;
  if (!along_values_enough(c, runs, ratio ? filter_and(c.a, c.where) : c.where, &out)) return out;
  for (const RunFilter& scope : ratio ? std::vector<RunFilter>{filter_and(c.a, c.where),
                                                               filter_and(c.b, c.where)}
                                      : std::vector<RunFilter>{c.where})
    if (!along_values_finished(c, runs, scope, &out)) return out;
  const Curve cv = curve_make(c, runs);
  const std::string what =
      ratio ? "mean " + c.metric + " {" + filter_text(filter_and(c.a, c.where)) + "} / {" +
                  filter_text(filter_and(c.b, c.where)) + "}"
      : is_reach(c) ? "the largest " + c.slice + " with mean " + c.metric +
                          (c.goal == "above" ? " above " : " below ") + fmt_num(c.threshold) +
                          " at it and every smaller " + c.slice + " (the reach) over {" +
                          filter_text(c.where) + "}"
                    : (is_power_law(c) ? c.metric : "mean " + c.metric) + " over {" +
                          filter_text(c.where) + "}";
  if (cv.y.empty() || cv.along.size() < 2) {
    const std::string why =
        cv.along.size() < 2
            ? "no two values of " + c.along + " to compare (" + what + ")"
        : cv.unusable > 0
            ? std::to_string(cv.unusable) + " seeds left out for " +
                  (is_ratio(c) ? "a zero denominator" : "a value <= 0, which has no log") +
                  (cv.dropped > 0 ? ", " + std::to_string(cv.dropped) + " for missing a value of " +
                                        c.along
                                  : std::string()) +
                  "; no seed is left (" + what + ")"
            : "no seed has finished runs with " + c.metric + " at two or more values of " +
                  c.along + " (" + what + ")";
    return result(c, Verdict::Inconclusive, why);
  }
  curve_cells(c, cv, cells);
  return decide(c, cv, what);
}

}  // namespace

ClaimResult monotone_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells) {
  return trend_claim(c, runs, cells, monotone_verdict);
}

ClaimResult flat_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells) {
  return trend_claim(c, runs, cells, flat_verdict);
}

ClaimResult power_law_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells) {
  return trend_claim(c, runs, cells, power_law_verdict);
}

ClaimResult reach_growth_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                               Cells* cells) {
  return trend_claim(c, runs, cells, power_law_verdict);
}

}  // namespace attn::claims_detail
