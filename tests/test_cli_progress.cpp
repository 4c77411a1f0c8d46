// Progress of `attnlab run` and of a gradient fit (`attnlab fit`) in a log (stderr not a
// terminal): timed lines ending in a last "done" line, none with -q.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli_helpers.h"
#include "kept_variable.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// 12 quick runs of the linear baseline on qsa.
const char* kSpec = R"(
[experiment]
name = "progress_test"
seeds = 4
[task]
name = "qsa"
N = 6
q = 2
d_out = 2
[model]
name = "linear"
[eval]
n = 200
[sweep]
"train.n" = [100, 200, 400]
)";

TEST(CliProgress, RunWritesTimedLinesToALogAndNoneWithQuiet) {
  const fs::path dir = fs::temp_directory_path() / ("attnlab_progress_" + std::to_string(getpid()));
  fs::create_directories(dir);
  test::file_write((dir / "spec.toml").string(), kSpec);
  const test::KeptVariable interval("ATTNLAB_PROGRESS_INTERVAL"), off("ATTNLAB_NO_PROGRESS");
  interval.set("0.01");
  off.unset();
  const std::string run = "run " + (dir / "spec.toml").string() + " --jobs 1 --out ";
  const auto logged = test::cli_run(run + (dir / "a").string());
  const auto quiet = test::cli_run(run + (dir / "b").string() + " -q");
  fs::remove_all(dir);
  ASSERT_EQ(logged.exit_code, 0) << logged.out;
  EXPECT_NE(logged.out.find("\nruns: 12/12 (100%), "), std::string::npos) << logged.out;
  EXPECT_NE(logged.out.find(", done\n"), std::string::npos) << logged.out;
  EXPECT_EQ(logged.out.find('\r'), std::string::npos) << "a terminal bar in a log";
  ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("\nruns: "), std::string::npos) << quiet.out;
  EXPECT_NE(quiet.out.rfind("runs: ", 0), 0u) << quiet.out;
}

TEST(CliProgress, AGradientFitLogsItsStepsAndNoneWithQuiet) {
  const fs::path dir = fs::temp_directory_path() / ("attnlab_fitprog_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string data = (dir / "qsa.npz").string();
  ASSERT_EQ(test::cli_run("data qsa --n 64 --seed 0 -q -o " + data).exit_code, 0);
  const test::KeptVariable interval("ATTNLAB_PROGRESS_INTERVAL"), off("ATTNLAB_NO_PROGRESS");
  interval.set("0.01");
  off.unset();
  const std::string fit = "fit attention --in " + data +
                          " --set model.m=4 --set train.steps=3000 --set train.batch=8 --save ";
  const auto logged = test::cli_run(fit + (dir / "a.safetensors").string());
  const auto quiet = test::cli_run(fit + (dir / "b.safetensors").string() + " -q");
  const auto ridge = test::cli_run("fit linear --in " + data + " --save " +
                                   (dir / "c.safetensors").string());
  fs::remove_all(dir);
  ASSERT_EQ(logged.exit_code, 0) << logged.out;
  EXPECT_NE(logged.out.find("fit attention, steps: 3000/3000 (100%), "), std::string::npos)
      << logged.out;
  EXPECT_NE(logged.out.find(", done\n"), std::string::npos) << logged.out;
  ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_EQ(quiet.out, "") << "-q prints nothing";
  ASSERT_EQ(ridge.exit_code, 0) << ridge.out;
  EXPECT_EQ(ridge.out.find("steps:"), std::string::npos) << "a ridge fit has no steps";
}

}  // namespace
}  // namespace attn
