// The statistics behind claim verdicts (experiment/claims.h, docs/spec-format.md §Claims):
// Student-t intervals for a mean over seeds, least-squares slopes, and the number of seeds
// that would decide an undecided comparison.
//
// A Sample is the evidence for one quantity: its per-seed values (k ≥ 1), and, when k = 1
// and the value is itself a mean over test sequences, that mean's standard error and degrees
// of freedom (se_hint, df_hint), so one seed can still be judged on its test-set spread.
// Intervals are one-sided bounds at `level` on each side: lo is a level-lower bound and hi a
// level-upper bound of the mean (together a two-sided 2·level − 1 interval).
#pragma once

#include <vector>

namespace attn {

struct Sample {
  std::vector<double> values;  // one per seed
  double se_hint = -1;         // k = 1: the value's own standard error (< 0: unknown)
  double df_hint = 0;          // ... and its degrees of freedom
};

struct Interval {
  bool ok = false;   // false: no spread can be estimated (one seed, no standard error)
  double mean = 0, lo = 0, hi = 0, se = 0, df = 0;
  int seeds = 0;
};

// The Student-t distribution function P(T <= t) with df > 0 degrees of freedom, and its
// inverse for p in (0, 1).
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Mean and level-bounds of a sample (t with k − 1 degrees of freedom over seeds; with one
// seed, the se_hint with df_hint when known).
Interval sample_interval(const Sample& s, double level);

// Least-squares slope of y on x (x not all equal), with its standard error from the
// residuals (df = points − 2; se < 0 when there are only two points).
struct Slope {
  double slope = 0, se = -1, df = 0;
};
Slope slope_fit(const std::vector<double>& x, const std::vector<double>& y);

// The standard error of a fraction p of n samples with a 0/1 outcome, never below the
// Agresti–Coull one, sqrt(p̃(1 − p̃)/(n + 4)) with p̃ = (n·p + 2)/(n + 4): `se` is the samples'
// own spread, which is 0 when every sample agrees (p = 0 or 1) though that is not certainty
// (about 1.4/n there instead).
double fraction_standard_error(double p, double n, double se);

// Seeds that would put `bar` outside the level-bound on the mean's side, if the mean and the
// spread across seeds stayed as measured; 0 when no count would (the mean sits on the bar or
// there is no spread to scale). Capped at 100000.
int seeds_to_decide(const Interval& iv, double bar, double level);

}  // namespace attn
