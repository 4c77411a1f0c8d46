// core/log.h: warning lines reach the installed sink (from this process and from the forked
// run workers of a sweep, over their result pipe) and stderr by default; the other-size
// error of a results directory (quick vs full).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "core/log.h"
#include "experiment/experiment_dir.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// A run whose ridge fit warns (a λ below the numerical floor) inside its worker process.
const char* kFloorSpec =
    "[experiment]\nname = \"floor\"\nseeds = 1\n[task]\nname = \"rf_target\"\nN = 4\nd = 2\np = 1\n"
    "[model]\nname = \"rfa\"\nheads = 4\n[train]\nn = 32\nlambdas = [1e-300, 1.0]\nsolver = "
    "\"dual\"\n"
    "[eval]\nn = 16\n";

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_test_log_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(Log, SinkReceivesFormattedLinesAndRestores) {
  std::vector<std::string> lines;
  const LogSink before = log_sink_set([&](const std::string& line) { lines.push_back(line); });
  log_warn("attnlab: %d of %s\n", 3, "x");
  log_sink_set(before);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "attnlab: 3 of x\n");
  EXPECT_EQ(log_line_plain("\r\033[Kattnlab: run r failed: why\n"), "run r failed: why");
}

TEST(Log, WorkerWarningsReachTheParentsSink) {
  const fs::path dir = scratch("worker");
  test::file_write((dir / "floor.toml").string(), kFloorSpec);
  std::vector<std::string> lines;
  int64_t progress_calls = 0, last_done = -1;
  const LogSink before = log_sink_set([&](const std::string& line) { lines.push_back(line); });
  const ProgressSink before_p =
      log_progress_sink_set([&](const std::string&, int64_t done, int64_t) {
        ++progress_calls;
        last_done = done;
      });
  RunRequest rq;
  rq.spec_path = (dir / "floor.toml").string();
  rq.out_dir = (dir / "out").string();
  rq.progress = false;
  const RunSummary s = experiment_run(rq);
  log_sink_set(before);
  log_progress_sink_set(before_p);
  EXPECT_EQ(s.ok, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("below the numerical floor"), std::string::npos) << lines[0];
  EXPECT_EQ(progress_calls, 2);  // 0 of 1, then 1 of 1
  EXPECT_EQ(last_done, 1);
  // The command line still prints it on stderr, once.
  const auto r = test::cli_run("run " + rq.spec_path + " --out " + (dir / "cli").string() + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("attnlab: 1 of the λ values are below the numerical floor"),
            std::string::npos)
      << r.out;
  fs::remove_all(dir);
}

TEST(Log, SameSpecAtTheOtherSizeSaysQuickOrFull) {
  const fs::path dir = scratch("size");
  const std::string spec = std::string(test_source_dir()) + "/experiments/demo/baselines.toml";
  const std::string out = (dir / "o").string();
  ASSERT_EQ(test::cli_run("run " + spec + " --out " + out + " --quick -q").exit_code, 0);
  const auto full = test::cli_run("run " + spec + " --out " + out + " -q");
  EXPECT_EQ(full.exit_code, 2);
  EXPECT_NE(full.out.find("holds the quick-size (--quick) results of baselines"), std::string::npos)
      << full.out;
  EXPECT_NE(full.out.find("this run is full-size"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("--force-new"), std::string::npos) << full.out;
  // Another spec is still "a different spec".
  const auto other =
      test::cli_run("run " + spec + " --out " + out + " --quick --set eval.n=100 -q");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.out.find("holds results of a different spec"), std::string::npos) << other.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
