// Reach claims and trend margins on hand-made runs, with the numbers worked out in the
// comments. reach: the largest slice value (here k) whose mean metric is below a level at it
// and every smaller k, from the per-run series METRIC_by_k; reach_growth: the slope of log2 of
// each seed's reach against a swept key; a trend's margin: how far a step may go the other way
// and still count as flat. t quantiles: t(0.95, 2) = 2.920.
#include <gtest/gtest.h>

#include <cmath>

#include "experiment/claims.h"

namespace attn {
namespace {

bool has(const ClaimResult& r, const std::string& words) {
  return r.detail.find(words) != std::string::npos;
}

// One run at `layers` with token errors per k (and their standard errors when se >= 0).
StoredRun hop_run(int64_t layers, uint64_t seed, const std::vector<double>& error_by_k,
                  double se = -1) {
  StoredRun r;
  r.run_id = "L" + std::to_string(layers) + "_" + std::to_string(seed);
  r.seed = seed;
  r.status = "ok";
  r.params = {{"model.layers", std::to_string(layers)}};
  r.metrics = {{"test_token_error", 0.2}, {"test_samples", 1000}};
  for (size_t k = 0; k < error_by_k.size(); ++k) {
    r.series.push_back({"test_token_error_by_k", static_cast<int64_t>(k), error_by_k[k]});
    if (se >= 0) r.series.push_back({"test_token_error_se_by_k", static_cast<int64_t>(k), se});
  }
  return r;
}

// Three seeds at L = 2, 3, 4: error 0.01 (± 0.001 across seeds) for k <= 2^(L-2), 0.5 above:
// the reach is 1, 2, 4.
std::vector<StoredRun> doubling() {
  std::vector<StoredRun> runs;
  for (int64_t layers : {2, 3, 4})
    for (uint64_t seed = 0; seed < 3; ++seed) {
      std::vector<double> e;
      for (int64_t k = 0; k <= 8; ++k)
        e.push_back((k <= (int64_t{1} << (layers - 2)) ? 0.01 : 0.5) + 0.001 * (double(seed) - 1));
      runs.push_back(hop_run(layers, seed, e));
    }
  return runs;
}

ClaimSpec claim_of(ClaimKind type, const std::string& metric) {
  ClaimSpec c;
  c.id = "c";
  c.text = "t";
  c.type = type;
  c.metric = metric;
  return c;
}

ClaimSpec reach_claim_at(int64_t layers, double reach, const std::string& compare) {
  ClaimSpec c = claim_of(ClaimKind::reach, "test_token_error");
  c.slice = "k";
  c.threshold = 0.05;
  c.reach = reach;
  c.has_reach = true;
  c.compare = compare;
  c.where = {{"model.layers", {layers}}};
  return c;
}

// reach_growth of the token error's reach (level 0.05) along model.layers, over every run.
ClaimSpec reach_growth_along_layers(double exponent, double margin) {
  ClaimSpec g = claim_of(ClaimKind::reach_growth, "test_token_error");
  g.slice = "k";
  g.threshold = 0.05;
  g.along = "model.layers";
  g.exponent = exponent;
  g.margin = margin;
  return g;
}

TEST(ClaimsReach, TheLargestSolvedSliceIsBracketedAndCompared) {
  // L = 3: k = 0, 1, 2 at 0.009, 0.010, 0.011 (bounds 0.01 ± 2.920 × 0.001/sqrt(3) = ± 0.0017:
  // below 0.05), k = 3 at 0.5 (surely above): reach 2 by the means, bracket [2, 2].
  ClaimResult r = claim_evaluate(reach_claim_at(3, 2, "at_least"), doubling());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, ": 2 by the means, bracketed by the 95% bounds [2, 2] over 3 seeds"))
      << r.detail;
  EXPECT_TRUE(has(r, "claim: at least 2")) << r.detail;
  EXPECT_EQ(claim_evaluate(reach_claim_at(3, 3, "at_least"), doubling()).verdict, Verdict::Fail);
  EXPECT_EQ(claim_evaluate(reach_claim_at(3, 2, "at_most"), doubling()).verdict, Verdict::Pass);
  EXPECT_EQ(claim_evaluate(reach_claim_at(3, 1, "at_most"), doubling()).verdict, Verdict::Fail);
  EXPECT_EQ(claim_evaluate(reach_claim_at(4, 4, "equal"), doubling()).verdict, Verdict::Pass);
  EXPECT_EQ(claim_evaluate(reach_claim_at(4, 5, "equal"), doubling()).verdict, Verdict::Fail);
  // goal = above reads the same series the other way: at L = 3 k = 0 is not above 0.05.
  ClaimSpec above = reach_claim_at(3, -1, "equal");
  above.goal = "above";
  r = claim_evaluate(above, doubling());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "none (-1)")) << r.detail;
}

TEST(ClaimsReach, AReachAtTheLargestSliceTriedIsOpenAbove) {
  // L = 5: every k = 0 … 8 solved (0.01 ± 0.001) on three seeds. The reach is 8 or more: at
  // least 8 passes; "equal to 8" and "at most 8" cannot (k = 9 was not tested).
  std::vector<StoredRun> runs;
  for (uint64_t seed = 0; seed < 3; ++seed)
    runs.push_back(hop_run(5, seed, std::vector<double>(9, 0.01 + 0.001 * (double(seed) - 1))));
  ClaimResult r = claim_evaluate(reach_claim_at(5, 8, "at_least"), runs);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "bounds [8, beyond 8]")) << r.detail;
  EXPECT_EQ(claim_evaluate(reach_claim_at(5, 8, "equal"), runs).verdict, Verdict::Inconclusive);
  EXPECT_EQ(claim_evaluate(reach_claim_at(5, 8, "at_most"), runs).verdict, Verdict::Inconclusive);
  EXPECT_EQ(claim_evaluate(reach_claim_at(5, 9, "equal"), runs).verdict, Verdict::Inconclusive);
  EXPECT_EQ(claim_evaluate(reach_claim_at(5, 7, "at_most"), runs).verdict, Verdict::Fail);
}

TEST(ClaimsReach, ASliceNearTheLevelLeavesItUndecided) {
  // k = 2 at L = 3 becomes 0.03, 0.05, 0.07 across seeds (mean 0.05, se 0.0115): its bounds
  // [0.016, 0.084] straddle 0.05, so the reach is bracketed by [1, 2].
  auto runs = doubling();
  for (auto& r : runs)
    if (r.param("model.layers") == "3")
      for (auto& p : r.series)
        if (p.step == 2) p.value = 0.03 + 0.02 * double(r.seed);
  ClaimResult r = claim_evaluate(reach_claim_at(3, 2, "at_least"), runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "bounds [1, 2]")) << r.detail;
  EXPECT_EQ(claim_evaluate(reach_claim_at(3, 1, "at_least"), runs).verdict, Verdict::Pass);
  EXPECT_EQ(claim_evaluate(reach_claim_at(3, 3, "at_least"), runs).verdict, Verdict::Fail);
}

TEST(ClaimsReach, OneSeedIsJudgedByTheSeriesStandardErrorsOrNotAtAll) {
  const std::vector<double> e = {0.01, 0.02, 0.03, 0.5};
  // No standard error: no bounds, so nothing is sure and everything may be: [none, 3].
  ClaimResult r = claim_evaluate(reach_claim_at(3, 2, "at_least"), {hop_run(3, 0, e)});
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  // se 0.001 (df 999), raised to the Agresti–Coull floor of a fraction of the run's 1000 test
  // samples: at k = 2, p̃ = 32/1004, se = 0.00555, upper bound 0.03 + 1.646 × 0.00555 = 0.039
  // < 0.05; k = 3's 0.5 is surely above.
  r = claim_evaluate(reach_claim_at(3, 2, "at_least"), {hop_run(3, 0, e, 0.001)});
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "over 1 seed")) << r.detail;
  EXPECT_TRUE(has(r, "k=2: 0.03 [0.02087, 0.03913]")) << r.detail;
  // se 0.02: k = 2's bounds [-0.003, 0.063] straddle the level.
  r = claim_evaluate(reach_claim_at(3, 2, "at_least"), {hop_run(3, 0, e, 0.02)});
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
}

TEST(ClaimsReach, ASeedLackingASliceValueStopsThereAndNoSeriesDecidesNothing) {
  auto runs = doubling();
  // Seed 0 at L = 4 lacks k = 3 (e.g. no counted position): its own reach stops at 2.
  for (auto& r : runs)
    if (r.param("model.layers") == "4" && r.seed == 0) r.series.erase(r.series.begin() + 3);
  ClaimSpec g = reach_growth_along_layers(1, 0.1);
  // Reaches 1, 2, 2 (slope 0.5) on seed 0 and 1, 2, 4 (slope 1) on seeds 1 and 2: mean 0.833,
  // se 0.167, bounds 0.833 ± 0.487 straddle 1 ± 0.1.
  ClaimResult r = claim_evaluate(g, runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  // The bracket judges each slice value on the seeds that have it: k = 3 on seeds 1 and 2.
  EXPECT_EQ(claim_evaluate(reach_claim_at(4, 4, "at_least"), runs).verdict, Verdict::Pass);
  // A value no seed has is not a slice value: every run at L = 4 without k = 3 still reaches 4.
  for (auto& run : runs)
    if (run.param("model.layers") == "4" && run.seed != 0) run.series.erase(run.series.begin() + 3);
  EXPECT_EQ(claim_evaluate(g, runs).verdict, Verdict::Pass);
  // Runs without the series: INCONCLUSIVE, naming the series.
  for (auto& run : runs) run.series.clear();
  r = claim_evaluate(reach_claim_at(4, 4, "at_least"), runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "test_token_error_by_k")) << r.detail;
}

TEST(ClaimsReach, GrowthIsTheSlopeOfLog2ReachAlongTheAxis) {
  ClaimSpec g = reach_growth_along_layers(1, 0.25);
  // Reaches 1, 2, 4 on every seed: log2 0, 1, 2, slope exactly 1.
  ClaimResult r = claim_evaluate(g, doubling());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "slope of log2 of the largest k with mean test_token_error below 0.05"))
      << r.detail;
  EXPECT_TRUE(has(r, "model.layers=2: 1, model.layers=3: 2, model.layers=4: 4")) << r.detail;
  g.exponent = 2;
  EXPECT_EQ(claim_evaluate(g, doubling()).verdict, Verdict::Fail);
  g.compare = "at_most";  // slope 1 <= 2 + 0.25
  EXPECT_EQ(claim_evaluate(g, doubling()).verdict, Verdict::Pass);
}

// Trend margins. One seed, test_nmse 1.0, 1.04, 0.5 at n = 10, 100, 1000 with standard error
// 0.01 (df 999): the bump +0.04 has bounds 0.04 ± 1.646 × 0.01414 = [0.0167, 0.0633].
std::vector<StoredRun> bump() {
  std::vector<StoredRun> runs;
  const double v[] = {1.0, 1.04, 0.5};
  const int64_t ns[] = {10, 100, 1000};
  for (int k = 0; k < 3; ++k) {
    StoredRun r;
    r.run_id = std::to_string(k);
    r.status = "ok";
    r.params = {{"train.n", std::to_string(ns[k])}};
    r.metrics = {{"test_nmse", v[k]}, {"test_nmse_se", 0.01}, {"test_samples", 1000}};
    runs.push_back(r);
  }
  return runs;
}

ClaimResult decreasing_with_margin(double margin) {
  ClaimSpec c = claim_of(ClaimKind::decreasing, "test_nmse");
  c.along = "train.n";
  c.margin = margin;
  return claim_evaluate(c, bump());
}

TEST(ClaimsMargin, AReversedStepWithinTheMarginCountsAsFlat) {
  // No margin: the bump surely goes up, the claim fails (as before margins existed).
  ClaimResult r = decreasing_with_margin(0);
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;
  EXPECT_FALSE(has(r, "margin:")) << r.detail;
  // Margin 0.1: the bump's bounds lie within it: flat, and the change -0.5 is surely down.
  r = decreasing_with_margin(0.1);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "train.n=10 -> 100 goes the other way within the margin")) << r.detail;
  EXPECT_TRUE(has(r, "margin: a step may go the other way by up to 0.1")) << r.detail;
  // Margin 0.01: the bump surely exceeds it.
  r = decreasing_with_margin(0.01);
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;
  EXPECT_TRUE(has(r, "surely goes the other way by more than the margin 0.01")) << r.detail;
  // Margin 0.03: surely up, but its bounds reach past the margin: undecided.
  r = decreasing_with_margin(0.03);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "may pass the margin")) << r.detail;
}

}  // namespace
}  // namespace attn
