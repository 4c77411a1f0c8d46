// Tests of model.causal (attention, third_order, transformer; nn/attention_net.h,
// nn/transformer_net.h): with causal = true, changing input token t + 1 leaves every output
// 0 … t unchanged (to the bit) and changes output t + 1; with causal = false it changes the
// earlier outputs too. Also the key's errors and its absence from run ids at its default.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attention_test_helpers.h"
#include "core/error.h"
#include "models/neural_models.h"
#include "nn_forward_helpers.h"

namespace attn {
namespace {
using namespace test_attention;

using test_nn::Sets;

constexpr int64_t kT = 9, kDin = 3, kDout = 2, kB = 2;

TaskShape shape() { return test_nn::per_token_shape(kT, kDin, kDout); }

std::vector<double> run(const std::string& model, bool causal, const std::vector<double>& x,
                        Sets set = {}) {
  set.emplace_back("causal", causal ? "true" : "false");
  return test_nn::net_forward(model, set, shape(), x);
}

// max |y − y2| over the outputs of positions lo … hi of every sequence.
double max_change(const std::vector<double>& y, const std::vector<double>& y2, int64_t lo,
                  int64_t hi) {
  double m = 0;
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t i = lo; i <= hi; ++i)
      for (int64_t c = 0; c < kDout; ++c) {
        const size_t e = static_cast<size_t>((b * kT + i) * kDout + c);
        m = std::max(m, std::abs(y[e] - y2[e]));
      }
  return m;
}

void check_causality(const std::string& model, const Sets& set = {}) {
  const auto x = random_vec<double>(kB * kT * kDin, 3, "test.x", -1.0, 1.0);
  for (bool causal : {true, false}) {
    const auto y = run(model, causal, x, set);
    for (int64_t t = 0; t + 1 < kT; ++t) {
      auto x2 = x;
      for (int64_t b = 0; b < kB; ++b)
        for (int64_t c = 0; c < kDin; ++c) x2[(b * kT + t + 1) * kDin + c] += 0.7;
      const auto y2 = run(model, causal, x2, set);
      EXPECT_GT(max_change(y, y2, t + 1, t + 1), 1e-6) << model << " t=" << t;
      if (causal) {
        EXPECT_EQ(max_change(y, y2, 0, t), 0.0) << model << " causal, t=" << t;
      } else {
        EXPECT_GT(max_change(y, y2, 0, 0), 1e-6) << model << " not causal, t=" << t;
      }
    }
  }
}

TEST(NnCausal, AttentionOutputsIgnoreLaterTokens) { check_causality("attention"); }
TEST(NnCausal, AttentionWithQkDimOutputsIgnoreLaterTokens) {
  check_causality("attention", {{"qk_dim", "3"}, {"heads", "2"}});  // the unfused path
}
TEST(NnCausal, ThirdOrderOutputsIgnoreLaterTokens) { check_causality("third_order"); }
TEST(NnCausal, TransformerOutputsIgnoreLaterTokens) {
  check_causality("transformer", {{"layers", "3"}, {"heads", "2"}});
}

TEST(NnCausal, CausalWithExcludeSelfNamesTheKeys) {
  for (const std::string model : {"attention", "third_order", "transformer"}) {
    Params p = neural_default_params(model);
    p.set_text("causal", "true");
    p.set_text("exclude_self", "true");
    try {
      neural_net_make<double>(model, p, shape());
      ADD_FAILURE() << model << ": no error";
    } catch (const UserError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("causal"), std::string::npos) << what;
      EXPECT_NE(what.find("exclude_self"), std::string::npos) << what;
    }
  }
}

// Added after results were stored: out of a run's id (Params::to_json) while false.
TEST(NnCausal, KeyIsOutOfRunIdsAtItsDefault) {
  for (const std::string model : {"attention", "third_order", "transformer"}) {
    Params p = neural_default_params(model);
    EXPECT_EQ(p.to_json().find("causal"), std::string::npos) << model;
    p.set_text("causal", "true");
    EXPECT_NE(p.to_json().find("\"causal\": true"), std::string::npos) << p.to_json();
  }
}

}  // namespace
}  // namespace attn
