// Size claims whose size is a product of keys (`size = "model.heads * model.m * model.bits"`,
// docs/spec-format.md): each run's size is the product of its values of those keys, the
// brackets and the line are in that product (the one-layer bound H·m·p of Sanford et al.
// 2024). Hand-made tables, two seeds at ± 0.001 (bounds ± 0.0063 at 95%).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "experiment/claim_kinds.h"
#include "experiment/claims.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

StoredRun size_run(int64_t N, int64_t heads, int64_t m, int64_t bits, uint64_t seed, double err) {
  StoredRun r;
  r.run_id = std::to_string(N) + "_" + std::to_string(heads) + "_" + std::to_string(m) + "_" +
             std::to_string(bits) + "_" + std::to_string(seed);
  r.seed = seed;
  r.status = "ok";
  r.params = {{"task.N", std::to_string(N)},
              {"model.heads", std::to_string(heads)},
              {"model.m", std::to_string(m)},
              {"model.bits", std::to_string(bits)}};
  r.metrics = {{"err", err + (seed ? 0.001 : -0.001)}};
  return r;
}

// heads = 2 and bits = 8 fixed, m = 4, 8, 16, 32 swept: at N the error is 0.1 once m >= N / 2
// (else 0.9), so the smallest m below 0.5 is N / 2 and H·m·p = 8N: 64, 128, 256 at N = 8, 16,
// 32.
std::vector<StoredRun> product_table() {
  std::vector<StoredRun> runs;
  for (int64_t N : {8, 16, 32})
    for (int64_t m : {4, 8, 16, 32})
      for (uint64_t s = 0; s < 2; ++s)
        runs.push_back(size_run(N, 2, m, 8, s, m >= N / 2 ? 0.1 : 0.9));
  return runs;
}

ClaimSpec product_claim(ClaimKind type, const std::string& size) {
  ClaimSpec c;
  c.id = "p";
  c.text = "t";
  c.type = type;
  c.metric = "err";
  c.threshold = 0.5;
  c.along = "task.N";
  c.size = size;
  return c;
}

bool has(const ClaimResult& r, const std::string& words) {
  return r.detail.find(words) != std::string::npos;
}

TEST(ClaimsSize, AProductOfKeysIsTheSizeAndTheLinePrintsIt) {
  for (const std::string size :
       {"model.heads*model.m*model.bits", "model.heads * model.m * model.bits"}) {
    const ClaimResult r =
        claim_evaluate(product_claim(ClaimKind::size_increasing, size), product_table());
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
    EXPECT_TRUE(has(r, "smallest model.heads*model.m*model.bits with mean err < 0.5")) << r.detail;
    EXPECT_TRUE(has(r, "task.N=8: at most 64, task.N=16: 128, task.N=32: 256")) << r.detail;
  }
  // The same runs with the single key: the line prints m.
  const ClaimResult m =
      claim_evaluate(product_claim(ClaimKind::size_increasing, "model.m"), product_table());
  EXPECT_EQ(m.verdict, Verdict::Pass) << m.detail;
  EXPECT_TRUE(has(m, "task.N=8: at most 4, task.N=16: 8, task.N=32: 16")) << m.detail;
}

TEST(ClaimsSize, EveryFactorIsTheRunsOwnValue) {
  // heads varies with m (a zipped pair, heads = m / 4): sizes 1·4·8 = 32, 2·8·8 = 128,
  // 4·16·8 = 512, 8·32·8 = 2048; needed m = N / 2 as before.
  std::vector<StoredRun> runs;
  for (int64_t N : {8, 16, 32})
    for (int64_t m : {4, 8, 16, 32})
      for (uint64_t s = 0; s < 2; ++s)
        runs.push_back(size_run(N, m / 4, m, 8, s, m >= N / 2 ? 0.1 : 0.9));
  const ClaimResult r = claim_evaluate(
      product_claim(ClaimKind::size_increasing, "model.heads*model.m*model.bits"), runs);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "task.N=8: at most 32, task.N=16: 128, task.N=32: 512")) << r.detail;
  // A run without a numeric value of one factor is left out: dropping bits from the m = 4 runs
  // at N = 8 leaves its size 32, tried at the other N, untried there, so N = 8 needs 32 or 128.
  for (auto& run : runs)
    if (run.param("task.N") == "8" && run.param("model.m") == "4") run.params.pop_back();
  const ClaimResult left_out = claim_evaluate(
      product_claim(ClaimKind::size_increasing, "model.heads*model.m*model.bits"), runs);
  EXPECT_TRUE(has(left_out, "task.N=8: between 32 and 128, task.N=16: 128")) << left_out.detail;
}

TEST(ClaimsSize, FlatAndRatioTakeProductsToo) {
  // Every N needs m = 4 when the bar is 0.95 (0.9 ± 0.0063 is surely below): H·m·p = 64
  // throughout, flat with factor 1.
  ClaimSpec flat = product_claim(ClaimKind::size_flat, "model.heads*model.m*model.bits");
  flat.threshold = 0.95;
  flat.factor = 1;
  const ClaimResult r = claim_evaluate(flat, product_table());
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "task.N=8: at most 64, task.N=16: at most 64, task.N=32: at most 64"))
      << r.detail;
  // Ratio of the one-layer product to a two-layer one that needs m = 4 everywhere.
  std::vector<StoredRun> runs;
  for (auto run : product_table()) {
    run.params.push_back({"model.layers", "1"});
    runs.push_back(run);
    run.params.back().second = "2";
    run.metrics = {{"err", 0.1}};
    runs.push_back(run);
  }
  ClaimSpec ratio = product_claim(ClaimKind::size_ratio_increasing, "model.heads * model.m");
  ratio.a = {{"model.layers", {int64_t{1}}}};
  ratio.b = {{"model.layers", {int64_t{2}}}};
  const ClaimResult rr = claim_evaluate(ratio, runs);
  EXPECT_EQ(rr.verdict, Verdict::Pass) << rr.detail;
  EXPECT_TRUE(has(rr, "ratio of the smallest model.heads*model.m with mean")) << rr.detail;
  EXPECT_TRUE(has(rr, "task.N=32: [4, 4] (32 / at most 8)")) << rr.detail;
}

// Brackets on the grid of every size tried at any value of along
// (docs/spec-format.md#size-brackets):
// sizes a value did not try (or whose runs failed) open its bracket; "never reached" there is
// "more than its largest", not "more than every size".
std::vector<StoredRun> grid_runs(const std::vector<std::pair<int64_t, std::vector<int64_t>>>& grid,
                                 int64_t (*needed)(int64_t N)) {
  std::vector<StoredRun> runs;
  for (const auto& [N, ms] : grid)
    for (int64_t m : ms)
      for (uint64_t s = 0; s < 2; ++s)
        runs.push_back(size_run(N, 2, m, 8, s, m >= needed(N) ? 0.1 : 0.9));
  return runs;
}

TEST(ClaimsSizeGrid, TwoValuesBeyondTheGridSayNothingAboutGrowth) {
  // Nothing tried reaches the bar at any N: before, the last value's "never" was "not above" the
  // first's and the claim failed.
  const auto runs =
      grid_runs({{8, {4, 8}}, {16, {4, 8}}}, [](int64_t) -> int64_t { return 1000; });
  const ClaimResult r = claim_evaluate(product_claim(ClaimKind::size_increasing, "model.m"), runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "task.N=8: none up to 8, task.N=16: none up to 8")) << r.detail;
}

TEST(ClaimsSizeGrid, NeverReachedBelowALargerSizeTriedElsewhereIsNoDecrease) {
  // sanford2023 E3's shape: N = 8 tries m up to 32 and reaches nothing; N = 16 also tries 128
  // and needs it. N = 8 needs more than 32, so 128 or more (the grid's next size): growth, no drop.
  const auto runs = grid_runs({{4, {4, 8, 16, 32}}, {8, {4, 8, 16, 32}}, {16, {4, 8, 16, 32, 128}}},
                              [](int64_t N) -> int64_t { return N == 4 ? 8 : 128; });
  const ClaimResult r = claim_evaluate(product_claim(ClaimKind::size_increasing, "model.m"), runs);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.detail;
  EXPECT_TRUE(has(r, "task.N=4: 8, task.N=8: none up to 32, task.N=16: 128")) << r.detail;
}

TEST(ClaimsSizeGrid, FailedRunsOpenTheBracketInsteadOfPassing) {
  // N = 16's runs at m = 8 and 32 failed; m = 4 surely misses: N = 16 needs 8 or more, as N = 8
  // needs 8: growth undecided (before: "never" at N = 16, so PASS).
  auto runs = grid_runs({{8, {4, 8, 32}}, {16, {4, 8, 32}}},
                        [](int64_t) -> int64_t { return 8; });
  for (auto& run : runs)
    if (run.param("task.N") == "16" && run.param("model.m") != "4") run.status = "failed";
  const ClaimResult r = claim_evaluate(product_claim(ClaimKind::size_increasing, "model.m"), runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "task.N=16: none up to 4")) << r.detail;
}

TEST(ClaimsSizeGrid, ASizeNotTriedAtOneValueMayBeWhatItNeeds) {
  // sanford2023 E1's shape: N = 16 tries m = 16, 32, 64 and needs 64; N = 32 and 64 try 64 and
  // 128 and need 64 and 128. N = 32 may need 16 or 32 (not tried there): flat within 2 is
  // undecided (before: [64, 64], so PASS).
  const auto runs = grid_runs({{16, {16, 32, 64}}, {32, {64, 128}}, {64, {64, 128}}},
                              [](int64_t N) -> int64_t { return N == 64 ? 128 : 64; });
  ClaimSpec flat = product_claim(ClaimKind::size_flat, "model.m");
  flat.factor = 2;
  const ClaimResult r = claim_evaluate(flat, runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_TRUE(has(r, "task.N=16: 64, task.N=32: between 16 and 64, task.N=64: 128")) << r.detail;
  // With every size tried at every N the same needs are decided: 128 / 64 = 2, flat.
  const std::vector<int64_t> all = {16, 32, 64, 128};
  const auto full = grid_runs({{16, all}, {32, all}, {64, all}},
                              [](int64_t N) -> int64_t { return N == 64 ? 128 : 64; });
  EXPECT_EQ(claim_evaluate(flat, full).verdict, Verdict::Pass);
}

TEST(ClaimsSizeGrid, ASeedsInfiniteMetricDecidesNothingAboutItsSize) {
  // m = 4 at N = 8: one seed diverged (infinite error), the other reached the bar. The bounds are
  // not numbers, so m = 4 may reach it (before: counted as surely missing, bracket [8, 8]).
  auto runs = grid_runs({{8, {4, 8}}, {16, {4, 8}}}, [](int64_t) -> int64_t { return 4; });
  for (auto& run : runs)
    if (run.param("task.N") == "8" && run.param("model.m") == "4" && run.seed == 0)
      run.metrics = {{"err", std::numeric_limits<double>::infinity()}};
  const ClaimResult r = claim_evaluate(product_claim(ClaimKind::size_increasing, "model.m"), runs);
  EXPECT_TRUE(has(r, "task.N=8: between 4 and 8, task.N=16: at most 4")) << r.detail;
}

TEST(ClaimSizeKeys, AKeyOrAProductWithOrWithoutSpaces) {
  EXPECT_EQ(claim_size_keys("model.m"), std::vector<std::string>{"model.m"});
  EXPECT_EQ(claim_size_keys("model.heads * model.m*model.bits"),
            (std::vector<std::string>{"model.heads", "model.m", "model.bits"}));
  EXPECT_EQ(claim_size_keys("model.m * "), (std::vector<std::string>{"model.m", ""}));
}

using ProductSizeSpecTest = test::SpecFileTest;

// A spec's loader takes a product size when each factor is a swept numeric key, and names the
// factor that is not.
TEST_F(ProductSizeSpecTest, EachFactorMustBeASweptNumericKey) {
  const std::string base =
      "[task]\nname = \"qsa\"\n[model]\nname = \"linear\"\n[sweep]\n\"task.N\" = [8, 16]\n"
      "\"task.q\" = [1, 2]\n\"task.d\" = [4]\n[[claim]]\ntype = \"size_increasing\"\n"
      "metric = \"m\"\ntext = \"t\"\nalong = \"task.N\"\nthreshold = 1\n";
  const Spec spec = load(base + "size = \"task.q * task.d\"\n");
  ASSERT_EQ(spec.claims.size(), 1u);
  EXPECT_EQ(spec.claims[0].size, "task.q * task.d");
  const std::string unswept = error(base + "size = \"task.q * task.k\"\n");
  EXPECT_NE(unswept.find("size = \"task.k\" is not a swept key"), std::string::npos) << unswept;
  const std::string empty = error(base + "size = \"task.q * \"\n");
  EXPECT_NE(empty.find("size = \"task.q * \" has an empty factor"), std::string::npos) << empty;
}

// Heads against q (Mousavi-Hosseini et al. 2025): runs at q = 1, 2, 3 (task.N stands for q)
// and H = 1 … 4 (model.heads); error `hit` once H >= q + shift, else 0.9; two seeds ± 0.001.
std::vector<StoredRun> heads_table(int shift, double hit) {
  std::vector<StoredRun> runs;
  for (int64_t q : {1, 2, 3})
    for (int64_t h : {1, 2, 3, 4})
      for (uint64_t s = 0; s < 2; ++s)
        runs.push_back(size_run(q, h, 8, 8, s, h >= q + shift ? hit : 0.9));
  return runs;
}

TEST(ClaimsSize, SizeEqualsAlongPassesWhenTheNeededSizeIsTheAlongValueEverywhere) {
  const ClaimSpec c = product_claim(ClaimKind::size_equals_along, "model.heads");
  const ClaimResult exact = claim_evaluate(c, heads_table(0, 0.1));
  EXPECT_EQ(exact.verdict, Verdict::Pass) << exact.detail;
  EXPECT_TRUE(has(exact, "task.N=1: at most 1, task.N=2: 2, task.N=3: 3")) << exact.detail;
  // One more head than q needed: every bracket is [q + 1, q + 1], surely not q.
  const ClaimResult more = claim_evaluate(c, heads_table(1, 0.1));
  EXPECT_EQ(more.verdict, Verdict::Fail) << more.detail;
  // q − 1 heads already reach it: the bracket at q = 2 is [1, 1].
  const ClaimResult fewer = claim_evaluate(c, heads_table(-1, 0.1));
  EXPECT_EQ(fewer.verdict, Verdict::Fail) << fewer.detail;
  // From q heads on the error sits on the goal (0.5 ± 0.0063, never surely below): each
  // bracket is [q, never], which holds q and does not prove it.
  const ClaimResult edge = claim_evaluate(c, heads_table(0, 0.5));
  EXPECT_EQ(edge.verdict, Verdict::Inconclusive) << edge.detail;
  EXPECT_TRUE(has(edge, "task.N=1: between 1 and none up to 4")) << edge.detail;
}

}  // namespace
}  // namespace attn
