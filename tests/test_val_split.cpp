// train.val_fraction: one rule for ridge and gradient-trained models (train/val_split.h),
// n_val = f > 0 ? max(1, round(f·n)) : 0, at its boundary values; and every shipped spec's
// point resolves to the split the earlier rule of its model gave (ridge round(f·n), neural
// max(1, ceil(f·n))), so no stored result changes.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "experiment/plan.h"
#include "experiment/spec.h"
#include "models/model_registry.h"
#include "train/val_split.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

TEST(ValSplit, BoundaryValues) {
  EXPECT_EQ(val_split_count(0.0, 1000), 0);    // no split
  EXPECT_EQ(val_split_count(0.0, 0), 0);
  EXPECT_EQ(val_split_count(1e-9, 1000), 1);   // f·n < 0.5 still holds one sample out
  EXPECT_EQ(val_split_count(0.2, 2), 1);       // 0.4 rounds to 0: at least one
  EXPECT_EQ(val_split_count(0.25, 2), 1);      // 0.5 rounds half away from zero
  EXPECT_EQ(val_split_count(0.25, 6), 2);      // 1.5 -> 2
  EXPECT_EQ(val_split_count(0.2, 256), 51);    // 51.2 -> 51 (fu2023's ridge runs; ceil gave 52)
  EXPECT_EQ(val_split_count(0.1, 1000), 100);  // integer f·n is exact
  EXPECT_EQ(val_split_count(0.1, 64), 6);      // 6.4 -> 6 (ceil gave 7)
  EXPECT_EQ(val_split_count(0.9, 10), 9);      // the schemas' upper bound
}

// The split each shipped point's model computed before the rules were one.
int64_t earlier_rule(const RunConfig& c, int64_t n) {
  const double f = c.train_params.get_real("val_fraction");
  if (model_find(c.model).ridge_fitted)
    return f > 0 ? std::llround(f * static_cast<double>(n)) : 0;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(f * static_cast<double>(n))));
}

TEST(ValSplit, EveryShippedPointKeepsItsSplit) {
  int checked = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(test_source_dir()) / "experiments")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".toml") continue;
    for (bool quick : {false, true})
      for (const auto& p : plan_make(spec_load(entry.path().string(), {}, quick))) {
        const RunConfig& c = p.config;
        if (!c.train_params.has("val_fraction")) continue;
        const int64_t n = c.train_params.get_int("n");
        if (n == 0) continue;  // fresh samples: validation is train.val_n
        ++checked;
        EXPECT_EQ(val_split_count(c.train_params.get_real("val_fraction"), n), earlier_rule(c, n))
            << entry.path() << (quick ? " --quick" : "") << " point " << p.index << " (" << c.model
            << ", n = " << n << ")";
      }
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace attn
