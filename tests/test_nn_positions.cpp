// Tests of model.positions (nn/positions.h; attention, third_order, transformer): the
// sinusoidal table against its closed form, the learned table's init and gradient, the fixed
// random codes (drawn from the seed, the same in float and double), the resampled codes (a
// function of the sequence and the seed alone), that a model without positions is
// permutation-equivariant and one with positions is not, that a saved model with random codes
// predicts the same after loading, and that the key is out of run ids at "none".
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "attention_test_helpers.h"
#include "core/error.h"
#include "models/model_io.h"
#include "models/neural_models.h"
#include "nn/positions.h"
#include "nn_forward_helpers.h"
#include "tasks/task.h"

namespace attn {
namespace {
using namespace test_attention;

// h (B·N, m) after adding the codes of kind to zeros; x (B, N, d_in).
template <class T>
std::vector<T> codes_of(Positions kind, int64_t N, int64_t m, const std::vector<T>& x, int64_t B,
                        uint64_t seed) {
  ParamSet<T> ps;
  PositionCodes<T> pos;
  pos.declare(ps, kind, N, m, "attention");
  ps.allocate();
  pos.init(ps, seed);
  std::vector<T> h(static_cast<size_t>(B * N * m), T(0));
  pos.forward(ps, h.data(), x.data(), B, static_cast<int64_t>(x.size()) / (B * N));
  return h;
}

TEST(NnPositions, SinusoidalIsVaswanisTable) {
  for (int64_t m : {6, 7}) {
    const int64_t N = 9;
    const auto h = codes_of<double>(Positions::sinusoidal, N, m, std::vector<double>(N), 1, 0);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t c = 0; c + 1 < m; c += 2) {
        const double w = std::pow(10000.0, -static_cast<double>(c) / m);
        EXPECT_DOUBLE_EQ(h[i * m + c], std::sin(i * w)) << i << " " << c;
        EXPECT_DOUBLE_EQ(h[i * m + c + 1], std::cos(i * w)) << i << " " << c;
      }
    EXPECT_DOUBLE_EQ(h[0 * m + 1], 1.0);  // cos 0
    if (m == 7) {
      EXPECT_DOUBLE_EQ(h[3 * m + 6], std::sin(3 * std::pow(10000.0, -6.0 / 7)));
    }
  }
}

TEST(NnPositions, LearnedTableStartsSmallAndSumsItsGradientOverTheBatch) {
  ParamSet<double> ps;
  PositionCodes<double> pos;
  const int64_t N = 40, m = 50, B = 3;
  pos.declare(ps, Positions::learned, N, m, "transformer");
  ps.allocate();
  pos.init(ps, 4);
  ASSERT_EQ(ps.find("pos"), 0);
  ASSERT_EQ(ps.entry(0).shape, (std::vector<int64_t>{N, m}));
  double sq = 0;
  for (double v : ps.values()) sq += v * v;
  EXPECT_NEAR(std::sqrt(sq / (N * m)), 0.02, 0.002);  // N(0, 0.02²), GPT-2's init
  std::vector<double> h(B * N * m, 1.0), x(B * N);
  pos.forward(ps, h.data(), x.data(), B, 1);
  for (int64_t b = 0; b < B; ++b) EXPECT_EQ(h[b * N * m + 7], 1.0 + ps.values()[7]);
  const auto dh = random_vec<double>(B * N * m, 2, "test.dh");
  pos.backward(ps, dh.data(), B);
  EXPECT_DOUBLE_EQ(ps.grads()[5], dh[5] + dh[N * m + 5] + dh[2 * N * m + 5]);
}

TEST(NnPositions, RandomCodesComeFromTheSeed) {
  const int64_t N = 6, m = 5;
  const std::vector<double> x(N);
  const auto a = codes_of<double>(Positions::random, N, m, x, 1, 3);
  EXPECT_EQ(codes_of<double>(Positions::random, N, m, x, 1, 3), a);
  EXPECT_NE(codes_of<double>(Positions::random, N, m, x, 1, 4), a);
  const auto f = codes_of<float>(Positions::random, N, m, std::vector<float>(N), 1, 3);
  for (size_t e = 0; e < a.size(); ++e) EXPECT_EQ(f[e], static_cast<float>(a[e]));
  double sq = 0;
  for (double v : a) sq += v * v;
  EXPECT_GT(sq / a.size(), 0.3);  // N(0, 1) entries, not a small table
}

TEST(NnPositions, ResampledCodesDependOnTheSequenceAndSeedOnly) {
  const int64_t N = 5, m = 4, d = 2;
  const auto x = random_vec<double>(3 * N * d, 8, "test.x");  // three sequences
  const auto all = codes_of<double>(Positions::random_resampled, N, m, x, 3, 1);
  const int64_t nm = N * m;
  // Sequence 2 alone, as a batch of one, gets the codes it got in the batch of three.
  const std::vector<double> x2(x.begin() + 2 * N * d, x.end());
  const auto one = codes_of<double>(Positions::random_resampled, N, m, x2, 1, 1);
  EXPECT_EQ(one, std::vector<double>(all.begin() + 2 * nm, all.end()));
  // Different sequences, and another seed, get other codes; float inputs the same codes.
  EXPECT_NE(std::vector<double>(all.begin(), all.begin() + nm), one);
  EXPECT_NE(codes_of<double>(Positions::random_resampled, N, m, x2, 1, 2), one);
  const auto f = codes_of<float>(Positions::random_resampled, N, m, cast<float>(x2), 1, 1);
  for (size_t e = 0; e < one.size(); ++e) EXPECT_EQ(f[e], static_cast<float>(one[e]));
}

// ------------------------------------------------------------------ models

constexpr int64_t kT = 6, kDin = 3, kDout = 2, kB = 2;

TaskShape shape() { return test_nn::per_token_shape(kT, kDin, kDout); }

std::vector<double> run(const std::string& model, const std::string& positions,
                        const std::vector<double>& x) {
  return test_nn::net_forward(model, {{"positions", positions}}, shape(), x);
}

// Reverses the tokens of each sequence of a (B, T, w) array.
std::vector<double> reversed(const std::vector<double>& a, int64_t w) {
  std::vector<double> r(a.size());
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t i = 0; i < kT; ++i)
      for (int64_t c = 0; c < w; ++c) r[(b * kT + i) * w + c] = a[(b * kT + (kT - 1 - i)) * w + c];
  return r;
}

TEST(NnPositions, OnlyModelsWithPositionsSeeTheOrder) {
  const auto x = random_vec<double>(kB * kT * kDin, 3, "test.x", -1.0, 1.0);
  for (const std::string model : {"attention", "third_order", "transformer"})
    for (const std::string positions :
         {"none", "learned", "sinusoidal", "random", "random_resampled"}) {
      const auto y = run(model, positions, x),
                 y_rev = reversed(run(model, positions, reversed(x, kDin)), kDout);
      double diff = 0;
      for (size_t e = 0; e < y.size(); ++e) diff = std::max(diff, std::abs(y[e] - y_rev[e]));
      if (positions == "none") {
        EXPECT_LT(diff, 1e-12) << model;  // permutation-equivariant
      } else {
        EXPECT_GT(diff, 1e-6) << model << " " << positions;
      }
    }
}

TEST(NnPositions, KeyIsOutOfRunIdsAtNoneAndLearnedAddsATable) {
  for (const std::string model : {"attention", "third_order", "transformer"}) {
    Params p = neural_default_params(model);
    EXPECT_EQ(p.to_json().find("positions"), std::string::npos) << model;
    const int64_t before = neural_net_make<double>(model, p, shape())->params().size();
    p.set_text("positions", "learned");
    EXPECT_NE(p.to_json().find("\"positions\": \"learned\""), std::string::npos);
    EXPECT_EQ(neural_net_make<double>(model, p, shape())->params().size(),
              before + kT * p.get_int("m"));
    p.set_text("positions", "random");
    EXPECT_EQ(neural_net_make<double>(model, p, shape())->params().size(), before);
    EXPECT_THROW(p.set_text("positions", "rotary"), UserError);
  }
}

// A loaded model draws its fixed random codes again from the saved seed. match3_local (N = 16)
// depends on positions; batch 64 is two chunks, so the trainer's replica computes half a step.
TEST(NnPositions, ASavedModelWithRandomCodesPredictsTheSameAfterLoading) {
  const auto task = task_make("match3_local", task_default_params("match3_local"));
  const Batch train = task_generate(*task, 5, 0, 64), test = task_generate(*task, 5, 500, 8);
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("attnlab_positions_" + std::to_string(getpid()) + ".safetensors"))
                               .string();
  for (const std::string positions : {"random", "random_resampled", "learned"}) {
    ModelRecord r = model_record_make("transformer", 5, task->shape());
    for (const std::string& item :
         std::vector<std::string>{"model.m=4", "model.positions=" + positions, "train.n=64",
                                  "train.steps=3", "train.batch=64"})
      model_set_apply(item, r.model_params, &r.train_params);
    auto model = model_make(r);
    FitLog log;
    model->fit(train, log);
    model_save(file, r, *model);
    EXPECT_EQ(model_load(file).model->predict(test), model->predict(test)) << positions;
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace attn
