// Batch -> .npz -> Batch round trips, including dataset constants.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "io/dataset_file.h"
#include "io/npy.h"
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

}  // namespace
}  // namespace attn
