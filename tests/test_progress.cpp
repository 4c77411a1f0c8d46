// Progress: the bar's formatting (drawn on a terminal only), the timed log lines written
// elsewhere (to a pipe here), and silence when asked.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

#include "core/progress.h"
#include "kept_variable.h"

namespace attn {
namespace {

TEST(Progress, FormatsRatesAndDurations) {
  EXPECT_EQ(Progress::format_rate(12.0), "12.0/s");
  EXPECT_EQ(Progress::format_rate(1500.0), "1.5k/s");
  EXPECT_EQ(Progress::format_rate(2.5e6), "2.5M/s");
  EXPECT_EQ(Progress::format_rate(0.04), "2.4/min");   // slow sweeps: per minute, per hour
  EXPECT_EQ(Progress::format_rate(1.0 / 1800), "2.0/h");
  EXPECT_EQ(Progress::format_rate(0.0), "0.0/s");
  EXPECT_EQ(Progress::format_duration(42), "0:42");
  EXPECT_EQ(Progress::format_duration(3725), "1:02:05");
  EXPECT_EQ(Progress::format_duration(-1), "?");
}

TEST(Progress, LineShowsFractionCountRateAndEta) {
  const std::string line = Progress::render_line("gen", 50, 200, 10.0, 10);
  EXPECT_EQ(line, "gen [##........]  25% 50/200 5.0/s ETA 0:30");
}

TEST(Progress, LogLineShowsCountFailuresRateElapsedAndEta) {
  EXPECT_EQ(Progress::render_log_line("runs", 12, 72, 0, 300.0, false),
            "runs: 12/72 (17%), 2.4/min, elapsed 5:00, ETA 25:00");
  EXPECT_EQ(Progress::render_log_line("runs", 12, 72, 1, 300.0, false),
            "runs: 12/72 (17%), 1 failed, 2.4/min, elapsed 5:00, ETA 25:00");
  EXPECT_EQ(Progress::render_log_line("runs", 0, 72, 0, 15.0, false),
            "runs: 0/72 (0%), 0.0/s, elapsed 0:15, ETA ?");
  EXPECT_EQ(Progress::render_log_line("runs", 72, 72, 3, 1800.0, true),
            "runs: 72/72 (100%), 3 failed, 2.4/min, elapsed 30:00, done");
  EXPECT_EQ(Progress::render_log_line("runs", 70, 72, 0, 1750.0, true),
            "runs: 70/72 (97%), 2.4/min, elapsed 29:10, stopped");
}

// Off with -q (show = false) or ATTNLAB_NO_PROGRESS; a bar on a terminal; lines elsewhere, every
// ATTNLAB_PROGRESS_INTERVAL seconds (default 15; a bad value warns and keeps 15).
TEST(Progress, StyleFollowsQuietEnvironmentAndTerminal) {
  const test::KeptVariable interval("ATTNLAB_PROGRESS_INTERVAL"), off("ATTNLAB_NO_PROGRESS");
  interval.unset();
  EXPECT_EQ(progress_style(false).mode, ProgressMode::kOff);
  off.set("1");
  EXPECT_EQ(progress_style(true).mode, ProgressMode::kOff);
  Progress quiet("x", 10);
  quiet.add(10);
  EXPECT_FALSE(quiet.enabled());
  off.unset();
  const bool tty = isatty(STDERR_FILENO) == 1;
  EXPECT_EQ(progress_style(true).mode, tty ? ProgressMode::kBar : ProgressMode::kLines);
  Progress p("x", 10);
  EXPECT_EQ(p.enabled(), tty);
  if (tty) return;
  EXPECT_EQ(progress_style(true).interval_seconds, 15);
  interval.set("2.5");
  EXPECT_EQ(progress_style(true).interval_seconds, 2.5);
  for (const char* bad : {"0", "-3", "15s", "1e9"}) {
    interval.set(bad);
    EXPECT_EQ(progress_style(true).interval_seconds, 15) << bad;
  }
}

std::vector<std::string> pipe_lines(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// In log mode lines come at the interval even while nothing finishes, then a last line.
TEST(Progress, LogModeWritesTimedLinesAndALastOne) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_NONBLOCK), 0);
  {
    Progress p("runs", 4, ProgressStyle{ProgressMode::kLines, 0.05, fds[1]});
    p.add(1);
    p.add(1, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // no add() meanwhile
    p.add(2);
  }
  const auto lines = pipe_lines(fds[0]);
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_GE(lines.size(), 3u);
  int waiting = 0;  // lines written while the count stood at 2 (about 5; >= 2 even under load)
  for (size_t k = 0; k + 1 < lines.size(); ++k) {
    waiting += lines[k].rfind("runs: 2/4 (50%), 1 failed, ", 0) == 0;
    EXPECT_NE(lines[k].find(", ETA "), std::string::npos) << lines[k];
  }
  EXPECT_GE(waiting, 2);
  EXPECT_EQ(lines.back().rfind("runs: 4/4 (100%), 1 failed, ", 0), 0u) << lines.back();
  EXPECT_NE(lines.back().find(", done"), std::string::npos) << lines.back();
}

// Work shorter than one interval writes nothing; off writes nothing at all.
TEST(Progress, ShortWorkAndOffStaySilent) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_NONBLOCK), 0);
  {
    Progress quick("runs", 2, ProgressStyle{ProgressMode::kLines, 60, fds[1]});
    quick.add(2);
    Progress off("runs", 2, ProgressStyle{ProgressMode::kOff, 0.01, fds[1]});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    off.add(2);
  }
  EXPECT_TRUE(pipe_lines(fds[0]).empty());
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace attn
