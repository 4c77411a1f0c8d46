// Batch -> .npz -> Batch round trips, including dataset constants and the target kind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "io/dataset_file.h"
#include "io/npy.h"
#include "tasks/target_kind.h"
#include "tasks/task.h"

namespace attn {
namespace {

TEST(DatasetFile, RoundTripKeepsEveryArrayAndTheMeta) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("attnlab_ds_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // n = d = 8: the constant beta has the same length as the sample axis, so it must be
  // recognised from the meta's list of constants, not from its shape.
  Params p = task_default_params("rf_target");
  p.set_text("label_noise_std", "0.1");
  const Batch b = task_generate(*task_make("rf_target", p), 3, 0, 8);
  const std::string path = (dir / "rf.npz").string();
  dataset_write(path, b, DatasetMeta{"rf_target", 3, 0, p.to_json()});
  std::string meta;
  const Batch r = dataset_read(path, &meta);
  EXPECT_EQ(r.n, 8);
  EXPECT_EQ(r.X, b.X);
  EXPECT_EQ(r.Y, b.Y);
  EXPECT_EQ(r.find("f_star").f64, b.find("f_star").f64);
  ASSERT_EQ(r.constants.size(), 1u);
  EXPECT_EQ(r.constants[0].spec.name, "beta");
  EXPECT_EQ(r.constants[0].f64, b.find("beta").f64);
  EXPECT_NE(meta.find("\"label_noise_std\": 0.10000000000000001"), std::string::npos) << meta;
  std::filesystem::remove_all(dir);
}

TEST(DatasetFile, MissingYIsAClearError) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("attnlab_ds2_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.npz").string();
  const double x[6] = {1, 2, 3, 4, 5, 6};
  npz_write(path, {{"X", DType::F64, {1, 2, 3}, x}});
  try {
    dataset_read(path, nullptr);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("no array 'Y'"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// The one rule for a file's other entries, for training files (dataset_read) and files of
// inputs (dataset_read_inputs, `attnlab predict`) alike: listed in meta's "constants" or not
// per-sample (0-d, or a first dimension other than n) is a constant, integer and bool dtypes
// are int64. `attnlab predict` used to keep only the 0-d entries, a bool one as float64, and
// drop the rest (here: beta, codes, z).
TEST(DatasetFile, TrainingAndInputFilesReadTheirEntriesByOneRule) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("attnlab_ds3_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[4] = {1, 0, 1, 0}, beta[4] = {0.5, 1.5, 2.5, 3.5};
  const double z[8] = {9, 8, 7, 6, 5, 4, 3, 2};
  const int32_t codes[3] = {4, 5, 6};
  const unsigned char flag = 1;
  const std::string meta_json = "{\"constants\": [\"beta\"]}";
  const std::u32string meta(meta_json.begin(), meta_json.end());
  const std::vector<NpyView> inputs = {{"X", DType::F64, {4, 1, 2}, x},
                                       {"beta", DType::F64, {4}, beta},
                                       {"codes", DType::I32, {3}, codes},
                                       {"flag", DType::Bool, {}, &flag},
                                       {"z", DType::F64, {4, 2}, z},
                                       npy_text("meta", meta)};
  std::vector<NpyView> training = inputs;
  training.push_back({"Y", DType::F64, {4, 1, 1}, y});
  const std::string with_y = (dir / "train.npz").string(), without_y = (dir / "x.npz").string();
  npz_write(with_y, training);
  npz_write(without_y, inputs);

  bool has_y = true;
  const std::vector<Batch> read = {dataset_read(with_y, nullptr),
                                   dataset_read_inputs(with_y, nullptr, &has_y),
                                   dataset_read_inputs(without_y, nullptr, &has_y)};
  EXPECT_FALSE(has_y);
  for (const Batch& b : read) {
    EXPECT_EQ(b.n, 4);
    ASSERT_EQ(b.constants.size(), 3u);
    EXPECT_EQ(b.constants[0].spec.name, "beta");
    EXPECT_FALSE(b.constants[0].spec.integer);
    EXPECT_EQ(b.constants[0].spec.sample_shape, (std::vector<int64_t>{4}));
    EXPECT_EQ(b.constants[0].f64, (std::vector<double>{0.5, 1.5, 2.5, 3.5}));
    EXPECT_EQ(b.constants[1].spec.name, "codes");
    EXPECT_TRUE(b.constants[1].spec.integer);
    EXPECT_EQ(b.constants[1].i64, (std::vector<int64_t>{4, 5, 6}));
    EXPECT_EQ(b.constants[2].spec.name, "flag");
    EXPECT_TRUE(b.constants[2].spec.integer);
    EXPECT_TRUE(b.constants[2].spec.sample_shape.empty());
    EXPECT_EQ(b.constants[2].i64, (std::vector<int64_t>{1}));
    ASSERT_EQ(b.raw.size(), 1u);
    EXPECT_EQ(b.raw[0].spec.name, "z");
    EXPECT_EQ(b.raw[0].spec.sample_shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(b.raw[0].f64, std::vector<double>(z, z + 8));
  }
  EXPECT_EQ(read[1].Y, read[0].Y);
  EXPECT_TRUE(read[2].Y.empty());
  EXPECT_EQ(read[2].shape.T_out, 0);
  std::filesystem::remove_all(dir);
}

// A scratch directory for one test, removed with it.
struct ScratchDir {
  std::filesystem::path dir;
  explicit ScratchDir(const std::string& name)
      : dir(std::filesystem::temp_directory_path() /
            ("attnlab_" + name + "_" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir); }
  std::string path(const std::string& file) const { return (dir / file).string(); }
};

// X and Y of `b` with this meta text, as a file of an earlier attnlab or numpy would hold them.
void npz_write_with_meta(const std::string& path, const Batch& b, const std::string& meta_json) {
  const std::u32string meta(meta_json.begin(), meta_json.end());
  npz_write(path, {{"X", DType::F64, {b.n, b.shape.T, b.shape.d_in}, b.X.data()},
                   {"Y", DType::F64, {b.n, b.shape.T_out, b.shape.d_out}, b.Y.data()},
                   npy_text("meta", meta)});
}

// Two samples of three positions over three classes, one-hot with one ignored (all-zero) row,
// declared categorical: every target is 0 or 1, so without the declaration it reads as binary.
Batch categorical_batch() {
  Batch b;
  b.n = 2;
  b.shape.T = b.shape.T_out = 3;
  b.shape.d_in = b.shape.d_out = 3;
  b.shape.target = TargetKind::categorical;
  b.X.assign(18, 0.5);
  b.Y = {1, 0, 0, /**/ 0, 0, 1, /**/ 0, 0, 0, /**/ 0, 1, 0, /**/ 0, 1, 0, /**/ 1, 0, 0};
  return b;
}

TEST(DatasetFile, TheTargetKindRoundTripsWithTheClassCount) {
  const ScratchDir scratch("ds_kind");
  const std::string path = scratch.path("cat.npz");
  dataset_write(path, categorical_batch(), DatasetMeta{"toy", 1, 0, ""});
  std::string meta;
  const Batch r = dataset_read(path, &meta);
  ASSERT_TRUE(r.shape.target.has_value());
  EXPECT_EQ(*r.shape.target, TargetKind::categorical);
  EXPECT_NE(meta.find("\"target\": \"categorical\", \"classes\": 3"), std::string::npos) << meta;
  // A task's real targets say so too; a batch no task declared records no kind.
  const Batch rf =
      task_generate(*task_make("rf_target", task_default_params("rf_target")), 3, 0, 4);
  dataset_write(path, rf, DatasetMeta{"rf_target", 3, 0, ""});
  EXPECT_EQ(dataset_read(path, nullptr).shape.target, TargetKind::real);
  Batch undeclared = categorical_batch();
  undeclared.shape.target.reset();
  dataset_write(path, undeclared, DatasetMeta{"toy", 1, 0, ""});
  EXPECT_FALSE(dataset_read(path, &meta).shape.target.has_value());
  EXPECT_EQ(meta.find("target"), std::string::npos) << meta;
}

// A file of an earlier attnlab (its meta has no "target"): the kind stays unset and is inferred
// from Y as before, so one-hot targets read as binary (trained with bce, not cross_entropy).
TEST(DatasetFile, AFileWithoutARecordedKindKeepsTheInference) {
  const ScratchDir scratch("ds_old");
  const std::string path = scratch.path("old.npz");
  npz_write_with_meta(path, categorical_batch(),
                      "{\"task\": \"toy\", \"seed\": 1, \"first\": 0, \"n\": 2, \"attnlab\": "
                      "\"0.1.0\", \"constants\": [], \"params\": {}}");
  const Batch r = dataset_read(path, nullptr);
  EXPECT_FALSE(r.shape.target.has_value());
  EXPECT_EQ(target_kind_of(r.shape.target, r.Y), TargetKind::binary);
}

TEST(DatasetFile, ABadRecordedKindIsAnIoErrorNamingIt) {
  const ScratchDir scratch("ds_bad_kind");
  const std::string path = scratch.path("bad.npz");
  for (const auto& [meta_json, needle] : std::vector<std::pair<std::string, std::string>>{
           {"{\"target\": \"ordinal\"}", "not one of real, binary, categorical"},
           {"{\"target\": \"categorical\", \"classes\": 4}", "but Y has d_out = 3"},
           {"{\"target\": \"categorical\"}", "\"classes\": (missing)"}}) {
    npz_write_with_meta(path, categorical_batch(), meta_json);
    try {
      dataset_read(path, nullptr);
      FAIL() << "no error for " << meta_json;
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace attn
