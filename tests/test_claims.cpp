// Claim evaluation on hand-made result tables: claims that should pass pass, claims that
// should fail fail, and claims with nothing to check fail.
#include <gtest/gtest.h>

#include "experiment/claims.h"

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

// linear: 0.5, 0.2, 0.1 at n = 10, 100, 1000 (two seeds, +-0.01); mean: 1.0 everywhere.
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

ClaimSpec claim(const std::string& type) {
  ClaimSpec c;
  c.id = "c";
  c.text = "t";
  c.type = type;
  c.metric = "test_nmse";
  return c;
}

TEST(Claims, LessThanComparesMeansWithFactor) {
  ClaimSpec c = claim("less_than");
  c.a = {{"model.name", {std::string("linear")}}};
  c.b = {{"model.name", {std::string("mean")}}};
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_TRUE(r.pass) << r.detail;  // mean(linear) = 0.2667 < 1.0
  EXPECT_NE(r.detail.find("(6 runs) = 0.2667"), std::string::npos) << r.detail;
  c.factor = 0.25;  // 0.2667 < 0.25 is false
  r = claim_evaluate(c, table());
  EXPECT_FALSE(r.pass) << r.detail;
  std::swap(c.a, c.b);
  c.factor = 1.0;
  EXPECT_FALSE(claim_evaluate(c, table()).pass);
  // `where` restricts both sides: at n = 10 linear's mean is 0.5.
  std::swap(c.a, c.b);
  c.where = {{"train.n", {int64_t{10}}}};
  c.factor = 0.45;
  r = claim_evaluate(c, table());
  EXPECT_FALSE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("(2 runs) = 0.5"), std::string::npos) << r.detail;
  c.factor = 0.55;
  EXPECT_TRUE(claim_evaluate(c, table()).pass);
}

TEST(Claims, FiltersMatchNumbersNumericallyAndListsAsAnyOf) {
  ClaimSpec c = claim("below");
  c.where = {{"model.name", {std::string("linear")}}, {"train.n", {int64_t{100}, 1000.0}}};
  c.threshold = 0.16;  // mean of 0.19, 0.21, 0.09, 0.11 = 0.15
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_TRUE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("(4 runs) = 0.15"), std::string::npos) << r.detail;
  c.threshold = 0.15;  // strict
  EXPECT_FALSE(claim_evaluate(c, table()).pass);
  c.type = "above";
  c.threshold = 0.14;
  EXPECT_TRUE(claim_evaluate(c, table()).pass);
}

TEST(Claims, MonotoneAlongAKey) {
  ClaimSpec c = claim("decreasing");
  c.along = "train.n";
  c.where = {{"model.name", {std::string("linear")}}};
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_TRUE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("train.n=10: 0.5, train.n=100: 0.2, train.n=1000: 0.1"), std::string::npos)
      << r.detail;
  c.type = "increasing";
  EXPECT_FALSE(claim_evaluate(c, table()).pass);
  // The flat mean baseline is neither decreasing nor increasing.
  c.where = {{"model.name", {std::string("mean")}}};
  EXPECT_FALSE(claim_evaluate(c, table()).pass);
  c.type = "decreasing";
  EXPECT_FALSE(claim_evaluate(c, table()).pass);
  // A bump: with tolerance it passes, without it fails.
  auto runs = table();
  runs.push_back(make_run("bump", 10, 0, 1.0));
  runs.push_back(make_run("bump", 100, 0, 1.04));
  runs.push_back(make_run("bump", 1000, 0, 0.5));
  c.where = {{"model.name", {std::string("bump")}}};
  EXPECT_FALSE(claim_evaluate(c, runs).pass);
  c.tolerance = 0.05;
  EXPECT_TRUE(claim_evaluate(c, runs).pass);
}

TEST(Claims, RatioIncreasingAndFlat) {
  // mean / linear: 2, 5, 10 along train.n -> increasing.
  ClaimSpec c = claim("ratio_increasing");
  c.along = "train.n";
  c.a = {{"model.name", {std::string("mean")}}};
  c.b = {{"model.name", {std::string("linear")}}};
  ClaimResult r = claim_evaluate(c, table());
  EXPECT_TRUE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("train.n=10: 2, train.n=100: 5, train.n=1000: 10"), std::string::npos)
      << r.detail;
  std::swap(c.a, c.b);  // linear / mean: 0.5, 0.2, 0.1
  EXPECT_FALSE(claim_evaluate(c, table()).pass);
  ClaimSpec f = claim("flat");
  f.along = "train.n";
  f.where = {{"model.name", {std::string("mean")}}};
  f.threshold = 0.01;
  EXPECT_TRUE(claim_evaluate(f, table()).pass);  // 1.0 everywhere
  f.where = {{"model.name", {std::string("linear")}}};
  r = claim_evaluate(f, table());
  EXPECT_FALSE(r.pass) << r.detail;  // spread 0.4
  EXPECT_NE(r.detail.find("spreads by 0.4 > 0.01"), std::string::npos) << r.detail;
}

TEST(Claims, NothingToCheckFails) {
  ClaimSpec c = claim("below");
  c.threshold = 10;
  c.where = {{"model.name", {std::string("rfa")}}};
  const ClaimResult r = claim_evaluate(c, table());
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.detail.find("no finished runs"), std::string::npos) << r.detail;
  ClaimSpec d = claim("decreasing");
  d.along = "train.n";
  d.where = {{"train.n", {int64_t{10}}}};
  EXPECT_FALSE(claim_evaluate(d, table()).pass);  // one value of `along` only
  ClaimSpec e = claim("below");
  e.metric = "test_accuracy";  // no run has it
  e.threshold = 10;
  EXPECT_FALSE(claim_evaluate(e, table()).pass);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// A size sweep: error of model.width w at task.N = N, two seeds (±0.01 around the value).
//   N = 4:  w = 16 → 0.8, 64 → 0.3, 256 → 0.1      smallest w with mean < 0.5: 64
//   N = 8:  w = 16 → 0.9, 64 → 0.6, 256 → 0.2      256
//   N = 16: w = 16 → 1.0, 64 → 0.9, 256 → 0.7      none up to 256
std::vector<StoredRun> size_table(double n16_w256 = 0.7) {
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
        r.metrics = {{"err", err[i][j] + (s ? 0.01 : -0.01)}};
        runs.push_back(r);
      }
  return runs;
}

ClaimSpec size_claim(const std::string& type, double threshold) {
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

TEST(Claims, SizeIncreasingFindsTheSmallestSizeReachingTheGoal) {
  ClaimSpec c = size_claim("size_increasing", 0.5);
  ClaimResult r = claim_evaluate(c, size_table());
  EXPECT_TRUE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("task.N=4: 64, task.N=8: 256, task.N=16: none up to 256"),
            std::string::npos)
      << r.detail;
  // A bar every width reaches at every N: the needed size is 16 throughout, not increasing.
  r = claim_evaluate(size_claim("size_increasing", 2.0), size_table());
  EXPECT_FALSE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("task.N=4: 16, task.N=8: 16, task.N=16: 16"), std::string::npos) << r.detail;
  // N = 16 reaching the bar at 256, like N = 8: 64, 256, 256 — never smaller, larger at the end.
  r = claim_evaluate(c, size_table(0.4));
  EXPECT_TRUE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("task.N=16: 256"), std::string::npos) << r.detail;
  // Nothing reached at the first value: fails (the growth cannot be seen).
  r = claim_evaluate(size_claim("size_increasing", 0.05), size_table());
  EXPECT_FALSE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("none up to 256"), std::string::npos) << r.detail;
}

TEST(Claims, SizeIncreasingFailsWhenTheNeededSizeDrops) {
  // N = 4 needs 64, N = 8 needs 256, N = 16 (restricted to widths 16 and 64 where 64 reaches the
  // bar) needs 64: drops, so FAIL.
  auto runs = size_table();
  for (auto& r : runs)
    if (r.param("task.N") == "16" && r.param("model.width") == "64") r.metrics = {{"err", 0.35}};
  ClaimResult res = claim_evaluate(size_claim("size_increasing", 0.5), runs);
  EXPECT_FALSE(res.pass) << res.detail;
  EXPECT_NE(res.detail.find("task.N=16: 64"), std::string::npos) << res.detail;
}

TEST(Claims, SizeGoalAboveAndMeansOverSeeds) {
  // Goal "above": the smallest width whose mean error is above 0.85 — none at N = 4 (0.8, 0.3,
  // 0.1), 16 at N = 8 (0.9).
  ClaimSpec c = size_claim("size_increasing", 0.85);
  c.goal = "above";
  ClaimResult r = claim_evaluate(c, size_table());
  EXPECT_FALSE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("task.N=4: none up to 256, task.N=8: 16"), std::string::npos) << r.detail;
  // The mean decides, not one seed: at N = 4, width 64 has seeds 0.29 and 0.31; a bar of 0.3 is
  // reached by neither mean (0.3 is not < 0.3) but width 256 (0.1) reaches it.
  r = claim_evaluate(size_claim("size_increasing", 0.3), size_table());
  EXPECT_NE(r.detail.find("task.N=4: 256"), std::string::npos) << r.detail;
}

TEST(Claims, SizeFlatNeedsEveryValueReachedWithinTheFactor) {
  ClaimSpec c = size_claim("size_flat", 0.65);
  c.factor = 4;
  auto runs = size_table(0.62);  // N = 16 reaches 0.65 at 256
  ClaimResult r = claim_evaluate(c, runs);
  // N = 4: 64 (0.3), N = 8: 64 (0.6), N = 16: 256 (0.62): largest / smallest = 4 <= 4.
  EXPECT_TRUE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("varies by a factor 4 <= 4"), std::string::npos) << r.detail;
  c.factor = 2;
  EXPECT_FALSE(claim_evaluate(c, runs).pass);
  // N = 16 not reached at all: fails whatever the factor.
  c.factor = 100;
  r = claim_evaluate(c, size_table());
  EXPECT_FALSE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("not reached at every value"), std::string::npos) << r.detail;
  // One value of `along` only: nothing to compare.
  c.where = {{"task.N", {int64_t{4}}}};
  r = claim_evaluate(c, size_table(0.62));
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.detail.find("two or more values of task.N"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace attn
