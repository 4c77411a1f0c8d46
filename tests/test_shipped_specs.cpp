// Every shipped experiment spec (experiments/<group>/*.toml) loads, validates and plans, at
// full size and with --quick: keys, plots and claims refer to what exists, so a typo in a
// spec fails here instead of hours into `attnlab reproduce`.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "experiment/plan.h"
#include "experiment/spec.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> shipped_specs() {
  std::vector<fs::path> specs;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(test_source_dir()) / "experiments"))
    if (entry.is_regular_file() && entry.path().extension() == ".toml")
      specs.push_back(entry.path());
  return specs;
}

TEST(ShippedSpecs, EveryOneLoadsAndPlansAtFullSizeAndQuick) {
  const auto specs = shipped_specs();
  // demo (1), constructions (6), fu2023 (6) and sanford2023 (6) today.
  EXPECT_GE(specs.size(), 19u);
  for (const auto& path : specs)
    for (bool quick : {false, true}) {
      try {
        const Spec spec = spec_load(path.string(), {}, quick);
        const auto points = plan_make(spec);
        EXPECT_FALSE(points.empty()) << path << (quick ? " --quick" : "");
      } catch (const std::exception& e) {
        ADD_FAILURE() << path << (quick ? " --quick: " : ": ") << e.what();
      }
    }
}

TEST(ShippedSpecs, ExecutionSettingsDoNotChangeTheFingerprint) {
  // A directory can be resumed with train.dual_features or train.distributed changed (both
  // `execution_only` in the ridge schema); a setting that changes results makes another spec.
  const std::string path =
      (fs::path(test_source_dir()) / "experiments" / "fu2023" / "e2_n_dependence.toml").string();
  const std::string plain = spec_runs_json(spec_load(path, {}, true));
  EXPECT_EQ(spec_runs_json(
                spec_load(path, {"train.dual_features=recompute", "train.distributed=true"}, true)),
            plain);
  EXPECT_NE(spec_runs_json(spec_load(path, {"train.refit=true"}, true)), plain);
}

}  // namespace
}  // namespace attn
