// The qk_code_identity probe (analysis/probe_qk_code_identity.h): each head's code block B_h
// against the model's own attention (a mixed finite difference of its log-probabilities in a
// query code and a key code is temperature × B_h, exactly: the scores are bilinear in the tokens);
// the probe's cosines against the block built entry by entry from the saved tensors; a planted
// identity gives cosine 1 and a planted diagonal its closed form; a non-linear φ logs applies = 0;
// other tasks and models are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "analysis/probe_qk_code_identity.h"
#include "analysis/qk_stats.h"
#include "core/error.h"
#include "models/model_io.h"
#include "probe_test_helpers.h"
#include "tasks/task.h"

namespace attn {
namespace {

constexpr int64_t kD = 2, kCode = 4;  // token_selection's d and code_dim here

Params task_params() {
  Params p = task_default_params("token_selection");
  p.set_text("N", "5");
  p.set_text("d", std::to_string(kD));
  p.set_text("code_dim", std::to_string(kCode));
  return p;
}

using Fitted = test::FittedModel;

// attention with `sets` fitted on token_selection (N = 5, d = 2, code_dim = 4).
Fitted fitted(const std::vector<std::string>& sets) {
  return test::fit_for_probe("token_selection", task_params(), "attention", sets);
}

std::map<std::string, double> probe_scalars(const Fitted& f) {
  FitLog log;
  probe_qk_code_identity(
      ProbeInput{*f.model, f.record.model, f.record.model_params, task_params(), f.test}, log);
  return {log.scalars.begin(), log.scalars.end()};
}

ModelTensors saved_of(const Fitted& f) {
  ModelTensors t;
  t.model = f.record.model;
  f.model->save(t);
  return t;
}

// cos(B, I) of B[i][j] = Σ_{o ∈ heads' columns} (Σ_a φ[d+i][a] q[a][o]) (Σ_b φ[d+j][b] k[b][o]).
double brute_cosine(const ModelTensors& t, int64_t first_col, int64_t cols) {
  const ModelTensor &phi = *t.find("phi.w0"), &q = *t.find("q"), &k = *t.find("k");
  const int64_t m = phi.shape[1], out = q.shape[1];
  double trace = 0, frob2 = 0;
  for (int64_t i = 0; i < kCode; ++i)
    for (int64_t j = 0; j < kCode; ++j) {
      double b = 0;
      for (int64_t o = first_col; o < first_col + cols; ++o) {
        double qi = 0, kj = 0;
        for (int64_t a = 0; a < m; ++a) {
          qi += phi.data[(kD + i) * m + a] * q.data[a * out + o];
          kj += phi.data[(kD + j) * m + a] * k.data[a * out + o];
        }
        b += qi * kj;
      }
      frob2 += b * b;
      if (i == j) trace += b;
    }
  return trace / (std::sqrt(double(kCode)) * std::sqrt(frob2));
}

// log p_h(0 → j) − log p_h(0 → k) of sample 0, the query token 0 against data tokens j and k
// (the softmax's normaliser cancels), with query code coordinate a and key j's code coordinate b
// moved by da and db.
double log_prob_gap(const Fitted& f, int64_t h, int64_t j, int64_t k, int64_t a, double da,
                    int64_t b, double db) {
  Batch moved = f.test;  // sample 0 moved; the others ride along
  const int64_t d_in = moved.shape.d_in, T = moved.shape.T;
  moved.x(0)[0 * d_in + kD + a] += da;
  moved.x(0)[j * d_in + kD + b] += db;
  const ModelTensor p = f.model->attention(moved).front();  // (n, H, T, T), sample 0 first
  const double* row = p.data.data() + (h * T + 0) * T;
  return std::log(row[j]) - std::log(row[k]);
}

TEST(ProbeQkCodeIdentity, EachHeadsBlockIsWhatTheModelsAttentionScores) {
  const Fitted f =
      fitted({"model.m=6", "model.heads=2", "model.phi=linear", "train.dtype=float64"});
  const ModelTensors t = saved_of(f);
  const QkLayerWeights w = qk_code_block_weights(t, kD, kCode);
  const int64_t hs = w.out / 2;
  const double scale = std::exp(t.find("log_temperature")->data[0]);
  const double eps = 0.5;  // the gap is bilinear in (da, db): the mixed difference is exact
  for (int64_t h = 0; h < 2; ++h) {
    std::vector<double> B(kCode * kCode);
    qk_head_product(w, h, hs, B.data());
    for (int64_t a = 0; a < kCode; ++a)
      for (int64_t b = 0; b < kCode; ++b) {
        const double mixed = (log_prob_gap(f, h, 1, 2, a, eps, b, eps) -
                              log_prob_gap(f, h, 1, 2, a, eps, b, 0) -
                              log_prob_gap(f, h, 1, 2, a, 0, b, eps) +
                              log_prob_gap(f, h, 1, 2, a, 0, b, 0)) /
                             (eps * eps);
        EXPECT_NEAR(mixed, scale * B[a * kCode + b], 1e-9 * (1 + std::fabs(mixed)))
            << "head " << h << " a " << a << " b " << b;
      }
  }
}

TEST(ProbeQkCodeIdentity, CosinesMatchTheCodeBlockBuiltEntryByEntry) {
  const Fitted f = fitted({"model.m=6", "model.heads=2", "model.phi=linear"});
  const ModelTensors t = saved_of(f);
  const int64_t out = t.find("q")->shape[1];
  const auto s = probe_scalars(f);
  EXPECT_EQ(s.at("qk_code_identity_applies"), 1);
  EXPECT_NEAR(s.at("qk_code_identity_cosine"), brute_cosine(t, 0, out), 1e-12);
  EXPECT_NEAR(s.at("qk_code_identity_head_cosine_max"),
              std::max(brute_cosine(t, 0, out / 2), brute_cosine(t, out / 2, out / 2)), 1e-12);
  // The null is a Gaussian draw of the block's shapes (seed 0), not the trained block.
  EXPECT_NE(s.at("qk_code_identity_cosine_null"), s.at("qk_code_identity_cosine"));
}

// φ maps code coordinate i to embedding coordinate i scaled by scale[i] (all else 0), Q = K = I:
// B = diag(scale²) on the codes, whose cosine with I is Σ s² / (√code_dim · √Σ s⁴).
void plant(Fitted& f, const std::vector<double>& scale) {
  ModelTensors t = saved_of(f);
  for (auto& tensor : t.tensors) {
    const int64_t cols = tensor.shape.size() == 2 ? tensor.shape[1] : 0;
    if (tensor.name == "phi.w0") {
      std::fill(tensor.data.begin(), tensor.data.end(), 0.0);
      for (int64_t i = 0; i < kCode; ++i) tensor.data[(kD + i) * cols + i] = scale[i];
    } else if (tensor.name == "q" || tensor.name == "k") {
      std::fill(tensor.data.begin(), tensor.data.end(), 0.0);
      for (int64_t i = 0; i < tensor.shape[0]; ++i) tensor.data[i * cols + i] = 1.0;
    }
  }
  f.model = model_make(f.record);
  f.model->load(t);
}

TEST(ProbeQkCodeIdentity, APlantedIdentityGivesOneAndAScaledOneItsClosedForm) {
  Fitted f = fitted({"model.m=6", "model.phi=linear"});
  plant(f, {2, 2, 2, 2});  // B = 4·I
  auto s = probe_scalars(f);
  EXPECT_NEAR(s.at("qk_code_identity_cosine"), 1.0, 1e-15);
  EXPECT_NEAR(s.at("qk_code_identity_c_star"), 4.0, 1e-12);
  EXPECT_NEAR(s.at("qk_code_identity_residual"), 0.0, 1e-12);

  plant(f, {1, 2, 3, 4});  // B = diag(1, 4, 9, 16): cos = 30 / (2 · √354)
  s = probe_scalars(f);
  EXPECT_NEAR(s.at("qk_code_identity_cosine"), 30.0 / (2.0 * std::sqrt(354.0)), 1e-12);
  EXPECT_NEAR(s.at("qk_code_identity_c_star"), 30.0 / 4.0, 1e-12);
}

TEST(ProbeQkCodeIdentity, AnMlpPhiDoesNotApplyAndOtherTasksAreRefused) {
  const Fitted f = fitted({"model.m=6", "model.phi=mlp", "model.phi_width=8"});
  const auto s = probe_scalars(f);
  EXPECT_EQ(s.at("qk_code_identity_applies"), 0);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_THROW(qk_code_block_weights(saved_of(f), kD, kCode), UserError);
  EXPECT_THROW(probe_check(ProbeKind::kQkCodeIdentity, "attention", "qsa", ""), UserError);
  EXPECT_THROW(probe_check(ProbeKind::kQkCodeIdentity, "transformer", "token_selection", ""),
               UserError);
  EXPECT_NO_THROW(probe_check(ProbeKind::kQkCodeIdentity, "attention", "token_selection", ""));
}

}  // namespace
}  // namespace attn
