// Tests for the query-key analysis (analysis/qk_*, io/image_write, `attnlab qk-stats`):
// statistics against their definitions, products against a naive triple loop, planted
// W_qᵀW_k = c·I + noise recovered (c* ≈ c, cosine ≈ 1), independent Gaussians giving
// cosine ≈ 0, the null model's norms and seeding, GPT-2 fused Conv1D weights split into
// the same A as separate BERT-style weights, layout detection and head counts, PNG bytes
// decoded with zlib, and the command's outputs and every user error.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/qk_layout.h"
#include "analysis/qk_report.h"
#include "analysis/qk_stats.h"
#include "cli_helpers.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/rng.h"
#include "front_option_dashed.h"
#include "io/image_write.h"
#include "io/safetensors.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

using Matrix = std::vector<double>;  // row-major

Matrix gaussian(int64_t rows, int64_t cols, uint64_t seed, const char* stream, double sd = 1.0) {
  Matrix m(static_cast<size_t>(rows * cols));
  Rng rng(seed, stream, 0);
  rng_gaussian(rng, m.data(), rows * cols);
  for (double& x : m) x *= sd;
  return m;
}

// A random D × D orthogonal matrix (modified Gram-Schmidt on the rows of a Gaussian).
Matrix orthogonal(int64_t D, uint64_t seed) {
  Matrix q = gaussian(D, D, seed, "test.orthogonal");
  for (int64_t i = 0; i < D; ++i) {
    double* r = &q[static_cast<size_t>(i * D)];
    for (int64_t j = 0; j < i; ++j) {
      const double* p = &q[static_cast<size_t>(j * D)];
      double dot = 0.0;
      for (int64_t k = 0; k < D; ++k) dot += r[k] * p[k];
      for (int64_t k = 0; k < D; ++k) r[k] -= dot * p[k];
    }
    double norm = 0.0;
    for (int64_t k = 0; k < D; ++k) norm += r[k] * r[k];
    for (int64_t k = 0; k < D; ++k) r[k] /= std::sqrt(norm);
  }
  return q;
}

// Reference: A = Σ_{r in rows [r0, r1)} W_q[r, :]ᵀ W_k[r, :], by the definition.
Matrix product_reference(const QkLayerWeights& w, int64_t r0, int64_t r1) {
  Matrix A(static_cast<size_t>(w.in * w.in), 0.0);
  for (int64_t i = 0; i < w.in; ++i)
    for (int64_t j = 0; j < w.in; ++j)
      for (int64_t r = r0; r < r1; ++r)
        A[static_cast<size_t>(i * w.in + j)] += w.wq[r * w.in + i] * w.wk[r * w.in + j];
  return A;
}

// Reference statistics, each computed from its definition.
QkMatrixStats stats_reference(const Matrix& A, int64_t D) {
  auto at = [&](int64_t i, int64_t j) { return A[static_cast<size_t>(i * D + j)]; };
  double tr = 0, fro = 0, off = 0, pos = 0, absdiag = 0;
  for (int64_t i = 0; i < D; ++i) {
    tr += at(i, i);
    pos += at(i, i) > 0;
    absdiag += std::fabs(at(i, i));
    for (int64_t j = 0; j < D; ++j) {
      fro += at(i, j) * at(i, j);
      if (i != j) off += std::fabs(at(i, j));
    }
  }
  fro = std::sqrt(fro);
  const double c = tr / D;
  double res = 0;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) res += std::pow(at(i, j) - (i == j ? c : 0.0), 2);
  QkMatrixStats s;
  s.c_star = c;
  s.identity_cosine = tr / (std::sqrt(double(D)) * fro);
  s.diag_ratio = (tr / D) / (off / (D * (D - 1)));
  s.abs_diag_ratio = (absdiag / D) / (off / (D * (D - 1)));
  s.positive_diag_fraction = pos / D;
  s.residual = std::sqrt(res) / fro;
  s.frobenius = fro;
  return s;
}

void expect_stats_near(const QkMatrixStats& a, const QkMatrixStats& b, double tol) {
  auto rel = [&](double x, double y) {
    return std::fabs(x - y) <= tol * std::max(1.0, std::fabs(y));
  };
  EXPECT_TRUE(rel(a.c_star, b.c_star)) << a.c_star << " vs " << b.c_star;
  EXPECT_TRUE(rel(a.identity_cosine, b.identity_cosine))
      << a.identity_cosine << " vs " << b.identity_cosine;
  EXPECT_TRUE(rel(a.diag_ratio, b.diag_ratio)) << a.diag_ratio << " vs " << b.diag_ratio;
  EXPECT_TRUE(rel(a.abs_diag_ratio, b.abs_diag_ratio))
      << a.abs_diag_ratio << " vs " << b.abs_diag_ratio;
  EXPECT_EQ(a.positive_diag_fraction, b.positive_diag_fraction);
  EXPECT_TRUE(rel(a.residual, b.residual)) << a.residual << " vs " << b.residual;
  EXPECT_TRUE(rel(a.frobenius, b.frobenius)) << a.frobenius << " vs " << b.frobenius;
}

// Planted layer: W_q = s·Q (Q orthogonal), W_k = (c/s)·Q + noise, so W_qᵀW_k = c·I + s·Qᵀ·noise.
QkLayerWeights planted(int64_t D, double c, double noise, uint64_t seed, int64_t layer = 0) {
  QkLayerWeights w;
  w.layer = layer;
  w.out = w.in = D;
  const Matrix Q = orthogonal(D, seed);
  const Matrix G = gaussian(D, D, seed, "test.noise", noise);
  const double s = 1.7;
  for (size_t i = 0; i < Q.size(); ++i) {
    w.wq.push_back(s * Q[i]);
    w.wk.push_back(c / s * Q[i] + G[i]);
  }
  return w;
}

// ---- statistics and products ----

TEST(QkStats, MatrixStatsMatchTheDefinitions) {
  for (int64_t D : {2, 3, 9, 40}) {
    Matrix A = gaussian(D, D, static_cast<uint64_t>(D), "test.stats");
    for (int64_t i = 0; i < D; ++i) A[static_cast<size_t>(i * D + i)] += 0.7;
    expect_stats_near(qk_matrix_stats(A.data(), D), stats_reference(A, D), 1e-12);
  }
}

TEST(QkStats, MatrixStatsEdgeCases) {
  const int64_t D = 5;
  Matrix I3(D * D, 0.0), Z(D * D, 0.0), N2(D * D, 0.0);
  for (int64_t i = 0; i < D; ++i) {
    I3[i * D + i] = 3.0;
    N2[i * D + i] = -2.0;
  }
  const QkMatrixStats a = qk_matrix_stats(I3.data(), D);
  EXPECT_EQ(a.c_star, 3.0);
  EXPECT_DOUBLE_EQ(a.identity_cosine, 1.0);
  EXPECT_EQ(a.residual, 0.0);
  EXPECT_EQ(a.positive_diag_fraction, 1.0);
  EXPECT_EQ(a.diag_ratio, std::numeric_limits<double>::infinity());
  const QkMatrixStats n = qk_matrix_stats(N2.data(), D);
  EXPECT_DOUBLE_EQ(n.identity_cosine, -1.0);
  EXPECT_EQ(n.positive_diag_fraction, 0.0);
  EXPECT_EQ(n.diag_ratio, -std::numeric_limits<double>::infinity());
  const QkMatrixStats z = qk_matrix_stats(Z.data(), D);
  EXPECT_TRUE(std::isnan(z.identity_cosine) && std::isnan(z.residual) && std::isnan(z.diag_ratio));
  EXPECT_EQ(z.c_star, 0.0);
  // cos² + residual² = 1 (residual is the part of A orthogonal to I).
  const Matrix G = gaussian(D, D, 3, "test.pyth");
  const QkMatrixStats g = qk_matrix_stats(G.data(), D);
  EXPECT_NEAR(g.identity_cosine * g.identity_cosine + g.residual * g.residual, 1.0, 1e-12);
}

TEST(QkStats, ProductsMatchTheNaiveReference) {
  QkLayerWeights w;
  w.out = 6;  // 3 heads of 2
  w.in = 5;
  w.wq = gaussian(6, 5, 1, "test.q");
  w.wk = gaussian(6, 5, 1, "test.k");
  Matrix A(25);
  for (int64_t h = 0; h < 3; ++h) {
    qk_head_product(w, h, 2, A.data());
    const Matrix ref = product_reference(w, 2 * h, 2 * h + 2);
    for (size_t i = 0; i < A.size(); ++i) EXPECT_NEAR(A[i], ref[i], 1e-13);
  }
  const QkLayerResult r = qk_layer_analyze(w, {3, 0, 5, {1}});
  expect_stats_near(r.stats, stats_reference(product_reference(w, 0, 6), 5), 1e-12);
  for (int64_t h = 0; h < 3; ++h)
    expect_stats_near(r.head_results[h].stats,
                      stats_reference(product_reference(w, 2 * h, 2 * h + 2), 5), 1e-12);
  // Kept corners are the products' top-left blocks.
  EXPECT_EQ(r.block, 5);
  const Matrix ref_layer = product_reference(w, 0, 6), ref_head = product_reference(w, 2, 4);
  for (size_t i = 0; i < 25; ++i) {
    EXPECT_NEAR(r.layer_block[i], ref_layer[i], 1e-13);
    EXPECT_NEAR(r.head_blocks.at(1)[i], ref_head[i], 1e-13);
  }
  EXPECT_EQ(r.head_blocks.count(0), 0u);
}

TEST(QkStats, PlantedIdentityIsRecovered) {
  const int64_t D = 64, H = 4;
  const double c = 2.5;
  // Noise sd 0.004 per entry: ‖noise part‖_F ≈ 1.7·0.004·64 ≈ 0.44 against ‖cI‖_F = 20.
  const QkLayerResult r = qk_layer_analyze(planted(D, c, 0.004, 11), {H, 5, 0, {}});
  EXPECT_NEAR(r.stats.c_star, c, 0.01 * c);
  EXPECT_GT(r.stats.identity_cosine, 0.999);
  EXPECT_LT(r.stats.residual, 0.05);
  EXPECT_EQ(r.stats.positive_diag_fraction, 1.0);
  EXPECT_GT(r.stats.diag_ratio, 100.0);
  // A head of a rotation-aligned model is c times a rank-hs projector: cos = √(hs/D) = 0.5.
  double c_sum = 0.0;
  for (const auto& h : r.head_results) {
    EXPECT_NEAR(h.stats.identity_cosine, 0.5, 0.02);
    c_sum += h.stats.c_star;
  }
  EXPECT_NEAR(c_sum, r.stats.c_star, 1e-9);  // tr is linear: Σ_h c*_h = c*
  // The null model of the same norms shows nothing of it.
  EXPECT_LT(std::fabs(r.null_stats.identity_cosine), 6.0 / D);  // sd ≈ 1/D
  EXPECT_GT(r.null_stats.residual, 0.9);
  EXPECT_NEAR(r.null_stats.frobenius, r.stats.frobenius, 0.5 * r.stats.frobenius);
  // Rescaling W_q by s and W_k by 1/s changes nothing.
  QkLayerWeights w = planted(D, c, 0.004, 11);
  for (double& x : w.wq) x *= 4.0;
  for (double& x : w.wk) x /= 4.0;
  EXPECT_NEAR(qk_layer_analyze(w, {H, 5, 0, {}}).stats.c_star, r.stats.c_star, 1e-12);
}

TEST(QkStats, IndependentGaussiansHaveCosineNearZero) {
  const int64_t D = 192, H = 8;
  double mean_cos = 0.0;
  for (uint64_t seed = 0; seed < 2; ++seed) {
    QkLayerWeights w;
    w.out = w.in = D;
    w.wq = gaussian(D, D, seed, "test.gq", 0.05);
    w.wk = gaussian(D, D, seed, "test.gk", 0.05);
    const QkLayerResult r = qk_layer_analyze(w, {H, seed, 0, {}});
    // For independent weights tr(A) has sd σ²√(out·D) and ‖A‖_F ≈ σ²D√out, so cos(A, I)
    // has sd ≈ 1/D (0.005 here): |cos| < 0.03 is a 6σ bound.
    EXPECT_LT(std::fabs(r.stats.identity_cosine), 0.03);
    EXPECT_LT(std::fabs(r.stats.diag_ratio), 0.5);  // sd ≈ 1.25/√D = 0.09
    EXPECT_NEAR(r.stats.abs_diag_ratio, 1.0, 0.1);
    EXPECT_GT(r.stats.residual, 0.95);
    EXPECT_NEAR(r.stats.positive_diag_fraction, 0.5, 0.15);
    EXPECT_NEAR(r.null_stats.abs_diag_ratio, 1.0, 0.1);
    EXPECT_LT(std::fabs(r.null_stats.identity_cosine), 0.03);
    for (const auto& h : r.head_results) EXPECT_LT(std::fabs(h.stats.identity_cosine), 0.03);
    mean_cos += r.stats.identity_cosine / 2;
  }
  EXPECT_LT(std::fabs(mean_cos), 0.02);
}

TEST(QkStats, NullModelMatchesNormsAndIsSeeded) {
  QkLayerWeights w = planted(16, 1.0, 0.1, 3, 7);
  w.out = 16;
  for (int64_t i = 0; i < 4 * 16; ++i) w.wq[i] *= 10.0;  // head 0 of 4 much larger
  const QkLayerWeights z = qk_null_weights(w, 4, 9);
  for (int64_t h = 0; h < 4; ++h) {
    double real_q = 0, null_q = 0, real_k = 0, null_k = 0;
    for (int64_t i = h * 64; i < (h + 1) * 64; ++i) {
      real_q += w.wq[i] * w.wq[i];
      null_q += z.wq[i] * z.wq[i];
      real_k += w.wk[i] * w.wk[i];
      null_k += z.wk[i] * z.wk[i];
    }
    EXPECT_NEAR(null_q, real_q, 1e-10 * real_q);
    EXPECT_NEAR(null_k, real_k, 1e-10 * real_k);
  }
  EXPECT_EQ(qk_null_weights(w, 4, 9).wq, z.wq);  // same seed, same draws
  EXPECT_NE(qk_null_weights(w, 4, 10).wq, z.wq);
  QkLayerWeights other = w;
  other.layer = 8;
  EXPECT_NE(qk_null_weights(other, 4, 9).wk, z.wk);  // each layer its own draws
}

// ---- layouts ----

class QkStatsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_qk_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// GPT-2 Conv1D: q = h W[:, 0:D], so the loader must give W_q = W[:, 0:D]ᵀ, and the
// bilinear form is A[i][j] = Σ_o W[i][o] W[j][D + o] — checked from the fused matrix
// directly and against the same weights stored BERT-style.
TEST_F(QkStatsFiles, Gpt2FusedLayoutSplitsCorrectly) {
  const int64_t D = 12, H = 3;
  const Matrix wq = gaussian(D, D, 5, "test.q"), wk = gaussian(D, D, 5, "test.k"),
               wv = gaussian(D, D, 5, "test.v");
  Matrix fused(static_cast<size_t>(D * 3 * D));
  for (int64_t i = 0; i < D; ++i)
    for (int64_t o = 0; o < D; ++o) {
      fused[i * 3 * D + o] = wq[o * D + i];
      fused[i * 3 * D + D + o] = wk[o * D + i];
      fused[i * 3 * D + 2 * D + o] = wv[o * D + i];
    }
  safetensors_write(
      path("gpt2.safetensors"),
      {{"transformer.h.0.attn.c_attn.weight", SafetensorsDType::F64, {D, 3 * D}, fused.data()},
       {"transformer.h.0.attn.c_proj.weight", SafetensorsDType::F64, {D, D}, wv.data()},
       {"transformer.wte.weight", SafetensorsDType::F64, {D, D}, wv.data()}});
  safetensors_write(
      path("bert.safetensors"),
      {{"encoder.layer.0.attention.self.query.weight", SafetensorsDType::F64, {D, D}, wq.data()},
       {"encoder.layer.0.attention.self.key.weight", SafetensorsDType::F64, {D, D}, wk.data()}});
  SafetensorsFile g(path("gpt2.safetensors")), b(path("bert.safetensors"));
  std::vector<std::string> gnames, bnames;
  for (const auto& e : g.entries()) gnames.push_back(e.name);
  for (const auto& e : b.entries()) bnames.push_back(e.name);
  const QkLayout gl = qk_layout_detect(gnames, {}, "gpt2"),
                 bl = qk_layout_detect(bnames, {}, "bert");
  EXPECT_EQ(gl.name, "gpt2");
  EXPECT_EQ(gl.prefix, "transformer.");
  EXPECT_EQ(bl.name, "bert");
  const QkLayerWeights gw = qk_layer_load(g, gl, gl.layers[0]),
                       bw = qk_layer_load(b, bl, bl.layers[0]);
  EXPECT_EQ(gw.wq, wq);
  EXPECT_EQ(gw.wk, wk);
  EXPECT_EQ(bw.wq, wq);
  // Head 1 from the fused matrix by the Conv1D formula.
  Matrix A(static_cast<size_t>(D * D));
  qk_head_product(gw, 1, D / H, A.data());
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) {
      double ref = 0.0;
      for (int64_t o = D / H; o < 2 * D / H; ++o)
        ref += fused[i * 3 * D + o] * fused[j * 3 * D + D + o];
      EXPECT_NEAR(A[i * D + j], ref, 1e-12);
    }
  const QkLayerResult rg = qk_layer_analyze(gw, {H, 1, 0, {}}),
                      rb = qk_layer_analyze(bw, {H, 1, 0, {}});
  expect_stats_near(rg.stats, rb.stats, 0.0);
  expect_stats_near(rg.null_stats, rb.null_stats, 0.0);
  for (int64_t h = 0; h < H; ++h)
    expect_stats_near(rg.head_results[h].stats, rb.head_results[h].stats, 0.0);
  // A wrong shape is refused.
  safetensors_write(path("bad.safetensors"),
                    {{"h.0.attn.c_attn.weight", SafetensorsDType::F32, {D, 2 * D}, fused.data()}});
  SafetensorsFile bad(path("bad.safetensors"));
  const QkLayout badl = qk_layout_detect({"h.0.attn.c_attn.weight"}, {}, "bad");
  EXPECT_THROW(qk_layer_shape(bad, badl, badl.layers[0]), UserError);
}

TEST(QkStats, PatternMatching) {
  int64_t layer = -1;
  std::string prefix;
  const std::string p = "encoder.layer.{l}.attention.self.query.weight";
  EXPECT_TRUE(qk_pattern_match(p, "encoder.layer.11.attention.self.query.weight", &layer, &prefix));
  EXPECT_EQ(layer, 11);
  EXPECT_EQ(prefix, "");
  EXPECT_TRUE(
      qk_pattern_match(p, "bert.encoder.layer.0.attention.self.query.weight", &layer, &prefix));
  EXPECT_EQ(layer, 0);
  EXPECT_EQ(prefix, "bert.");
  EXPECT_FALSE(
      qk_pattern_match(p, "xencoder.layer.0.attention.self.query.weight", &layer, &prefix));
  EXPECT_FALSE(
      qk_pattern_match(p, "encoder.layer.01.attention.self.query.weight", &layer, &prefix));
  EXPECT_FALSE(qk_pattern_match(p, "encoder.layer..attention.self.query.weight", &layer, &prefix));
  EXPECT_FALSE(qk_pattern_match(p, "encoder.layer.0.attention.self.query.bias", &layer, &prefix));
  EXPECT_TRUE(qk_pattern_match("h.{l}.attn.c_attn.weight", "transformer.h.23.attn.c_attn.weight",
                               &layer, &prefix));
  EXPECT_EQ(layer, 23);
  EXPECT_FALSE(qk_pattern_match("h.{l}.attn.c_attn.weight", "transformer.h.23.attn.c_attn.bias",
                                &layer, &prefix));
  EXPECT_TRUE(qk_pattern_match("{l}.q", "blocks.4.q", &layer, &prefix));
  EXPECT_EQ(prefix, "blocks.");
}

TEST(QkStats, LayoutDetection) {
  const test::DashedOptionSpellings cli;  // messages as the CLI words them
  auto names_bert = [](const std::string& prefix, int layers) {
    std::vector<std::string> n = {prefix + "embeddings.word_embeddings.weight"};
    for (int l = 0; l < layers; ++l) {
      for (const char* w : {"query", "key", "value"})
        n.push_back(prefix + "encoder.layer." + std::to_string(l) + ".attention.self." + w +
                    ".weight");
    }
    return n;
  };
  QkLayout l = qk_layout_detect(names_bert("bert.", 12), {}, "f");
  EXPECT_EQ(l.name, "bert");
  EXPECT_EQ(l.prefix, "bert.");
  ASSERT_EQ(l.layers.size(), 12u);
  EXPECT_EQ(l.layers[10].layer, 10);  // numeric, not lexicographic, order
  EXPECT_EQ(l.layers[10].key_name, "bert.encoder.layer.10.attention.self.key.weight");

  auto error_of = [](const std::vector<std::string>& names, const QkLayoutOptions& o) {
    try {
      qk_layout_detect(names, o, "model.safetensors");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Nothing matches: name a few tensors (attention-looking first) and suggest options.
  const std::string none =
      error_of({"a.weight", "model.layers.0.self_attn.q_proj.weight", "b"}, {});
  EXPECT_NE(none.find("model.layers.0.self_attn.q_proj.weight"), std::string::npos) << none;
  EXPECT_NE(none.find("--layout"), std::string::npos) << none;
  EXPECT_NE(none.find("--query-pattern"), std::string::npos) << none;
  // Custom patterns find it.
  l = qk_layout_detect(
      {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight"},
      {"auto", "layers.{l}.self_attn.q_proj.weight", "layers.{l}.self_attn.k_proj.weight"}, "f");
  EXPECT_EQ(l.name, "custom");
  EXPECT_EQ(l.prefix, "model.");
  // Errors.
  std::vector<std::string> both = names_bert("", 1);
  both.push_back("h.0.attn.c_attn.weight");
  EXPECT_NE(error_of(both, {}).find("both"), std::string::npos);
  EXPECT_EQ(qk_layout_detect(both, {"gpt2", "", ""}, "f").name, "gpt2");
  std::vector<std::string> two = names_bert("bert.", 1), teacher = names_bert("teacher.", 1);
  two.insert(two.end(), teacher.begin(), teacher.end());
  EXPECT_NE(error_of(two, {}).find("several prefixes"), std::string::npos);
  EXPECT_NE(error_of({"encoder.layer.0.attention.self.query.weight"}, {}).find("no key weight"),
            std::string::npos);
  EXPECT_NE(error_of(names_bert("", 1), {"custom", "", ""}).find("--query-pattern"),
            std::string::npos);
  EXPECT_NE(error_of(names_bert("", 1), {"auto", "layer.q", "layer.k"}).find("{l}"),
            std::string::npos);
  EXPECT_NE(error_of(names_bert("", 1), {"gpt2", "", "x.{l}"}).find("--key-pattern"),
            std::string::npos);
  EXPECT_NE(error_of(names_bert("", 1), {"gpt2", "", ""}).find("gpt2 pattern"), std::string::npos);
}

TEST(QkStats, HeadCounts) {
  const test::DashedOptionSpellings cli;  // messages as the CLI words them
  EXPECT_EQ(qk_heads_resolve(768, 12, 0, {}).head_size, 64);
  EXPECT_EQ(qk_heads_resolve(768, 0, 96, {}).heads, 8);
  EXPECT_EQ(qk_heads_resolve(768, 12, 64, {}).heads, 12);
  const QkHeads m = qk_heads_resolve(768, 0, 0, {{"n_head", "12"}});
  EXPECT_EQ(m.heads, 12);
  EXPECT_EQ(m.source, "__metadata__.n_head");
  EXPECT_EQ(qk_heads_resolve(768, 8, 0, {{"n_head", "12"}}).heads, 8);  // the option wins
  auto error_of = [](int64_t out, int64_t h, int64_t s, std::map<std::string, std::string> meta) {
    try {
      qk_heads_resolve(out, h, s, meta);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string none = error_of(768, 0, 0, {});
  EXPECT_NE(none.find("--heads"), std::string::npos) << none;
  EXPECT_NE(none.find("cannot be read from the weights"), std::string::npos) << none;
  EXPECT_NE(error_of(768, 7, 0, {}).find("does not divide"), std::string::npos);
  EXPECT_NE(error_of(768, 0, 100, {}).find("does not divide"), std::string::npos);
  EXPECT_NE(error_of(768, 12, 32, {}).find("is not 768"), std::string::npos);
  EXPECT_NE(error_of(768, 0, 0, {{"num_attention_heads", "twelve"}}).find("not a head count"),
            std::string::npos);
  EXPECT_NE(error_of(768, -1, 0, {}).find("at least 1"), std::string::npos);
  EXPECT_EQ(qk_heads_resolve(768, 0, 96, {}).source, "--head-size");  // qk_stats.json's
  front_option_spellings_set(front_option_library_names());  // C++ callers: the field names
  EXPECT_EQ(error_of(768, -1, 0, {}).rfind("heads -1 must be at least 1", 0), 0u);
  EXPECT_EQ(qk_heads_resolve(768, 0, 96, {}).source, "head_size");
}

TEST(QkStats, ListParse) {
  EXPECT_EQ(qk_list_parse("0,2,5-7", "--layers"), (std::vector<int64_t>{0, 2, 5, 6, 7}));
  EXPECT_EQ(qk_list_parse("3,1,3", "--layers"), (std::vector<int64_t>{1, 3}));
  for (const char* bad : {"", "a", "1,,2", "5-3", "-1", "1-", "1.5"})
    EXPECT_THROW(qk_list_parse(bad, "--layers"), UserError) << bad;
}

// ---- images ----

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

TEST(QkStats, PngDecodesToThePixels) {
  const int64_t W = 3, Hh = 2;
  std::vector<uint8_t> rgb(W * Hh * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(i * 13);
  const std::string png = png_encode_rgb(W, Hh, rgb);
  ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  size_t at = 8;
  std::string idat, types;
  while (at < png.size()) {
    const uint32_t len = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(png.data() + at + 4), static_cast<uInt>(len + 4)));
    EXPECT_EQ(be32(png, at + 8 + len), crc) << type;
    if (type == "IHDR") {
      EXPECT_EQ(be32(png, at + 8), 3u);
      EXPECT_EQ(be32(png, at + 12), 2u);
      EXPECT_EQ(png.substr(at + 16, 5), std::string("\x08\x02\x00\x00\x00", 5));
    }
    if (type == "IDAT") idat += png.substr(at + 8, len);
    types += type;
    at += 12 + len;
  }
  EXPECT_EQ(types, "IHDRIDATIEND");
  std::string raw((W * 3 + 1) * Hh, '\0');
  uLongf raw_len = raw.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_len,
                       reinterpret_cast<const Bytef*>(idat.data()), idat.size()),
            Z_OK);
  ASSERT_EQ(raw_len, raw.size());
  for (int64_t y = 0; y < Hh; ++y) {
    EXPECT_EQ(raw[y * (W * 3 + 1)], '\0');
    for (int64_t k = 0; k < W * 3; ++k)
      EXPECT_EQ(uint8_t(raw[y * (W * 3 + 1) + 1 + k]), rgb[y * W * 3 + k]);
  }
}

TEST_F(QkStatsFiles, HeatMapColoursAreDivergingAtZero) {
  const auto white = colour_diverging(0.0), blue = colour_diverging(-1.0),
             red = colour_diverging(1.0);
  EXPECT_EQ(white, (std::array<uint8_t, 3>{247, 247, 247}));
  EXPECT_GT(blue[2], blue[0]);
  EXPECT_GT(red[0], red[2]);
  EXPECT_EQ(colour_diverging(5.0), red);  // clamped
  EXPECT_EQ(colour_diverging(std::nan("")), (std::array<uint8_t, 3>{160, 160, 160}));
  for (double t = 0.0; t < 1.0; t += 0.05)
    EXPECT_GE(colour_diverging(t)[0], colour_diverging(t + 0.05)[0] - 40);
  const Matrix m = {-2.0, 0.0, 1.0, 2.0, std::nan(""), 0.5};
  EXPECT_EQ(heatmap_scale(m.data(), 6), 2.0);
  heatmap_write_svg(path("h.svg"), m.data(), 2, 3, "title <A>");
  const std::string svg = test::file_read(path("h.svg"));
  size_t rects = 0;
  for (size_t p = svg.find("<rect x="); p != std::string::npos; p = svg.find("<rect x=", p + 1))
    ++rects;
  EXPECT_EQ(rects, 6u);
  EXPECT_NE(svg.find("title &lt;A&gt;"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#053061\""), std::string::npos);  // −2 is the darkest blue
  heatmap_write_png(path("h.png"), m.data(), 2, 3, 4);
  EXPECT_EQ(test::file_read(path("h.png")).substr(1, 3), "PNG");
}

// ---- the command ----

class QkStatsCli : public QkStatsFiles {
 protected:
  // A 2-layer BERT-style file (prefix "bert.") with W_qᵀW_k = c_l·I + noise, c = 0.5, 2.
  std::string planted_file(SafetensorsDType dtype, const std::string& name = "m.safetensors") {
    const int64_t D = 32;
    std::vector<QkLayerWeights> layers = {planted(D, 0.5, 0.001, 1, 0),
                                          planted(D, 2.0, 0.001, 2, 1)};
    std::vector<SafetensorsView> views;
    for (const auto& w : layers) {
      const std::string base = "bert.encoder.layer." + std::to_string(w.layer) + ".attention.self.";
      views.push_back({base + "query.weight", dtype, {D, D}, w.wq.data()});
      views.push_back({base + "key.weight", dtype, {D, D}, w.wk.data()});
      views.push_back({base + "value.weight", dtype, {D, D}, w.wk.data()});
    }
    safetensors_write(path(name), views);
    return path(name);
  }

  void expect_user_error(const std::string& args, const std::string& needle) {
    const test::CliResult r = test::cli_run("qk-stats " + args + " --out " + path("out"));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "not one line: " << r.out;
    EXPECT_FALSE(fs::exists(path("out"))) << args << " wrote output";
  }
};

TEST_F(QkStatsCli, PlantedBertFileGivesCStarAndAllOutputs) {
  const std::string file = planted_file(SafetensorsDType::F32);
  const test::CliResult r = test::cli_run(
      "qk-stats " + file + " --heads 4 --heatmap-heads 0,3 --heatmap-block 16 --json --out " +
      path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layout"], "bert");
  EXPECT_EQ(j["prefix"], "bert.");
  EXPECT_EQ(j["D"], 32);
  EXPECT_EQ(j["num_heads"], 4);
  EXPECT_EQ(j["head_size"], 8);
  ASSERT_EQ(j["layers"].size(), 2u);
  ASSERT_EQ(j["heads"].size(), 8u);
  EXPECT_NEAR(j["layers"][0]["c_star"].get<double>(), 0.5, 0.005);
  EXPECT_NEAR(j["layers"][1]["c_star"].get<double>(), 2.0, 0.02);
  for (const auto& l : j["layers"]) {
    EXPECT_GT(l["identity_cosine"].get<double>(), 0.99);
    EXPECT_EQ(l["positive_diag_fraction"].get<double>(), 1.0);
    EXPECT_LT(std::fabs(l["null_identity_cosine"].get<double>()), 0.2);  // sd ≈ 1/D = 0.03
    for (const char* key :
         {"diag_ratio", "residual", "null_diag_ratio", "null_abs_diag_ratio", "null_residual"})
      EXPECT_TRUE(l.contains(key)) << key;
  }
  EXPECT_EQ(j["heads"][5]["layer"], 1);
  EXPECT_EQ(j["heads"][5]["head"], 1);
  EXPECT_NEAR(j["heads"][5]["identity_cosine"].get<double>(), 0.5, 0.02);  // √(8/32)
  // Files: the JSON is the one printed; CSV has a header, 2 layer rows and 8 head rows.
  EXPECT_EQ(test::file_read(path("out/qk_stats.json")), r.out);
  const std::string csv = test::file_read(path("out/qk_stats.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 11);
  EXPECT_EQ(csv.rfind("scope,layer,head,c_star,identity_cosine,diag_ratio", 0), 0u);
  for (const char* f : {"layer0.png", "layer0.svg", "layer1.png", "layer0_head0.png",
                        "layer0_head3.svg", "layer1_head3.png"})
    EXPECT_TRUE(fs::exists(path(std::string("out/heatmaps/") + f))) << f;
  EXPECT_FALSE(fs::exists(path("out/heatmaps/layer0_head1.png")));
  // The table names the columns and the c* values.
  const test::CliResult t = test::cli_run("qk-stats " + file + " --heads 4 --layers 1");
  ASSERT_EQ(t.exit_code, 0) << t.out;
  EXPECT_NE(t.out.find("cos(A,I)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("null cos"), std::string::npos) << t.out;
  const size_t row = t.out.find("\n    1 ");
  ASSERT_NE(row, std::string::npos) << t.out;
  EXPECT_NEAR(std::stod(t.out.substr(row + 7, 12)), 2.0, 0.01) << t.out;
  EXPECT_EQ(t.out.find("\n    0 "), std::string::npos) << t.out;  // --layers 1 only
}

TEST_F(QkStatsCli, HalfPrecisionFilesAndThreadsGiveTheSameAnswer) {
  const std::string f16 = planted_file(SafetensorsDType::F16, "f16.safetensors");
  const std::string bf16 = planted_file(SafetensorsDType::BF16, "bf16.safetensors");
  const test::CliResult a = test::cli_run("qk-stats " + f16 + " --heads 4 --json --threads 1");
  const test::CliResult b = test::cli_run("qk-stats " + f16 + " --heads 4 --json --threads 2");
  const test::CliResult c = test::cli_run("qk-stats " + bf16 + " --head-size 8 --json");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_EQ(a.out.substr(a.out.find("\"D\"")), b.out.substr(b.out.find("\"D\"")));
  const auto ja = nlohmann::json::parse(a.out), jc = nlohmann::json::parse(c.out);
  EXPECT_NEAR(ja["layers"][1]["c_star"].get<double>(), 2.0, 0.02);
  EXPECT_NEAR(jc["layers"][1]["c_star"].get<double>(), 2.0, 0.04);  // bf16 keeps 8 bits
  EXPECT_EQ(jc["heads_source"], "--head-size");
}

TEST_F(QkStatsCli, Gpt2FileWithHeadsInMetadata) {
  const int64_t D = 24;
  std::vector<Matrix> fused;
  std::vector<SafetensorsView> views;
  for (int l = 0; l < 3; ++l) fused.push_back(gaussian(D, 3 * D, l, "test.fused"));
  for (int l = 0; l < 3; ++l)
    views.push_back({"h." + std::to_string(l) + ".attn.c_attn.weight",
                     SafetensorsDType::F32,
                     {D, 3 * D},
                     fused[l].data()});
  safetensors_write(path("gpt2.safetensors"), views, {{"n_head", "6"}});
  const test::CliResult r =
      test::cli_run("qk-stats " + path("gpt2.safetensors") + " --json --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layout"], "gpt2");
  EXPECT_EQ(j["num_heads"], 6);
  EXPECT_EQ(j["heads_source"], "__metadata__.n_head");
  EXPECT_EQ(j["seed"], 3);
  EXPECT_EQ(j["heads"].size(), 18u);
}

// Each kind of failure of the command (file, layout, heads, options, output) once; the
// library tests above cover the other messages of each kind.
TEST_F(QkStatsCli, UserErrorsAreOneLineAndWriteNothing) {
  const std::string file = planted_file(SafetensorsDType::F32);
  expect_user_error(path("missing.safetensors") + " --heads 4", "no such file");
  std::string bytes = test::file_read(file);
  test::file_write(path("cut.safetensors"), bytes.substr(0, bytes.size() / 2));
  expect_user_error(path("cut.safetensors") + " --heads 4", "truncated");
  const std::vector<double> v(16, 1.0);
  safetensors_write(
      path("other.safetensors"),
      {{"model.layers.0.self_attn.q_proj.weight", SafetensorsDType::F32, {4, 4}, v.data()}});
  expect_user_error(path("other.safetensors") + " --heads 4",
                    "tensors include model.layers.0.self_attn.q_proj.weight");
  expect_user_error(file, "--heads H");
  expect_user_error(file + " --heads 4 --layers 0,7", "layer 7 is not in");
  expect_user_error(file + " --heads 4 --layout custom", "--query-pattern");
  expect_user_error(file + " --heads 4 --heatmap-heads 4", "head 4 does not exist");
  expect_user_error(file + " --heads 4 --heatmap-layers 3", "layer 3 is not analysed");
  expect_user_error(file + " --heads 4 --layout nonsense", "--layout");
  // --out naming a file.
  test::file_write(path("plain"), "x");
  const test::CliResult r = test::cli_run("qk-stats " + file + " --heads 4 --out " + path("plain"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("not a directory"), std::string::npos) << r.out;
  EXPECT_EQ(test::file_read(path("plain")), "x");
}

}  // namespace
}  // namespace attn
