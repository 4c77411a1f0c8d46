// Claim verdicts on hand-made result tables, with the numbers worked out in the comments:
// PASS when the bound across seeds clears the bar, FAIL when the opposite bound does,
// INCONCLUSIVE in between (and for one seed with no standard error), NOT EVALUATED when the
// runs cannot hold the evidence. t quantiles used: t(0.95, 1) = 6.314, t(0.95, 2) = 2.920.
#include <gtest/gtest.h>

#include <cmath>

#include "experiment/claims.h"
#include "experiment/report.h"

namespace attn {
namespace {

StoredRun make_run(const std::string& model, int64_t n, uint64_t seed, double nmse,
                   const std::string& status = "ok") {
  StoredRun r;
  r.run_id = model + std::to_string(n) + "_" + std::to_string(seed);
  r.seed = seed;
  r.status = status;
  r.params = {{"model.name", model}, {"train.n", std::to_string(n)}};
  if (status == "ok") r.metrics = {{"test_nmse", nmse}};
  return r;
}

// linear: 0.5, 0.2, 0.1 at n = 10, 100, 1000 (two seeds, -0.01 and +0.01); mean: 1.0
// everywhere. Two seeds with a spread of ±0.01: se 0.01, half-width 6.314 × 0.01 = 0.063.
std::vector<StoredRun> table() {
  std::vector<StoredRun> runs;
  const double linear[] = {0.5, 0.2, 0.1};
  const int64_t ns[] = {10, 100, 1000};
  for (int k = 0; k < 3; ++k)
    for (uint64_t s = 0; s < 2; ++s) {
      runs.push_back(make_run("linear", ns[k], s, linear[k] + (s ? 0.01 : -0.01)));
      runs.push_back(make_run("mean", ns[k], s, 1.0));
    }
  runs.push_back(make_run("linear", 1000, 9, 0.0, "failed"));  // ignored
  return runs;
}

ClaimSpec claim(ClaimKind type) {
  ClaimSpec c;
  c.id = "c";
  c.text = "t";
  c.type = type;
  c.metric = "test_nmse";
  return c;
}

RunFilter model_is(const std::string& m) { return {{"model.name", {m}}}; }

bool has(const ClaimResult& r, const std::string& words) {
  return r.detail.find(words) != std::string::npos;
}

TEST(Claims, LessThanPairsTheSeeds) {
  ClaimSpec c = claim(ClaimKind::less_than);
  c.a = model_is("linear");
  c.b = model_is("mean");
  // Per seed, linear pooled over n: 0.2567 and 0.2767; minus 1.0: mean -0.7333, se 0.01.
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "= 0.2667 (2 seeds) vs 1 over")) << r.detail;
  EXPECT_TRUE(has(r, "paired by seed")) << r.detail;
  c.factor = 0.25;  // differences 0.0067, 0.0267: mean 0.0167 ± 0.063 straddles 0
  r = claim_evaluate(c, table());
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "seeds would decide it")) << r.detail;
  c.factor = 0.2;  // mean 0.0667, lower bound 0.0036 > 0: the negation holds
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Fail);
  // `where` restricts both sides: at n = 10 linear is 0.49, 0.51.
  c.where = {{"train.n", {int64_t{10}}}};
  c.factor = 0.3;  // 0.19, 0.21 > 0
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Fail);
  c.factor = 0.7;  // -0.21, -0.19 < 0
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Pass);
}

TEST(Claims, LessThanWithoutSharedSeedsIsWelch) {
  auto runs = table();
  for (auto& r : runs)
    if (r.param("model.name") == "mean") r.seed += 100;
  ClaimSpec c = claim(ClaimKind::less_than);
  c.a = model_is("linear");
  c.b = model_is("mean");
  const ClaimResult r = claim_evaluate(c, runs);
  EXPECT_TRUE(has(r, "Welch")) << r.detail;
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;  // the mean side has no spread at all
}

TEST(Claims, LevelClaimsAcrossSeeds) {
  // 0.88, 0.90, 0.92: mean 0.9, half-width 2.920 × 0.01155 = 0.0337.
  std::vector<StoredRun> runs;
  for (uint64_t s = 0; s < 3; ++s) runs.push_back(make_run("att", 1, s, 0.88 + 0.02 * s));
  ClaimSpec c = claim(ClaimKind::above);
  c.threshold = 0.85;  // lower bound 0.866 > 0.85
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Pass);
  c.threshold = 0.95;  // upper bound 0.934 <= 0.95
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Fail);
  c.threshold = 0.89;
  const ClaimResult r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "about 13 seeds would decide it")) << r.detail;
  EXPECT_TRUE(has(r, "95% bounds [0.8663, 0.9337] over 3 seeds")) << r.detail;
  c.type = ClaimKind::below;
  c.threshold = 0.95;
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Pass);
  c.confidence = 0.999;  // t(0.999, 2) = 22.3: the bound 1.16 no longer clears 0.95
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Inconclusive);
}

TEST(Claims, OneSeedIsJudgedByItsTestSamplesOrNotAtAll) {
  auto one = [](double value, double se) {
    StoredRun r = make_run("att", 1, 0, value);
    r.metrics = {{"test_acc", value}, {"test_samples", 1000}};
    if (se >= 0) r.metrics.emplace_back("test_acc_se", se);
    return std::vector<StoredRun>{r};
  };
  ClaimSpec c = claim(ClaimKind::above);
  c.metric = "test_acc";
  c.threshold = 0.9;
  // 0.8991 ± 1.646 × 0.001: [0.8975, 0.9007] straddles 0.9, and prints apart from it.
  ClaimResult r = claim_evaluate(c, one(0.8991, 0.001));
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "= 0.8991")) << r.detail;
  EXPECT_TRUE(has(r, "test samples")) << r.detail;
  EXPECT_EQ(claim_evaluate(c, one(0.8991, 0.0002)).verdict, Verdict::Fail);  // [.., 0.89943]
  EXPECT_EQ(claim_evaluate(c, one(0.95, 0.01)).verdict, Verdict::Pass);
  EXPECT_EQ(claim_evaluate(c, one(1.0, 0.0)).verdict, Verdict::Pass);  // exact on every sample
  r = claim_evaluate(c, one(0.95, -1));  // no standard error stored
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "one seed without a standard error")) << r.detail;
  // A value a hair from the bar prints with the digits that tell them apart.
  c.threshold = 1.0;
  r = claim_evaluate(c, one(0.99999, 0));
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;
  EXPECT_TRUE(has(r, "= 0.99999")) << r.detail;
}

TEST(Claims, TrendsByTheChangeAcrossSeeds) {
  ClaimSpec c = claim(ClaimKind::decreasing);
  c.along = "train.n";
  c.where = model_is("linear");
  // Both seeds fall by exactly 0.4 from n = 10 to 1000, every step down: no spread.
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "train.n=10: 0.5, train.n=100: 0.2, train.n=1000: 0.1")) << r.detail;
  EXPECT_TRUE(has(r, "= -0.4")) << r.detail;
  c.type = ClaimKind::increasing;
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Fail);
  // The mean baseline changes by exactly 0 on both seeds: surely not increasing, and surely
  // not decreasing.
  c.where = model_is("mean");
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Fail);
  c.type = ClaimKind::decreasing;
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Fail);
  // Seeds disagreeing: -0.4 and +0.2 (mean -0.1, se 0.3): undecided.
  auto runs = table();
  const int64_t ns[] = {10, 100, 1000};
  for (int k = 0; k < 3; ++k) runs.push_back(make_run("mixed", ns[k], 0, 0.5 - 0.2 * k));
  for (int k = 0; k < 3; ++k) runs.push_back(make_run("mixed", ns[k], 1, 0.1 + 0.1 * k));
  c.where = model_is("mixed");
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Inconclusive);
}

TEST(Claims, OneSeedTrendIsJudgedByItsPointsErrors) {
  // 1.0, 1.04, 0.5 on one seed.
  auto runs_with = [](double se) {
    std::vector<StoredRun> runs = {make_run("b", 10, 0, 1.0), make_run("b", 100, 0, 1.04),
                                   make_run("b", 1000, 0, 0.5)};
    if (se >= 0)
      for (auto& r : runs)
        r.metrics.insert(r.metrics.end(), {{"test_nmse_se", se}, {"test_samples", 1000}});
    return runs;
  };
  ClaimSpec c = claim(ClaimKind::decreasing);
  c.along = "train.n";
  // se 0.05: the change -0.5 ± 1.646 × 0.0707 is surely down, the bump +0.04 ± 0.116 is not
  // surely up.
  ClaimResult r = claim_evaluate(c, runs_with(0.05));
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  // se 0.01: the bump +0.04 ± 0.023 surely goes up: not decreasing.
  r = claim_evaluate(c, runs_with(0.01));
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;
  EXPECT_TRUE(has(r, "train.n=10 -> 100 surely goes the other way")) << r.detail;
  // No standard errors: one seed decides nothing.
  r = claim_evaluate(c, runs_with(-1));
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
}

TEST(Claims, OneSeedFractionsThatAllAgreeAreNotCertain) {
  // success_rate at m = 1 and 16 on one seed, 1 000 test samples each (the quick sanford2023
  // E1 case): 0 of 1 000 at both has a sample spread of 0, but the Agresti–Coull standard
  // error is sqrt(p̃(1 − p̃)/1004) = 0.00141 with p̃ = 2/1004, so the change 0 ± 1.646 × 0.0020
  // is undecided, not a sure "no increase"; 1 of 1 000 at m = 16 (p̃ = 3/1004, se 0.00172)
  // gives 0.001 ± 0.0037: undecided as well.
  auto runs_with = [](double at16) {
    std::vector<StoredRun> runs;
    for (auto [m, p] : {std::pair<int64_t, double>{1, 0.0}, {16, at16}}) {
      StoredRun r = make_run("attention", m, 0, 0.0);
      r.metrics = {{"test_success_rate", p},
                   {"test_success_rate_se", std::sqrt(p * (1 - p) / 999)},
                   {"test_samples", 1000}};
      runs.push_back(r);
    }
    return runs;
  };
  ClaimSpec c = claim(ClaimKind::increasing);
  c.metric = "test_success_rate";
  c.along = "train.n";
  EXPECT_EQ(claim_evaluate(c, runs_with(0.0)).verdict, Verdict::Inconclusive);
  EXPECT_EQ(claim_evaluate(c, runs_with(0.001)).verdict, Verdict::Inconclusive);
  // A change far beyond that error is still decided: 0 -> 0.5 of 1 000 passes.
  EXPECT_EQ(claim_evaluate(c, runs_with(0.5)).verdict, Verdict::Pass);
  // Other metrics keep their sample spread: an nmse of 0 with se 0 at both points is a sure
  // "no change" (FAIL), as before.
  ClaimSpec n = claim(ClaimKind::increasing);
  n.along = "train.n";
  std::vector<StoredRun> flat = {make_run("b", 1, 0, 0.0), make_run("b", 16, 0, 0.0)};
  for (auto& r : flat)
    r.metrics.insert(r.metrics.end(), {{"test_nmse_se", 0.0}, {"test_samples", 1000}});
  EXPECT_EQ(claim_evaluate(n, flat).verdict, Verdict::Fail);
}

TEST(Claims, RatioIncreasingAndFlat) {
  // mean / linear per seed: 2.04, 5.26, 11.1 and 1.96, 4.76, 9.09: changes 9.07, 7.13,
  // mean 8.10, se 0.97, lower bound 8.10 - 6.13 > 0; every step up.
  ClaimSpec c = claim(ClaimKind::ratio_increasing);
  c.along = "train.n";
  c.a = model_is("mean");
  c.b = model_is("linear");
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  std::swap(c.a, c.b);  // linear / mean: -0.4 on both seeds
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Fail);
  ClaimSpec f = claim(ClaimKind::flat);
  f.along = "train.n";
  f.where = model_is("mean");
  f.threshold = 0.01;
  EXPECT_EQ(claim_evaluate(f, table()).verdict, Verdict::Pass);  // 1.0 everywhere
  f.where = model_is("linear");
  r = claim_evaluate(f, table());
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;  // n = 1000 vs 10: -0.4 on both seeds
  EXPECT_TRUE(has(r, "spreads by 0.4")) << r.detail;
  f.threshold = 0.35;  // -0.3 (100 vs 10) is within, -0.4 surely is not
  EXPECT_EQ(claim_evaluate(f, table()).verdict, Verdict::Fail);
  f.threshold = 0.42;  // -0.4 ± 0 within 0.42: every pair within
  EXPECT_EQ(claim_evaluate(f, table()).verdict, Verdict::Pass);
}

TEST(Claims, PowerLawComparesTheExponentWithTheTheory) {
  // err = n^-1/2 × (1 + small seed noise) at n = 100 ... 6400, three seeds.
  std::vector<StoredRun> runs;
  const double noise[3][4] = {
      {0.01, -0.02, 0.015, 0}, {-0.01, 0.01, 0, 0.02}, {0, 0.005, -0.01, -0.015}};
  const int64_t ns[] = {100, 400, 1600, 6400};
  for (uint64_t s = 0; s < 3; ++s)
    for (int k = 0; k < 4; ++k)
      runs.push_back(make_run("rf", ns[k], s, std::pow(double(ns[k]), -0.5) * (1 + noise[s][k])));
  ClaimSpec c = claim(ClaimKind::power_law);
  c.along = "train.n";
  c.exponent = -0.5;
  c.margin = 0.05;
  ClaimResult r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "measured -0.49")) << r.detail;
  EXPECT_TRUE(has(r, "the theory's rate is -0.5")) << r.detail;
  c.exponent = -1;  // far outside
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Fail);
  c.compare = "at_most";  // exponent <= -1 + 0.05? no: the interval sits near -0.5
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Fail);
  c.exponent = -0.3;  // <= -0.25: yes
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Pass);
  c.compare = "at_least";  // >= -0.35: no
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Fail);
}

TEST(Claims, WhatTheRunsCannotHoldIsNotEvaluated) {
  ClaimSpec c = claim(ClaimKind::below);
  c.threshold = 10;
  c.where = model_is("rfa");  // no such run at this size
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_EQ(r.verdict, Verdict::NotEvaluated) << r.detail;
  EXPECT_TRUE(has(r, "not evaluated at this size")) << r.detail;
  ClaimSpec d = claim(ClaimKind::decreasing);
  d.along = "train.n";
  d.where = {{"train.n", {int64_t{10}}}};
  r = claim_evaluate(d, table());  // one value of `along` only
  EXPECT_EQ(r.verdict, Verdict::NotEvaluated) << r.detail;
  EXPECT_TRUE(has(r, "one value (10) of train.n")) << r.detail;
  // Runs that match but have no such metric, or only failed runs: undecided, not absent.
  ClaimSpec e = claim(ClaimKind::below);
  e.metric = "test_accuracy";
  e.threshold = 10;
  EXPECT_EQ(claim_evaluate(e, table()).verdict, Verdict::Inconclusive);
  e.metric = "test_nmse";
  e.where = {{"seed", {int64_t{9}}}};
  r = claim_evaluate(e, table());
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "failed")) << r.detail;
}

TEST(Claims, ExitCodesTellFailFromInconclusive) {
  ReportSection s;
  s.claims = {ClaimResult{"a", "", Verdict::Pass, ""},
              ClaimResult{"b", "", Verdict::NotEvaluated, ""}};
  EXPECT_EQ(report_exit_code(report_counts({s})), 0);
  s.claims.push_back(ClaimResult{"c", "", Verdict::Inconclusive, ""});
  EXPECT_EQ(report_exit_code(report_counts({s})), 3);
  s.claims.push_back(ClaimResult{"d", "", Verdict::Fail, ""});
  EXPECT_EQ(report_exit_code(report_counts({s})), 1);
  EXPECT_EQ(report_counts_text(report_counts({s})),
            "1 of 4 claims pass, 1 fail, 1 inconclusive, 1 not evaluated at this size");
  EXPECT_EQ(report_claim_lines({s}).substr(0, 5), "PASS ");
}

// A size sweep: error of model.width w at task.N = N, two seeds (± noise around the value).
//   N = 4:  w = 16 → 0.8, 64 → 0.3, 256 → 0.1      smallest w with mean < 0.5: 64
//   N = 8:  w = 16 → 0.9, 64 → 0.6, 256 → 0.2      256
//   N = 16: w = 16 → 1.0, 64 → 0.9, 256 → 0.7      none up to 256
// With noise 0.01 each size's mean has bounds ± 0.063.
std::vector<StoredRun> size_table(double n16_w256 = 0.7, double noise = 0.01) {
  const int64_t Ns[] = {4, 8, 16}, widths[] = {16, 64, 256};
  const double err[3][3] = {{0.8, 0.3, 0.1}, {0.9, 0.6, 0.2}, {1.0, 0.9, n16_w256}};
  std::vector<StoredRun> runs;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (uint64_t s = 0; s < 2; ++s) {
        StoredRun r;
        r.run_id = std::to_string(i) + std::to_string(j) + std::to_string(s);
        r.seed = s;
        r.status = "ok";
        r.params = {{"task.N", std::to_string(Ns[i])}, {"model.width", std::to_string(widths[j])}};
        r.metrics = {{"err", err[i][j] + (s ? noise : -noise)}};
        runs.push_back(r);
      }
  return runs;
}

ClaimSpec size_claim(ClaimKind type, double threshold) {
  ClaimSpec c;
  c.id = "s";
  c.text = "t";
  c.type = type;
  c.metric = "err";
  c.size = "model.width";
  c.along = "task.N";
  c.threshold = threshold;
  return c;
}

TEST(Claims, SizeIncreasingBracketsTheSmallestSizeReachingTheGoal) {
  ClaimSpec c = size_claim(ClaimKind::size_increasing, 0.5);
  ClaimResult r = claim_evaluate(c, size_table());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "task.N=4: 64, task.N=8: 256, task.N=16: none up to 256")) << r.detail;
  // A bar every width surely reaches at every N: 16 throughout, surely not increasing.
  r = claim_evaluate(size_claim(ClaimKind::size_increasing, 2.0), size_table());
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;
  EXPECT_TRUE(has(r, "task.N=4: at most 16, task.N=8: at most 16, task.N=16: at most 16"))
      << r.detail;
  // N = 16 reaching the bar at 256, like N = 8: 64, 256, 256 — never smaller, larger at the end.
  r = claim_evaluate(c, size_table(0.4));
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "task.N=16: 256")) << r.detail;
  // Bar 0.05: at N = 4 width 256 (0.1 ± 0.063) may reach it but surely does not, and nothing
  // reaches it later: the growth cannot be told apart from none.
  r = claim_evaluate(size_claim(ClaimKind::size_increasing, 0.05), size_table());
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "task.N=4: between 256 and none up to 256")) << r.detail;
}

TEST(Claims, SizeIncreasingFailsWhenTheNeededSizeSurelyDrops) {
  // N = 4 needs 64, N = 8 needs 256, N = 16 needs 64 (width 64 at 0.35 ± 0.063): a drop.
  auto runs = size_table();
  for (auto& r : runs)
    if (r.param("task.N") == "16" && r.param("model.width") == "64")
      r.metrics = {{"err", 0.35 + (r.seed ? 0.01 : -0.01)}};
  ClaimResult res = claim_evaluate(size_claim(ClaimKind::size_increasing, 0.5), runs);
  EXPECT_EQ(res.verdict, Verdict::Fail) << res.detail;
  EXPECT_TRUE(has(res, "task.N=16: 64")) << res.detail;
}

TEST(Claims, SizeGoalAbove) {
  // Goal "above" 0.85: width 16 may reach it at N = 4 (0.8 ± 0.063) and N = 8, and surely
  // does at N = 16 (1.0): the last is surely not larger than the first.
  ClaimSpec c = size_claim(ClaimKind::size_increasing, 0.85);
  c.goal = "above";
  ClaimResult r = claim_evaluate(c, size_table());
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;
  EXPECT_TRUE(has(r, "task.N=4: between 16 and none up to 256")) << r.detail;
}

TEST(Claims, SizeFlatNeedsEveryValueSurelyReachedWithinTheFactor) {
  ClaimSpec c = size_claim(ClaimKind::size_flat, 0.65);
  c.factor = 4;
  // Tight seeds (± 0.001): N = 4 needs 64, N = 8 64 (0.6), N = 16 256 (0.62): 256 / 64 = 4.
  auto runs = size_table(0.62, 0.001);
  ClaimResult r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  c.factor = 2;
  EXPECT_EQ(claim_evaluate(c, runs).verdict, Verdict::Fail);
  // With ± 0.01 seeds, 0.62 and 0.6 are within the bounds of 0.65: undecided.
  c.factor = 4;
  EXPECT_EQ(claim_evaluate(c, size_table(0.62)).verdict, Verdict::Inconclusive);
  // N = 16 surely not reached (0.7 ± 0.0063): fails whatever the factor; with ± 0.01 seeds
  // 0.7 ± 0.063 may still reach 0.65: undecided.
  c.factor = 100;
  EXPECT_EQ(claim_evaluate(c, size_table(0.7, 0.001)).verdict, Verdict::Fail);
  EXPECT_EQ(claim_evaluate(c, size_table()).verdict, Verdict::Inconclusive);
  // One value of `along` only: not evaluated at this size.
  c.where = {{"task.N", {int64_t{4}}}};
  r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::NotEvaluated) << r.detail;
}

// Two models on the size sweep: "a" is size_table(), "b" reaches 0.5 from width 16 at every N
// except where `b16` sets N = 16's errors (per width 16, 64, 256).
std::vector<StoredRun> size_ratio_table(std::vector<double> b16 = {0.1, 0.1, 0.1}) {
  std::vector<StoredRun> runs;
  for (auto r : size_table()) {
    r.params.push_back({"model.name", "a"});
    runs.push_back(r);
    r.params.back().second = "b";
    r.run_id += "b";
    const int j = r.param("model.width") == "16" ? 0 : r.param("model.width") == "64" ? 1 : 2;
    r.metrics = {{"err", (r.param("task.N") == "16" ? b16[j] : 0.1) + (r.seed ? 0.01 : -0.01)}};
    runs.push_back(r);
  }
  return runs;
}

TEST(Claims, SizeRatioIncreasingBracketsTheRatioOfTwoNeededSizes) {
  ClaimSpec c = size_claim(ClaimKind::size_ratio_increasing, 0.5);
  c.a = model_is("a");
  c.b = model_is("b");
  // a needs 64, 256, none up to 256; b needs 16 throughout: ratios 4, 16, [16, inf].
  ClaimResult r = claim_evaluate(c, size_ratio_table());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "task.N=4: [4, 4] (64 / at most 16), task.N=8: [16, 16] (256 / at most 16), "
                     "task.N=16: [16, inf] (none up to 256 / at most 16)")) << r.detail;
  // b never reaching the goal at N = 16: a's none over b's none is [0, inf], undecided.
  r = claim_evaluate(c, size_ratio_table({0.9, 0.9, 0.9}));
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "task.N=16: [0, inf]")) << r.detail;
  // a reaching at 64 and b at 64 at N = 16: the ratio 1 lies surely below N = 4's 4.
  auto runs = size_ratio_table({0.9, 0.1, 0.1});
  for (auto& run : runs)
    if (run.param("model.name") == "a" && run.param("task.N") == "16" &&
        run.param("model.width") == "64")
      run.metrics = {{"err", 0.35 + (run.seed ? 0.01 : -0.01)}};
  r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::Fail) << r.detail;
  EXPECT_TRUE(has(r, "task.N=16: [1, 1] (64 / 64)")) << r.detail;
}

TEST(Claims, ATrendWithEveryRunFailedAtOneValueIsUndecided) {
  ClaimSpec c = claim(ClaimKind::decreasing);
  c.along = "train.n";
  c.where = model_is("linear");
  EXPECT_EQ(claim_evaluate(c, table()).verdict, Verdict::Pass);  // 0.5, 0.2, 0.1
  // Every linear run at n = 1000 failed: judged on n = 10 and 100 alone it would pass, on a
  // shorter range than the claim names.
  auto runs = table();
  for (auto& r : runs)
    if (r.param("train.n") == "1000" && r.param("model.name") == "linear") {
      r.status = "failed";
      r.metrics.clear();
    }
  const ClaimResult r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "at train.n = 1000 failed")) << r.detail;
}

TEST(Claims, ASeedLeftOutForAValueWithoutALogSaysSo) {
  // power_law on linear's NMSE along n: seed 0 has 0 at n = 1000 (no log), so it is left out
  // for that, not for "not at every train.n"; with both seeds at 0 none is left.
  auto runs = table();
  for (auto& r : runs)
    if (r.param("model.name") == "linear" && r.param("train.n") == "1000" && r.seed == 0)
      r.metrics = {{"test_nmse", 0.0}};
  ClaimSpec c = claim(ClaimKind::power_law);
  c.along = "train.n";
  c.where = model_is("linear");
  c.exponent = -0.35;
  c.margin = 1;
  ClaimResult r = claim_evaluate(c, runs);
  EXPECT_TRUE(has(r, "(1 seeds left out: a value <= 0, which has no log)")) << r.detail;
  for (auto& run : runs)
    if (run.param("model.name") == "linear" && run.param("train.n") == "1000")
      run.metrics = {{"test_nmse", 0.0}};
  r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "2 seeds left out for a value <= 0, which has no log; no seed is left"))
      << r.detail;
}

TEST(Claims, OneSeedRatioOfZeroKeepsItsNumeratorsError) {
  // One seed, a = 0 ± 0.01 and b = 0.5 ± 0.01 (test-set errors, 1000 samples) at n = 10 and 100:
  // the ratio is 0 ± 0.02 at both, so its change is undecided (before, the delta method's
  // |y|·(sa/a) made the error 0 and the claim failed on a sure "no change").
  std::vector<StoredRun> runs;
  for (int64_t n : {10, 100})
    for (const auto& [model, value] : {std::pair{"a", 0.0}, std::pair{"b", 0.5}}) {
      StoredRun r = make_run(model, n, 0, value);
      r.metrics = {{"test_nmse", value}, {"test_nmse_se", 0.01}, {"test_samples", 1000}};
      runs.push_back(r);
    }
  ClaimSpec c = claim(ClaimKind::ratio_increasing);
  c.along = "train.n";
  c.a = model_is("a");
  c.b = model_is("b");
  const ClaimResult r = claim_evaluate(c, runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
}

}  // namespace
}  // namespace attn
