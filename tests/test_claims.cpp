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
