// The gradient-check harness itself (ops/gradcheck.h) can fail: a correct backward passes,
// a backward that is wrong by a relative 1e-4 fails in every row of the table, a wrong entry
// fails, and probes across a kink are skipped and counted. Also: the table has rows for every
// op the neural models are built from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "models/gradcheck_table.h"

namespace attn {
namespace {

// f(x, w) = x² ⊙ w (elementwise), with its exact backward; `wrong` edits the gradients.
GradcheckRow square_row(std::function<void(std::vector<std::vector<double>>&)> wrong = {}) {
  GradcheckRow row;
  row.name = "test/square";
  row.group = "op";
  row.make = [wrong](uint64_t seed) {
    GradcheckProblem p;
    p.inputs = {gradcheck_uniform("x", {6}, seed, -2, 2),
                gradcheck_uniform("w", {6}, seed + 1, -1, 1)};
    p.forward = [](const GradInputs& in) {
      std::vector<double> y(6);
      for (int i = 0; i < 6; ++i) y[i] = in[0].data[i] * in[0].data[i] * in[1].data[i];
      return y;
    };
    p.backward = [wrong](const GradInputs& in, const std::vector<double>& dout) {
      std::vector<std::vector<double>> g(2, std::vector<double>(6));
      for (int i = 0; i < 6; ++i) {
        g[0][i] = 2 * in[0].data[i] * in[1].data[i] * dout[i];
        g[1][i] = in[0].data[i] * in[0].data[i] * dout[i];
      }
      if (wrong) wrong(g);
      return g;
    };
    return p;
  };
  return row;
}

bool all_pass(const std::vector<GradcheckResult>& results) {
  return !results.empty() && std::all_of(results.begin(), results.end(),
                                         [](const GradcheckResult& r) { return r.pass; });
}

TEST(GradcheckHarness, ACorrectBackwardPasses) {
  const auto results = gradcheck_run(square_row(), 3);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    EXPECT_TRUE(r.pass) << r.tensor << " " << r.max_error;
    EXPECT_EQ(r.probes, 6);
    EXPECT_LT(r.max_error, 1e-8);
  }
}

TEST(GradcheckHarness, ASmallScaleErrorOrOneWrongEntryFails) {
  const auto scaled = gradcheck_run(square_row([](auto& g) {
                                      for (double& v : g[1]) v *= 1 + 1e-4;
                                    }),
                                    3);
  EXPECT_TRUE(scaled[0].pass);
  EXPECT_FALSE(scaled[1].pass);
  EXPECT_NEAR(scaled[1].max_error, 1e-4, 2e-6);
  const auto one_entry = gradcheck_run(square_row([](auto& g) { g[0][4] += 0.01; }), 3);
  EXPECT_FALSE(one_entry[0].pass);
  EXPECT_TRUE(one_entry[1].pass);
}

TEST(GradcheckHarness, ProbesAcrossAKinkAreSkippedAndTooManyFailTheRow) {
  // relu(x) at x = 0.3·h (h = 1e-6, the default step): the difference quotients at h and h/2
  // straddle the kink and disagree (0.65 vs 0.8), so every probe is skipped and the row fails;
  // at x = 0.5 (far from the kink) the same row passes.
  auto relu_row = [](double at) {
    GradcheckRow row;
    row.name = "test/relu_near_kink";
    row.group = "op";
    row.make = [at](uint64_t) {
      GradcheckProblem p;
      p.inputs = {GradTensor{"x", {4}, std::vector<double>(4, at), true}};
      p.forward = [](const GradInputs& in) {
        std::vector<double> y(4);
        for (int i = 0; i < 4; ++i) y[i] = std::max(in[0].data[i], 0.0);
        return y;
      };
      p.backward = [](const GradInputs& in, const std::vector<double>& dout) {
        std::vector<std::vector<double>> g(1, std::vector<double>(4));
        for (int i = 0; i < 4; ++i) g[0][i] = in[0].data[i] > 0 ? dout[i] : 0.0;
        return g;
      };
      return p;
    };
    return row;
  };
  const auto near = gradcheck_run(relu_row(3e-7), 1);
  ASSERT_EQ(near.size(), 1u);
  EXPECT_EQ(near[0].skipped, 4);
  EXPECT_FALSE(near[0].pass);
  const auto far = gradcheck_run(relu_row(0.5), 1);
  EXPECT_EQ(far[0].skipped, 0);
  EXPECT_TRUE(far[0].pass);
}

TEST(GradcheckHarness, EveryTableRowFailsWithABackwardOffByOnePartIn10000) {
  // Every row's probes must see its gradients: scaling each backward gradient by (1 + 1e-4)
  // must fail every row whose tolerance is the default 1e-6 (all of them today).
  for (const GradcheckRow& original : gradcheck_table()) {
    GradcheckRow row = original;
    row.make = [make = original.make](uint64_t seed) {
      GradcheckProblem p = make(seed);
      p.backward = [backward = p.backward](const GradInputs& in, const std::vector<double>& dout) {
        auto g = backward(in, dout);
        for (auto& tensor : g)
          for (double& v : tensor) v *= 1 + 1e-4;
        return g;
      };
      return p;
    };
    ASSERT_LE(row.tolerance, 1e-5) << row.name;
    // Every probed tensor of the row must notice (not just one of them).
    for (const auto& r : gradcheck_run(row, 1))
      EXPECT_FALSE(r.pass) << row.name << " / " << r.tensor << ": max error " << r.max_error;
    EXPECT_TRUE(all_pass(gradcheck_run(original, 1))) << original.name;
  }
}

TEST(GradcheckTable, EveryOpHasRows) {
  // The ops the models are built from (issue #5's list).
  std::set<std::string> prefixes;
  for (const auto& row : gradcheck_table()) prefixes.insert(row.name.substr(0, row.name.find('/')));
  std::set<std::string> names;
  for (const auto& row : gradcheck_table()) names.insert(row.name);
  for (const char* op : {"linear", "embedding", "layernorm", "attention", "head_sum", "third_order",
                         "lstm", "activation", "loss"})
    EXPECT_TRUE(prefixes.count(op)) << op;
  for (const char* row : {"activation/relu", "activation/gelu", "activation/tanh",
                          "activation/sigmoid", "loss/mse", "loss/bce", "lstm/reverse"})
    EXPECT_TRUE(names.count(row)) << row;
}

}  // namespace
}  // namespace attn
