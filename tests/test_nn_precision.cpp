// Finite precision of the attention networks (model.bits, docs/precision.md): the p-bit
// fixed-point quantiser (ops/quantize.h), the networks with bits against exact and against
// a naive hand-quantised reference, per-sequence scales, score rounding, training-mode
// semantics (bits_in_training, the trainer's mode switch), user errors and checkpoints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attention_test_helpers.h"
#include "core/error.h"
#include "models/model_io.h"
#include "models/neural_models.h"
#include "ops/attention.h"
#include "ops/quantize.h"
#include "ops/third_order_attention.h"
#include "tasks/task.h"
#include "train/trainer.h"

namespace attn {
namespace {

using test_attention::random_vec;
using Sets = std::vector<std::pair<std::string, std::string>>;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

double mean_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += std::abs(a[i] - b[i]);
  return d / static_cast<double>(a.size());
}

// ------------------------------------------------------------------------- the quantiser

TEST(Quantize, ValuesOnTheGridMaxKeptExactlyErrorAtMostHalfAScale) {
  for (int64_t bits : {2, 3, 5, 8, 16, 30}) {
    SCOPED_TRACE(bits);
    const std::vector<double> x = random_vec<double>(301, 7 + bits, "quantize.x", -2.0, 3.0);
    std::vector<double> y = x;
    const double scale = quantize_fixed_point(y.data(), 301, bits);
    const double L = quantize_levels(bits);
    EXPECT_EQ(L, std::ldexp(1.0, static_cast<int>(bits) - 1) - 1);
    double max_abs = 0;
    size_t arg = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (std::abs(x[i]) > max_abs) max_abs = std::abs(x[i]), arg = i;
    EXPECT_DOUBLE_EQ(scale, max_abs / L);
    EXPECT_EQ(y[arg], x[arg]) << "the largest |x| is kept exactly";
    std::set<double> levels;
    for (size_t i = 0; i < x.size(); ++i) {
      const double level = y[i] / scale;
      EXPECT_NEAR(level, std::nearbyint(level), 1e-9 * std::max(1.0, L));
      EXPECT_LE(std::abs(std::nearbyint(level)), L);
      EXPECT_LE(std::abs(y[i] - x[i]), 0.5 * scale * (1 + 1e-12));
      levels.insert(std::nearbyint(level));
    }
    EXPECT_LE(static_cast<double>(levels.size()), 2 * L + 1);
    if (bits == 2) {
      EXPECT_EQ(levels.size(), 3u);  // 301 values fill {−1, 0, 1}
    }
    // Idempotent: a second rounding changes nothing (bit for bit).
    std::vector<double> z = y;
    EXPECT_EQ(quantize_fixed_point(z.data(), 301, bits), scale);
    EXPECT_TRUE(same_bits(z, y));
  }
}

TEST(Quantize, BitsZeroAndZeroTensorsAreUntouchedAndStrideSkipsTheRest) {
  const std::vector<double> x = random_vec<double>(40, 3, "quantize.x");
  std::vector<double> y = x;
  EXPECT_EQ(quantize_fixed_point(y.data(), 40, 0), 0.0);
  EXPECT_TRUE(same_bits(y, x));
  std::vector<double> zeros(10, 0.0);
  EXPECT_EQ(quantize_fixed_point(zeros.data(), 10, 4), 0.0);
  EXPECT_TRUE(same_bits(zeros, std::vector<double>(10, 0.0)));
  // Stride 2: the odd entries are not read or written; the even ones equal a dense rounding.
  std::vector<double> even(20), strided = x;
  for (int i = 0; i < 20; ++i) even[i] = x[2 * i];
  quantize_fixed_point(even.data(), 20, 3);
  quantize_fixed_point(strided.data(), 20, 3, 2);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(strided[2 * i], even[i]);
    EXPECT_EQ(strided[2 * i + 1], x[2 * i + 1]);
  }
}

TEST(Quantize, BadBitsAreRejectedNamingTheKey) {
  for (int64_t ok : {0, 2, 8, 53}) EXPECT_NO_THROW(quantize_check_bits(ok, "model.bits"));
  for (int64_t bad : {-1, 1, 54, 64}) {
    try {
      quantize_check_bits(bad, "model.bits");
      ADD_FAILURE() << bad << " accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("model.bits = " + std::to_string(bad)),
                std::string::npos)
          << e.what();
    }
  }
}

// --------------------------------------------------------------------------- the networks

constexpr int64_t kN = 5, kDin = 3, kDout = 2;

TaskShape small_shape() {
  TaskShape s;
  s.T = kN;
  s.d_in = kDin;
  s.T_out = kN;
  s.d_out = kDout;
  return s;
}

// Small double networks of each attention model (init from seed 11, weights × 1.5 so that
// the attention is far from uniform).
Sets small_sets(const std::string& model) {
  if (model == "attention") return {{"m", "4"}, {"heads", "2"}, {"phi_width", "6"}};
  if (model == "third_order") return {{"m", "3"}, {"heads", "2"}, {"phi_width", "6"}};
  return {{"layers", "2"}, {"m", "4"}, {"heads", "2"}, {"mlp_width", "6"}};
}

std::unique_ptr<Net<double>> small_net(const std::string& model, const Sets& extra) {
  Params p = neural_default_params(model);
  for (const auto& [k, v] : small_sets(model)) p.set_text(k, v);
  for (const auto& [k, v] : extra) p.set_text(k, v);
  auto net = neural_net_make<double>(model, p, small_shape());
  net->init(11);
  for (double& v : net->params().values()) v *= 1.5;
  return net;
}

std::vector<double> run(Net<double>& net, const std::vector<double>& x) {
  const int64_t B = static_cast<int64_t>(x.size()) / (kN * kDin);
  std::vector<double> y(B * kN * kDout);
  net.forward(x.data(), B, y.data());
  return y;
}

std::vector<double> predict(const std::string& model, const Sets& extra,
                            const std::vector<double>& x) {
  return run(*small_net(model, extra), x);
}

std::vector<double> inputs(int64_t B, uint64_t seed = 1) {
  return random_vec<double>(B * kN * kDin, seed, "precision.x", -1.5, 1.5);
}

const std::vector<std::string> kModels = {"attention", "third_order", "transformer"};

TEST(NetPrecision, BitsZeroEqualsUnsetBitForBit) {
  const auto x = inputs(4);
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const auto unset = predict(model, {}, x);
    EXPECT_TRUE(same_bits(predict(model, {{"bits", "0"}}, x), unset));
    // The flags alone change nothing: bits = 0 means exact.
    EXPECT_TRUE(same_bits(
        predict(model, {{"bits", "0"}, {"bits_scores", "true"}, {"bits_in_training", "true"}}, x),
        unset));
  }
}

TEST(NetPrecision, FiftyThreeBitsEqualExact) {
  const auto x = inputs(4);
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const auto exact = predict(model, {}, x);
    const auto p53 = predict(model, {{"bits", "53"}, {"bits_scores", "true"}}, x);
    EXPECT_LT(max_abs_diff(p53, exact), 1e-12);
  }
}

TEST(NetPrecision, ErrorShrinksAsBitsGrow) {
  const auto x = inputs(16);
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const auto exact = predict(model, {}, x);
    std::map<int, double> err;
    for (int bits = 2; bits <= 10; ++bits)
      err[bits] = mean_abs_diff(predict(model, {{"bits", std::to_string(bits)}}, x), exact);
    for (int bits = 2; bits <= 10; ++bits)
      EXPECT_GT(err[bits], 0) << bits << " bits change nothing";
    // Rounding error halves per bit on average: allow single-bit wiggles, not two-bit ones.
    for (int bits = 2; bits + 2 <= 10; ++bits)
      EXPECT_LT(err[bits + 2], err[bits]) << bits << " → " << bits + 2 << " bits";
    EXPECT_LT(err[10], err[2] / 32) << "2 bits " << err[2] << ", 10 bits " << err[10];
  }
}

TEST(NetPrecision, ASequenceDoesNotDependOnTheOthersInItsBatch) {
  // Sequence 0 has inputs 40× larger: one scale over the batch would wipe out the others.
  std::vector<double> x = inputs(4, 3);
  for (int64_t i = 0; i < kN * kDin; ++i) x[i] *= 40;
  const int64_t x_seq = kN * kDin, y_seq = kN * kDout;
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    for (const Sets& sets : {Sets{{"bits", "3"}}, Sets{{"bits", "4"}, {"bits_scores", "true"}}}) {
      auto net = small_net(model, sets);
      const auto batch = run(*net, x);
      for (int64_t b = 0; b < 4; ++b) {
        const std::vector<double> one(x.begin() + b * x_seq, x.begin() + (b + 1) * x_seq);
        const std::vector<double> alone = run(*net, one);
        const std::vector<double> in_batch(batch.begin() + b * y_seq,
                                           batch.begin() + (b + 1) * y_seq);
        EXPECT_TRUE(same_bits(alone, in_batch)) << "sequence " << b << ": differs by "
                                                << max_abs_diff(alone, in_batch);
      }
    }
  }
}

TEST(NetPrecision, RoundingTheScoresChangesTheResult) {
  const auto x = inputs(4);
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const auto qkv = predict(model, {{"bits", "4"}}, x);
    const auto with_scores = predict(model, {{"bits", "4"}, {"bits_scores", "true"}}, x);
    EXPECT_GT(max_abs_diff(qkv, with_scores), 1e-6);
  }
}

TEST(NetPrecision, TrainingForwardsRoundOnlyWithBitsInTraining) {
  const auto x = inputs(3);
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const auto exact = predict(model, {}, x);
    auto eval_only = small_net(model, {{"bits", "3"}, {"bits_scores", "true"}});
    const auto rounded = run(*eval_only, x);
    eval_only->set_training(true);
    EXPECT_TRUE(same_bits(run(*eval_only, x), exact));
    auto always =
        small_net(model, {{"bits", "3"}, {"bits_scores", "true"}, {"bits_in_training", "true"}});
    always->set_training(true);
    EXPECT_TRUE(same_bits(run(*always, x), rounded));
    EXPECT_GT(max_abs_diff(rounded, exact), 1e-6);
  }
}

// ------------------------------------------------------- against a naive reference

// q/k/v tensor x (B, N, H, d) rounded by hand: one quantize_fixed_point per (b, h) on a
// gathered copy.
std::vector<double> round_by_head(std::vector<double> x, int64_t B, int64_t H, int64_t d,
                                  int64_t bits) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> block;
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t l = 0; l < d; ++l) block.push_back(x[((b * kN + i) * H + h) * d + l]);
      quantize_fixed_point(block.data(), kN * d, bits);
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t l = 0; l < d; ++l) x[((b * kN + i) * H + h) * d + l] = block[i * d + l];
    }
  return x;
}

// y (rows, out) = x (rows, in) · W (in, out), naive.
std::vector<double> matmul(const std::vector<double>& x, const double* W, int64_t in, int64_t out) {
  const int64_t rows = static_cast<int64_t>(x.size()) / in;
  std::vector<double> y(rows * out, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < out; ++j)
      for (int64_t l = 0; l < in; ++l) y[r * out + j] += x[r * in + l] * W[l * out + j];
  return y;
}

// Naive attention with rounded scores: per (b, h) all N² scores scale·<q_i, k_j> (without
// the masked j = i under excl), rounded with one scale, row softmax over the unmasked j,
// Σ_j p_ij v_j. Shapes as ops/attention.h.
std::vector<double> attention_scores_rounded(const std::vector<double>& q,
                                             const std::vector<double>& k,
                                             const std::vector<double>& v, double scale, int64_t B,
                                             int64_t H, int64_t dk, int64_t dv, int64_t bits,
                                             bool excl = false) {
  std::vector<double> out(B * kN * H * dv, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> s(kN * kN, 0.0);
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t j = 0; j < kN; ++j) {
          if (excl && j == i) continue;
          for (int64_t l = 0; l < dk; ++l)
            s[i * kN + j] +=
                q[((b * kN + i) * H + h) * dk + l] * k[((b * kN + j) * H + h) * dk + l];
          s[i * kN + j] *= scale;
        }
      quantize_fixed_point(s.data(), kN * kN, bits);
      for (int64_t i = 0; i < kN; ++i) {
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t j = 0; j < kN; ++j)
          if (!(excl && j == i)) mx = std::max(mx, s[i * kN + j]);
        for (int64_t j = 0; j < kN; ++j)
          s[i * kN + j] = excl && j == i ? 0.0 : std::exp(s[i * kN + j] - mx);
        for (int64_t j = 0; j < kN; ++j) sum += s[i * kN + j];
        for (int64_t j = 0; j < kN; ++j)
          for (int64_t c = 0; c < dv; ++c)
            out[((b * kN + i) * H + h) * dv + c] +=
                s[i * kN + j] / sum * v[((b * kN + j) * H + h) * dv + c];
      }
    }
  return out;
}

TEST(NetPrecision, AttentionScoreRoundingMatchesANaiveKernel) {
  for (const bool excl : {false, true}) {
    SCOPED_TRACE(excl ? "exclude_self" : "all keys");
    const AttentionShape s{3, kN, 2, 3, 2, excl, 3};
    const int64_t n = s.B * kN * s.H;
    const auto q = random_vec<double>(n * s.dk, 1, "q"), k = random_vec<double>(n * s.dk, 2, "k"),
               v = random_vec<double>(n * s.dv, 3, "v");
    std::vector<double> got(n * s.dv), probs(s.B * s.H * kN * kN);
    attention_forward(got.data(), probs.data(), q.data(), k.data(), v.data(), 0.9, s);
    EXPECT_LT(
        max_abs_diff(got, attention_scores_rounded(q, k, v, 0.9, s.B, s.H, s.dk, s.dv, 3, excl)),
        1e-12);
    std::vector<double> exact(n * s.dv);
    attention_forward_ref(exact.data(), static_cast<double*>(nullptr), q.data(), k.data(), v.data(),
                          0.9, AttentionShape{s.B, kN, s.H, s.dk, s.dv, excl});
    EXPECT_GT(max_abs_diff(got, exact), 1e-6) << "3-bit scores are visible";
  }
}

// The bare unit (φ linear, ψ identity, fixed temperature): out_i = Σ_h a_h,i.
const Sets kBareUnit = {{"m", "3"},          {"heads", "2"},          {"phi", "linear"},
                        {"psi", "identity"}, {"residual", "false"},   {"temperature", "fixed"},
                        {"temperature_init", "1.7"}};

TEST(NetPrecision, AttentionMatchesAHandRoundedReference) {
  const int64_t B = 3, H = 2, m = 3, bits = 4;
  const auto x = inputs(B, 5);
  for (const bool scores : {false, true}) {
    SCOPED_TRACE(scores ? "q/k/v and scores rounded" : "q/k/v rounded");
    Sets sets = kBareUnit;
    sets.push_back({"bits", std::to_string(bits)});
    sets.push_back({"bits_scores", scores ? "true" : "false"});
    auto net = small_net("attention", sets);
    const auto got = run(*net, x);
    const auto& ps = net->params();
    std::vector<double> phi = matmul(x, ps.value(ps.find("phi.w0")), kDin, m);
    const double* b0 = ps.value(ps.find("phi.b0"));
    for (size_t r = 0; r < phi.size(); ++r) phi[r] += b0[r % m];
    const auto q = round_by_head(matmul(phi, ps.value(ps.find("q")), m, H * m), B, H, m, bits);
    const auto k = round_by_head(matmul(phi, ps.value(ps.find("k")), m, H * m), B, H, m, bits);
    const auto v =
        round_by_head(matmul(phi, ps.value(ps.find("v")), m, H * kDout), B, H, kDout, bits);
    std::vector<double> heads(B * kN * H * kDout);
    const double scale = 1.7;  // temperature_init (fixed: not a parameter)
    if (scores) {
      heads = attention_scores_rounded(q, k, v, scale, B, H, m, kDout, bits);
    } else {
      attention_forward_ref(heads.data(), static_cast<double*>(nullptr), q.data(), k.data(),
                            v.data(), scale, AttentionShape{B, kN, H, m, kDout, false});
    }
    std::vector<double> want(B * kN * kDout, 0.0);
    for (int64_t r = 0; r < B * kN; ++r)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t c = 0; c < kDout; ++c) want[r * kDout + c] += heads[(r * H + h) * kDout + c];
    EXPECT_LT(max_abs_diff(got, want), 1e-12);
    EXPECT_GT(max_abs_diff(got, predict("attention", kBareUnit, x)), 1e-6) << "rounding is visible";
  }
}

TEST(NetPrecision, ThirdOrderMatchesAHandRoundedReference) {
  const int64_t B = 2, H = 2, m = 3, bits = 5;
  const auto x = inputs(B, 6);
  Sets sets = kBareUnit;
  sets.push_back({"bits", std::to_string(bits)});
  auto net = small_net("third_order", sets);
  const auto got = run(*net, x);
  const auto& ps = net->params();
  std::vector<double> phi = matmul(x, ps.value(ps.find("phi.w0")), kDin, m);
  const double* b0 = ps.value(ps.find("phi.b0"));
  for (size_t r = 0; r < phi.size(); ++r) phi[r] += b0[r % m];
  auto proj = [&](const char* name, int64_t d) {
    return round_by_head(matmul(phi, ps.value(ps.find(name)), m, H * d), B, H, d, bits);
  };
  const auto q = proj("q", m), k1 = proj("k1", m), k2 = proj("k2", m);
  const auto v1 = proj("v1", kDout), v2 = proj("v2", kDout);
  std::vector<double> heads(B * kN * H * kDout);
  third_order_forward_ref(heads.data(), static_cast<double*>(nullptr), q.data(), k1.data(),
                          k2.data(), v1.data(), v2.data(), 1.7,
                          ThirdOrderShape{B, kN, H, m, kDout, false});
  std::vector<double> want(B * kN * kDout, 0.0);
  for (int64_t r = 0; r < B * kN; ++r)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t c = 0; c < kDout; ++c) want[r * kDout + c] += heads[(r * H + h) * kDout + c];
  EXPECT_LT(max_abs_diff(got, want), 1e-12);
}

TEST(NetPrecision, ThirdOrderScoreRoundingMatchesANaiveKernel) {
  // The kernel's score_bits path (whole (b, h) block, masked pairs excluded) against naive loops.
  for (const bool excl : {false, true}) {
    SCOPED_TRACE(excl ? "exclude_self" : "all pairs");
    const ThirdOrderShape s{2, 4, 2, 3, 2, excl, 3};
    const int64_t N = s.N, H = s.H, dk = s.dk, dv = s.dv, n = s.B * N * H;
    const auto q = random_vec<double>(n * dk, 1, "q"), k1 = random_vec<double>(n * dk, 2, "k1"),
               k2 = random_vec<double>(n * dk, 3, "k2"), v1 = random_vec<double>(n * dv, 4, "v1"),
               v2 = random_vec<double>(n * dv, 5, "v2");
    std::vector<double> got(n * dv), probs(s.B * H * N * N * N), got_np(n * dv);
    third_order_forward(got.data(), probs.data(), q.data(), k1.data(), k2.data(), v1.data(),
                        v2.data(), 0.8, s);
    third_order_forward(got_np.data(), static_cast<double*>(nullptr), q.data(), k1.data(),
                        k2.data(), v1.data(), v2.data(), 0.8, s);
    EXPECT_TRUE(same_bits(got, got_np)) << "with and without the probs cache";
    std::vector<double> want(n * dv, 0.0);
    auto at = [&](const std::vector<double>& t, int64_t b, int64_t i, int64_t h, int64_t d,
                  int64_t l) { return t[((b * N + i) * H + h) * d + l]; };
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        std::vector<double> sc(N * N * N, 0.0);
        auto masked = [&](int64_t i, int64_t j, int64_t k) {
          return excl && (j == i || k == i || j == k);
        };
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < N; ++j)
            for (int64_t k = 0; k < N; ++k) {
              if (masked(i, j, k)) continue;
              double acc = 0;
              for (int64_t l = 0; l < dk; ++l)
                acc += at(q, b, i, h, dk, l) * at(k1, b, j, h, dk, l) * at(k2, b, k, h, dk, l);
              sc[(i * N + j) * N + k] = 0.8 * acc;
            }
        quantize_fixed_point(sc.data(), N * N * N, s.score_bits);
        for (int64_t i = 0; i < N; ++i) {
          double mx = -std::numeric_limits<double>::infinity(), sum = 0;
          for (int64_t e = 0; e < N * N; ++e)
            if (!masked(i, e / N, e % N)) mx = std::max(mx, sc[i * N * N + e]);
          std::vector<double> p(N * N, 0.0);
          for (int64_t e = 0; e < N * N; ++e)
            if (!masked(i, e / N, e % N)) sum += (p[e] = std::exp(sc[i * N * N + e] - mx));
          for (int64_t e = 0; e < N * N; ++e)
            for (int64_t c = 0; c < dv; ++c)
              want[((b * N + i) * H + h) * dv + c] +=
                  p[e] / sum * at(v1, b, e / N, h, dv, c) * at(v2, b, e % N, h, dv, c);
        }
      }
    EXPECT_LT(max_abs_diff(got, want), 1e-12);
  }
}

// --------------------------------------------------------------- training and the trainer

// A net that records the mode of every forward (y = x·w, one parameter).
class ModeSpy : public Net<double> {
 public:
  ModeSpy() {
    params_.add("w", {1});
    params_.allocate();
  }
  void forward(const double* x, int64_t B, double* y) override {
    modes.push_back(training());
    x_ = x;
    B_ = B;
    for (int64_t i = 0; i < B; ++i) y[i] = params_.value(0)[0] * x[i];
  }
  void backward(const double* dy) override {
    for (int64_t i = 0; i < B_; ++i) params_.grad(0)[0] += dy[i] * x_[i];
  }
  void init(uint64_t) override {}
  std::vector<bool> modes;

 private:
  const double* x_ = nullptr;
  int64_t B_ = 0;
};

TEST(TrainerMode, StepsTrainAndValidationEvaluates) {
  ModeSpy net;
  TrainerConfig c;
  c.steps = 4;
  c.batch = 2;
  c.eval_every = 2;
  TrainSet<double> val;
  val.n = 3;
  val.x_size = val.y_size = 1;
  val.X = {1, 2, 3};
  val.Y = {2, 4, 6};
  const BatchSource<double> source = [](int64_t, int64_t batch, double* x, double* y) {
    for (int64_t i = 0; i < batch; ++i) x[i] = 1, y[i] = 2;
  };
  FitLog log;
  trainer_run<double>(net, c, source, val, log);
  // step 1, step 2, validation, step 3, step 4, validation.
  EXPECT_EQ(net.modes, (std::vector<bool>{true, true, false, true, true, false}));
  EXPECT_FALSE(net.training()) << "the trainer leaves the net in evaluation mode";
}

// Fresh qsa samples, N = 5, q = 1: the attention model trained with rounding in the loop.
TEST(NetPrecision, TrainingWithBitsInTheLoopLowersTheLoss) {
  Params task_params = task_default_params("qsa");
  task_params.set_text("N", "5");
  task_params.set_text("q", "1");
  task_params.set_text("d_out", "2");
  const auto task = task_make("qsa", task_params);
  ModelRecord r = model_record_make("attention", 5, task->shape());
  for (const auto& [k, v] : Sets{{"m", "8"},
                                 {"phi_width", "24"},
                                 {"bits", "6"},
                                 {"bits_scores", "true"},
                                 {"bits_in_training", "true"}})
    r.model_params.set_text(k, v);
  for (const auto& [k, v] : Sets{{"n", "0"},
                                 {"steps", "400"},
                                 {"batch", "32"},
                                 {"eval_every", "100"},
                                 {"val_n", "128"},
                                 {"lr", "3e-3"}})
    r.train_params.set_text(k, v);
  auto model = model_find("attention").make(
      ModelContext{r.model_params, r.train_params, task->shape(), r.seed, task.get(), 1000000000});
  FitLog log;
  model->fit(Batch{}, log);
  std::vector<double> val;
  for (const auto& p : log.points)
    if (p.series == "val_loss") val.push_back(p.value);
  ASSERT_EQ(val.size(), 4u);
  EXPECT_LT(val.back(), 0.7 * val.front()) << "first " << val.front() << " last " << val.back();
}

// ------------------------------------------------------------- user errors, checkpoints

TEST(NetPrecision, BadBitsAreUserErrorsNamingModelBits) {
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    for (const char* bad : {"1", "54", "-2"}) {
      try {
        Params p = neural_default_params(model);
        p.set_text("bits", bad);
        neural_net_make<float>(model, p, small_shape());
        ADD_FAILURE() << "bits = " << bad << " accepted";
      } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("model.bits"), std::string::npos) << e.what();
      }
    }
  }
  // The comparators have no precision key.
  EXPECT_THROW(neural_default_params("mlp").set_text("bits", "4"), UserError);
}

TEST(NetPrecision, ASavedModelKeepsItsBits) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_precision_" + std::to_string(getpid()));
  fs::create_directories(dir);
  Params task_params = task_default_params("qsa");
  task_params.set_text("N", "4");
  task_params.set_text("q", "1");
  task_params.set_text("d_out", "2");
  const auto task = task_make("qsa", task_params);
  const Batch train = task_generate(*task, 5, 0, 40), test = task_generate(*task, 5, 1000, 8);
  ModelRecord r = model_record_make("attention", 5, task->shape());
  r.model_params.set_text("m", "4");
  r.model_params.set_text("bits", "3");
  for (const auto& [k, v] :
       Sets{{"n", "40"}, {"steps", "5"}, {"batch", "16"}, {"dtype", "float64"}})
    r.train_params.set_text(k, v);
  auto model = model_make(r);
  FitLog log;
  model->fit(train, log);
  const std::string file = (dir / "att.safetensors").string();
  model_save(file, r, *model);
  const LoadedModel loaded = model_load(file);
  fs::remove_all(dir);
  EXPECT_EQ(loaded.record.model_params.get_int("bits"), 3);
  const auto rounded = loaded.model->predict(test);
  EXPECT_TRUE(same_bits(rounded, model->predict(test)));
  // The same weights without rounding predict differently: the loaded model does round.
  ModelRecord exact = loaded.record;
  exact.model_params.set_text("bits", "0");
  auto unrounded = model_make(exact);
  unrounded->load(model_tensors(loaded.record, *loaded.model));
  EXPECT_GT(max_abs_diff(unrounded->predict(test), rounded), 1e-6);
}

}  // namespace
}  // namespace attn
