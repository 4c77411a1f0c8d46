// Subnormals flushed to zero (core/float_env.h): inside a scope a subnormal result is 0 and a
// subnormal input reads as 0, the thread's mode comes back after it, worker threads compute in
// their caller's mode, and the command line names the mode and refuses an unknown setting.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "core/float_env.h"
#include "core/threads.h"

namespace attn {
namespace {

// Through volatile, so the compiler computes them at run time, in the thread's mode.
float times(float a, float b) {
  volatile float x = a, y = b;
  return x * y;
}
double times(double a, double b) {
  volatile double x = a, y = b;
  return x * y;
}

#if defined(__x86_64__) || defined(__i386__)
TEST(FloatEnv, TheScopeFlushesSubnormalsAndRestoresTheMode) {
  ASSERT_TRUE(subnormals_flushed());  // the test runner leaves ATTNLAB_SUBNORMALS unset
  const float tiny = std::numeric_limits<float>::min();        // 2^-126, the smallest normal
  const float sub = std::numeric_limits<float>::denorm_min();  // 2^-149
  const double tiny_d = std::numeric_limits<double>::min();
  const uint32_t before = float_env_get();
  EXPECT_EQ(times(tiny, 0.5f), tiny / 2);  // IEEE: a subnormal result
  EXPECT_EQ(times(sub, 4.0f), 4 * sub);    // a subnormal input
  {
    const SubnormalsFlushed flush;
    EXPECT_EQ(times(tiny, 0.5f), 0.0f);  // FTZ
    EXPECT_EQ(times(sub, 4.0f), 0.0f);   // DAZ
    EXPECT_EQ(times(-tiny, 0.5f), 0.0f);
    EXPECT_EQ(times(tiny_d, 0.25), 0.0);     // doubles alike
    EXPECT_EQ(times(tiny, 2.0f), 2 * tiny);  // normal numbers as before
    {
      const SubnormalsFlushed nested;
      EXPECT_EQ(times(tiny, 0.5f), 0.0f);
    }
    EXPECT_EQ(times(tiny, 0.5f), 0.0f);  // the outer scope still holds
  }
  constexpr uint32_t kStatusFlags = 0x3f;  // sticky exception flags, not the mode
  EXPECT_EQ(float_env_get() & ~kStatusFlags, before & ~kStatusFlags);
  EXPECT_EQ(times(tiny, 0.5f), tiny / 2);
}

TEST(FloatEnv, WorkerThreadsComputeInTheCallersMode) {
  const int saved = threads_count();
  threads_configure(3);
  const float tiny = std::numeric_limits<float>::min();
  for (bool flushed : {true, false}) {
    std::vector<float> out(12, -1.0f);
    {
      std::optional<SubnormalsFlushed> flush;
      if (flushed) flush.emplace();
      parallel_for(0, 12, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) out[static_cast<size_t>(i)] = times(tiny, 0.5f);
      });
      std::vector<float> ordered(12, -1.0f);
      parallel_ordered(
          12, 3, [&](int, int64_t c) { ordered[static_cast<size_t>(c)] = times(tiny, 0.5f); },
          [](int, int64_t) {});
      for (float v : ordered) EXPECT_EQ(v, flushed ? 0.0f : tiny / 2) << flushed;
    }
    for (float v : out) EXPECT_EQ(v, flushed ? 0.0f : tiny / 2) << flushed;
  }
  threads_configure(saved);
}
#endif

TEST(FloatEnv, TheCommandLineNamesTheModeAndRefusesAnUnknownOne) {
  const test::CliResult flushed = test::shell(std::string(test_cli_path()) + " --version");
  EXPECT_EQ(flushed.exit_code, 0) << flushed.out;
  EXPECT_NE(flushed.out.find("subnormals flushed"), std::string::npos) << flushed.out;
  const test::CliResult kept =
      test::shell("ATTNLAB_SUBNORMALS=keep " + std::string(test_cli_path()) + " --version");
  EXPECT_EQ(kept.exit_code, 0) << kept.out;
  EXPECT_NE(kept.out.find("subnormals kept"), std::string::npos) << kept.out;
  const test::CliResult bad =
      test::shell("ATTNLAB_SUBNORMALS=fast " + std::string(test_cli_path()) + " list");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("ATTNLAB_SUBNORMALS is \"fast\""), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace attn
