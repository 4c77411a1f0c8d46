// The qk_identity probe (analysis/probe_qk_identity.h) against a brute-force identity cosine
// computed from the saved tensors by their own layout, on trained attention, transformer and
// gpt2 models; an exact c·I planted in the weights gives cosine 1 and residual 0; the probe is
// refused for a model without query and key weights and reaches the stored results of a run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "analysis/probe_qk_identity.h"
#include "cli_helpers.h"
#include "core/error.h"
#include "models/model_io.h"
#include "probe_test_helpers.h"
#include "tasks/task.h"

namespace attn {
namespace {

using Fitted = test::FittedModel;

// `name` with `sets` ("model.K=V", "train.K=V") fitted for 30 steps on qsa (N = 6).
Fitted fitted(const std::string& name, const std::vector<std::string>& sets) {
  return test::fit_for_probe("qsa", task_default_params("qsa"), name, sets);
}

std::map<std::string, double> probe_scalars(const Fitted& f, FitLog* log_out = nullptr) {
  const Params test_params = task_default_params("qsa");
  FitLog log;
  probe_qk_identity(ProbeInput{*f.model, f.record.model, f.record.model_params, test_params,
                               f.test},
                    log);
  std::map<std::string, double> s(log.scalars.begin(), log.scalars.end());
  if (log_out != nullptr) *log_out = log;
  return s;
}

// cos(A, I) of A = Σ_{o ∈ [first, first + count)} q_o k_oᵀ, q(i, o) = q[i·qs + qo + o] etc.:
// the D × D bilinear form of the scores, built entry by entry.
double brute_cosine(const ModelTensor& qt, int64_t q_col0, const ModelTensor& kt, int64_t k_col0,
                    int64_t first, int64_t count) {
  const int64_t D = qt.shape[0], qs = qt.shape[1], ks = kt.shape[1];
  double trace = 0, frob2 = 0;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) {
      double a = 0;
      for (int64_t o = first; o < first + count; ++o)
        a += qt.data[i * qs + q_col0 + o] * kt.data[j * ks + k_col0 + o];
      frob2 += a * a;
      if (i == j) trace += a;
    }
  return trace / (std::sqrt(static_cast<double>(D)) * std::sqrt(frob2));
}

ModelTensors saved_of(const Fitted& f) {
  ModelTensors t;
  t.model = f.record.model;
  f.model->save(t);
  return t;
}

TEST(ProbeQkIdentity, AttentionMatchesTheBruteForceCosinePerLayerAndHead) {
  const Fitted f = fitted("attention", {"model.m=6", "model.heads=2"});
  const ModelTensors t = saved_of(f);
  const ModelTensor &q = *t.find("q"), &k = *t.find("k");
  const int64_t out = q.shape[1], hs = out / 2;
  FitLog log;
  const auto s = probe_scalars(f, &log);
  EXPECT_EQ(s.at("qk_identity_applies"), 1);
  EXPECT_NEAR(s.at("qk_identity_cosine"), brute_cosine(q, 0, k, 0, 0, out), 1e-12);
  EXPECT_NEAR(s.at("qk_identity_head_cosine_max"),
              std::max(brute_cosine(q, 0, k, 0, 0, hs), brute_cosine(q, 0, k, 0, hs, hs)), 1e-12);
  EXPECT_LT(std::fabs(s.at("qk_identity_cosine_null")), 0.9);  // a draw, not c·I
  const double c = s.at("qk_identity_cosine"), r = s.at("qk_identity_residual");
  EXPECT_NEAR(r * r + c * c, 1.0, 1e-12);  // residual² = 1 − cos²
  ASSERT_EQ(log.points.size(), 1u);
  EXPECT_EQ(log.points[0].series, "qk_identity_cosine");
  EXPECT_EQ(log.points[0].value, c);
}

TEST(ProbeQkIdentity, TransformerAndGpt2ReportEveryLayer) {
  const Fitted tr = fitted("transformer", {"model.m=8", "model.heads=2", "model.layers=2"});
  const ModelTensors tt = saved_of(tr);
  FitLog log;
  const auto s = probe_scalars(tr, &log);
  ASSERT_EQ(log.points.size(), 2u);
  for (int64_t l = 0; l < 2; ++l) {
    const std::string p = "layer" + std::to_string(l);
    const ModelTensor &q = *tt.find(p + ".q"), &k = *tt.find(p + ".k");
    EXPECT_EQ(log.points[l].step, l);
    EXPECT_NEAR(log.points[l].value, brute_cosine(q, 0, k, 0, 0, q.shape[1]), 1e-12) << l;
  }
  EXPECT_EQ(s.at("qk_identity_cosine"), log.points[0].value);

  const Fitted g = fitted("gpt2", {"model.m=8", "model.heads=2", "model.layers=2"});
  const ModelTensors gt = saved_of(g);
  FitLog glog;
  const auto gs = probe_scalars(g, &glog);
  ASSERT_EQ(glog.points.size(), 2u);
  for (int64_t l = 0; l < 2; ++l) {  // W_q: columns [0, 8) of c_attn, W_k: [8, 16)
    const ModelTensor& c = *gt.find("h." + std::to_string(l) + ".attn.c_attn.weight");
    EXPECT_NEAR(glog.points[l].value, brute_cosine(c, 0, c, 8, 0, 8), 1e-12) << l;
  }
  const ModelTensor& c0 = *gt.find("h.0.attn.c_attn.weight");
  EXPECT_NEAR(gs.at("qk_identity_head_cosine_max"),
              std::max(brute_cosine(c0, 0, c0, 8, 0, 4), brute_cosine(c0, 0, c0, 8, 4, 4)),
              1e-12);
}

TEST(ProbeQkIdentity, APlantedMultipleOfTheIdentityGivesCosineOne) {
  Fitted f = fitted("attention", {"model.m=5"});
  ModelTensors t = saved_of(f);
  for (auto& tensor : t.tensors)
    if (tensor.name == "q" || tensor.name == "k") {
      ASSERT_EQ(tensor.shape, (std::vector<int64_t>{5, 5}));
      const double diagonal = tensor.name == "q" ? 3 : 2;  // q kᵀ = 6·I
      for (int64_t i = 0; i < 25; ++i) tensor.data[i] = i % 6 == 0 ? diagonal : 0;
    }
  f.model = model_make(f.record);
  f.model->load(t);
  const auto s = probe_scalars(f);
  EXPECT_NEAR(s.at("qk_identity_cosine"), 1.0, 1e-15);
  EXPECT_NEAR(s.at("qk_identity_c_star"), 6.0, 1e-12);
  EXPECT_NEAR(s.at("qk_identity_residual"), 0.0, 1e-12);
  EXPECT_LT(std::fabs(s.at("qk_identity_cosine_null")), 0.9);
}

TEST(ProbeQkIdentity, AModelWithoutQueryAndKeyWeightsIsRefused) {
  EXPECT_THROW(probe_check(ProbeKind::kQkIdentity, "mlp", "qsa", ""), UserError);
  EXPECT_NO_THROW(probe_check(ProbeKind::kQkIdentity, "gpt2", "hop", ""));
  ModelTensors none;
  none.model = "mlp";
  EXPECT_THROW(qk_model_layers(none), UserError);
}

TEST(ProbeQkIdentity, ARunThatNamesItStoresItsScalars) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("attnlab_qkprobe_" + std::to_string(getpid()));
  fs::create_directories(dir);
  test::file_write((dir / "s.toml").string(), R"([experiment]
name = "qk"
seeds = 1
[task]
name = "qsa"
[model]
name = "attention"
m = 6
[train]
steps = 20
[eval]
n = 16
probes = ["qk_identity"]
)");
  const auto r = test::cli_run("run " + (dir / "s.toml").string() + " -q --jobs 1 --out " +
                               (dir / "o").string());
  const std::string csv = test::file_read((dir / "o" / "results.csv").string());
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(csv.find("qk_identity_cosine_null"), std::string::npos) << csv.substr(0, 400);
}

}  // namespace
}  // namespace attn
