// Progress bar formatting (the bar itself only draws on a terminal).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "core/progress.h"

namespace attn {
namespace {

TEST(Progress, FormatsRatesAndDurations) {
  EXPECT_EQ(Progress::format_rate(12.0), "12.0/s");
  EXPECT_EQ(Progress::format_rate(1500.0), "1.5k/s");
  EXPECT_EQ(Progress::format_rate(2.5e6), "2.5M/s");
  EXPECT_EQ(Progress::format_duration(42), "0:42");
  EXPECT_EQ(Progress::format_duration(3725), "1:02:05");
  EXPECT_EQ(Progress::format_duration(-1), "?");
}

TEST(Progress, LineShowsFractionCountRateAndEta) {
  const std::string line = Progress::render_line("gen", 50, 200, 10.0, 10);
  EXPECT_EQ(line, "gen [##........]  25% 50/200 5.0/s ETA 0:30");
}

TEST(Progress, SilentWhenAskedOrNotOnATerminal) {
  setenv("ATTNLAB_NO_PROGRESS", "1", 1);
  Progress quiet("x", 10);
  quiet.add(10);
  EXPECT_FALSE(quiet.enabled());
  unsetenv("ATTNLAB_NO_PROGRESS");
  Progress p("x", 10);
  EXPECT_EQ(p.enabled(), isatty(STDERR_FILENO) == 1);
}

}  // namespace
}  // namespace attn
