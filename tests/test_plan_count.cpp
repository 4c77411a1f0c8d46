// plan_count / plan_make size limits: a plan is counted before it is expanded, absurd
// plans are refused with the count and the axes, and the count saturates on overflow.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/error.h"
#include "experiment/plan.h"

namespace attn {
namespace {

// A spec with `axes` sweep axes of `values` integer values each, and `seeds` seeds.
Spec spec_with_axes(int axes, int64_t values, int seeds) {
  Spec s;
  s.path = "grid.toml";
  for (int k = 0; k < seeds; ++k) s.seeds.push_back(static_cast<uint64_t>(k));
  for (int a = 0; a < axes; ++a) {
    SweepAxis axis;
    axis.keys = {"task.k" + std::to_string(a)};
    for (int64_t v = 0; v < values; ++v) axis.values.push_back({ParamValue(v)});
    s.axes.push_back(axis);
  }
  return s;
}

TEST(PlanCount, CountsAxesAndSeedsWithoutExpanding) {
  std::string factors;
  EXPECT_EQ(plan_count(spec_with_axes(2, 7, 3), &factors), 147u);
  EXPECT_EQ(factors, "sweep.task.k0: 7 values × sweep.task.k1: 7 values × 3 seeds");
  EXPECT_EQ(plan_count(spec_with_axes(7, 1000, 1), nullptr), UINT64_MAX);  // 10^21 saturates
}

TEST(PlanCount, AbsurdPlanIsRefusedBeforeExpansion) {
  const Spec s = spec_with_axes(4, 1000, 3);  // 3·10^12 runs
  const auto start = std::chrono::steady_clock::now();
  try {
    plan_make(s);
    FAIL() << "an absurd plan was accepted";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("grid.toml: the sweep plans 3000000000000 runs (sweep.task.k0: 1000 values"),
              std::string::npos) << m;
    EXPECT_NE(m.find("3 seeds"), std::string::npos) << m;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(PlanCount, LargePlanIsWarnedAbout) {
  testing::internal::CaptureStderr();
  EXPECT_THROW(plan_make(spec_with_axes(2, 317, 1)), UserError);  // 100489 runs; no [task]
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("attnlab: warning: grid.toml: the sweep plans 100489 runs (sweep.task.k0: "
                     "317 values × sweep.task.k1: 317 values × 1 seeds)"),
            std::string::npos) << err;
  testing::internal::CaptureStderr();
  EXPECT_THROW(plan_make(spec_with_axes(2, 316, 1)), UserError);  // 99856 runs: no warning
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(PlanCount, OverflowingPlanIsRefused) {
  try {
    plan_make(spec_with_axes(7, 1000, 1));
    FAIL() << "an overflowing plan was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 10^19 runs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn
