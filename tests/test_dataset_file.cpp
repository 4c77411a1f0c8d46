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
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab_ds_" + std::to_string(getpid()));
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
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab_ds2_" + std::to_string(getpid()));
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

}  // namespace
}  // namespace attn
