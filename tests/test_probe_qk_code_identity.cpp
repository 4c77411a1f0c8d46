// The qk_code_identity probe (analysis/probe_qk_code_identity.h) against the code block of
// (W_φ Q)(W_φ K)ᵀ built entry by entry from the saved tensors of a trained attention model on
// token_selection; a planted identity gives cosine 1, a planted non-orthogonal φ on the codes the
// cosine of M Mᵀ in closed form; a non-linear φ logs applies = 0; other tasks are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "analysis/probe_qk_code_identity.h"
#include "core/error.h"
#include "models/model_io.h"
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

struct Fitted {
  ModelRecord record;
  std::unique_ptr<Model> model;
  Batch test;
};

// attention with `sets` fitted for 30 steps on token_selection (N = 5, d = 2, code_dim = 4).
Fitted fitted(const std::vector<std::string>& sets) {
  const auto task = task_make("token_selection", task_params());
  Batch train = task_generate(*task, 0, 0, 64);
  Fitted f;
  f.record = model_record_make("attention", 3, train.shape);
  for (const auto& item : sets)
    model_set_apply(item, f.record.model_params, &f.record.train_params);
  f.record.train_params.set_text("steps", "30");
  f.record.train_params.set_text("n", "64");
  f.model = model_make(f.record);
  FitLog log;
  f.model->fit(train, log);
  f.test = task_generate(*task, 0, 1000, 8);
  return f;
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

TEST(ProbeQkCodeIdentity, MatchesTheCodeBlockBuiltEntryByEntryPerLayerAndHead) {
  const Fitted f = fitted({"model.m=6", "model.heads=2", "model.phi=linear"});
  const ModelTensors t = saved_of(f);
  const int64_t out = t.find("q")->shape[1];
  const auto s = probe_scalars(f);
  EXPECT_EQ(s.at("qk_code_identity_applies"), 1);
  EXPECT_NEAR(s.at("qk_code_identity_cosine"), brute_cosine(t, 0, out), 1e-12);
  EXPECT_NEAR(s.at("qk_code_identity_head_cosine_max"),
              std::max(brute_cosine(t, 0, out / 2), brute_cosine(t, out / 2, out / 2)), 1e-12);
  const double c = s.at("qk_code_identity_cosine"), r = s.at("qk_code_identity_residual");
  EXPECT_NEAR(r * r + c * c, 1.0, 1e-12);
  EXPECT_LT(std::fabs(s.at("qk_code_identity_cosine_null")), 0.9);  // a draw, not c·I
  EXPECT_NE(s.at("qk_code_identity_cosine"), s.at("qk_code_identity_cosine_null"));
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
