// The command line for gradient-trained models: `attnlab gradcheck`, `fit` + `predict` with
// attention matrices, `fit` following the target kind a dataset file records, and `run` with
// fresh samples (train.n = 0).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cli_helpers.h"
#include "io/dataset_file.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "tasks/target_kind.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

class CliNeural : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_cli_neural_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(CliNeural, GradcheckPassesAndFiltersRows) {
  const auto r = test::cli_run("gradcheck --filter model/mlp");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("model/mlp"), std::string::npos);
  EXPECT_NE(r.out.find("2 of 2 rows pass"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  const auto bad = test::cli_run("gradcheck --filter nosuchop");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("no gradient-check row"), std::string::npos) << bad.out;
}

TEST_F(CliNeural, FitThenPredictWritesAttentionMatrices) {
  const std::string sets = "--set task.N=6 --set task.q=2 --set task.d_out=2";
  ASSERT_EQ(test::cli_run("data qsa --n 300 " + sets + " -q -o " + path("train.npz")).exit_code, 0);
  ASSERT_EQ(test::cli_run("data qsa --n 20 --first 100000 " + sets + " -q -o " + path("test.npz"))
                .exit_code,
            0);
  const auto fit = test::cli_run("fit attention --in " + path("train.npz") +
                                 " --set model.m=4 --set model.heads=2 --set train.steps=30 "
                                 "--set train.batch=32 --save " + path("att.safetensors"));
  ASSERT_EQ(fit.exit_code, 0) << fit.out;
  const auto pred = test::cli_run("predict --model " + path("att.safetensors") + " --in " +
                                  path("test.npz") + " -o " + path("pred.npz"));
  ASSERT_EQ(pred.exit_code, 0) << pred.out;
  EXPECT_NE(pred.out.find("attention.layer0 (20, 2, 6, 6)"), std::string::npos) << pred.out;
  const auto arrays = npz_read(path("pred.npz"));
  ASSERT_TRUE(arrays.count("attention.layer0"));
  const auto a = arrays.at("attention.layer0").to_f64();
  ASSERT_EQ(a.size(), 20u * 2 * 6 * 6);
  for (size_t row = 0; row < a.size() / 6; ++row) {
    double s = 0;
    for (size_t j = 0; j < 6; ++j) s += a[row * 6 + j];
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
  EXPECT_EQ(arrays.at("Y_pred").shape, (std::vector<int64_t>{20, 6, 2}));
}

// The loss a saved model records (the tensor meta.loss.<name>).
std::string saved_loss(const std::string& path) {
  const SafetensorsFile file(path);
  for (const auto& e : file.entries())
    if (e.name.rfind("meta.loss.", 0) == 0) return e.name.substr(10);
  return "";
}

// A categorical dataset as `attnlab data` writes it (dataset_write with the task's declared
// kind; no shipped task is categorical, so the batch is made here: 64 samples of 4 positions
// over 3 classes, position 0 ignored, the target at t the input token at t − 1), fitted by
// `attnlab fit` with train.loss = auto: cross_entropy, printed as train_token_accuracy. The same
// arrays in a file of an earlier attnlab (meta without "target") keep the inference: bce.
TEST_F(CliNeural, FitFollowsTheTargetKindTheDatasetRecords) {
  Batch b;
  b.n = 64;
  b.shape.T = b.shape.T_out = 4;
  b.shape.d_in = b.shape.d_out = 3;
  b.shape.target = TargetKind::categorical;
  b.X.assign(64 * 4 * 3, 0.0);
  b.Y.assign(64 * 4 * 3, 0.0);
  for (int64_t j = 0; j < 64; ++j)
    for (int64_t t = 0; t < 4; ++t) {
      const int64_t token = (j * 7 + t * 5 + j / 3) % 3;
      b.X[(j * 4 + t) * 3 + token] = 1.0;
      if (t + 1 < 4) b.Y[(j * 4 + t + 1) * 3 + token] = 1.0;
    }
  const std::string fit_args =
      " --set 'model.hidden=[16]' --set train.steps=20 --set train.batch=16 --seed 1 --save ";
  dataset_write(path("cat.npz"), b, DatasetMeta{"toy_categorical", 1, 0, ""});
  const auto fit =
      test::cli_run("fit mlp --in " + path("cat.npz") + fit_args + path("cat.safetensors"));
  ASSERT_EQ(fit.exit_code, 0) << fit.out;
  EXPECT_EQ(saved_loss(path("cat.safetensors")), "cross_entropy");
  EXPECT_NE(fit.out.find("train_token_accuracy"), std::string::npos) << fit.out;

  const std::string old_meta =
      "{\"task\": \"toy_categorical\", \"seed\": 1, \"first\": 0, "
      "\"n\": 64, \"attnlab\": \"0.1.0\", \"constants\": [], "
      "\"params\": {}}";
  const std::u32string meta(old_meta.begin(), old_meta.end());
  npz_write(path("old.npz"), {{"X", DType::F64, {64, 4, 3}, b.X.data()},
                              {"Y", DType::F64, {64, 4, 3}, b.Y.data()},
                              npy_text("meta", meta)});
  const auto old =
      test::cli_run("fit mlp --in " + path("old.npz") + fit_args + path("old.safetensors"));
  ASSERT_EQ(old.exit_code, 0) << old.out;
  EXPECT_EQ(saved_loss(path("old.safetensors")), "bce");
  EXPECT_NE(old.out.find("train_accuracy"), std::string::npos) << old.out;
}

TEST_F(CliNeural, FreshSamplesOnlyForGradientModels) {
  test::file_write(path("spec.toml"),
                   "[experiment]\nname = \"x\"\n[task]\nname = \"qsa\"\nN = 4\nq = 1\n"
                   "[model]\nname = \"rfmlp\"\n[train]\nn = 0\n");
  const auto r = test::cli_run("run " + path("spec.toml") + " --out " + path("out") + " -q");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("train.n = 0 (fresh samples every step) is only for gradient-trained"),
            std::string::npos)
      << r.out;
}

TEST_F(CliNeural, RunWithFreshSamplesRecordsCurvesAndAttention) {
  test::file_write(path("spec.toml"),
                   "[experiment]\nname = \"x\"\n[task]\nname = \"qsa\"\nN = 4\nq = 1\nd_out = 2\n"
                   "[model]\nname = \"attention\"\nm = 4\nphi_width = 8\n"
                   "[train]\nn = 0\nsteps = 40\nbatch = 16\neval_every = 20\nval_n = 32\n"
                   "[eval]\nn = 50\n");
  const auto r = test::cli_run("run " + path("spec.toml") + " --out " + path("out") + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string csv = test::file_read(path("out/results.csv"));
  for (const char* column : {"test_success_rate", "attn_on_target", "val_loss", "params"})
    EXPECT_NE(csv.find(column), std::string::npos) << column << "\n" << csv;
  const std::string series = test::file_read(path("out/series.csv"));
  EXPECT_NE(series.find("val_loss"), std::string::npos);
  EXPECT_NE(series.find("attention_sample0"), std::string::npos);
}

}  // namespace
}  // namespace attn
