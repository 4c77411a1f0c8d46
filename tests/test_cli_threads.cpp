// `attnlab run` of a small sanford2023-style spec (an attention unit on qsa, fresh samples,
// a sweep over m, two seeds) at --threads 1 and --threads 2: results.csv's metric columns
// and series.csv are byte-identical (only the timings fit_seconds, wall_seconds and the
// memory peak_rss_mb may differ).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

// results.csv without its fit_seconds, wall_seconds and peak_rss_mb columns (what a run
// cost, not what it found).
std::string results_without_costs(const std::string& csv) {
  const std::vector<std::string> lines = split(csv, '\n');
  if (lines.empty()) return "";
  const std::vector<std::string> header = split(lines[0], ',');
  std::string out;
  for (const std::string& line : lines) {
    const std::vector<std::string> fields = split(line, ',');
    for (size_t i = 0; i < fields.size(); ++i)
      if (i >= header.size() || (header[i] != "fit_seconds" && header[i] != "wall_seconds" &&
                                 header[i] != "peak_rss_mb"))
        out += fields[i] + ",";
    out += "\n";
  }
  return out;
}

TEST(CliThreads, RunResultsDoNotDependOnTheThreadCount) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_cli_threads_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string spec = (dir / "spec.toml").string();
  test::file_write(spec,
                   "[experiment]\nname = \"threads\"\nseeds = 2\n"
                   "[task]\nname = \"qsa\"\nN = 6\nq = 2\nd_out = 2\n"
                   "[model]\nname = \"attention\"\nphi_width = 16\n"
                   "[train]\nn = 0\nsteps = 120\nbatch = 128\nlr = 3e-3\neval_every = 40\n"
                   "val_n = 64\n[eval]\nn = 100\n[sweep]\n\"model.m\" = [2, 4]\n");
  std::string results[2], series[2];
  for (int threads : {1, 2}) {
    const std::string out = (dir / ("out" + std::to_string(threads))).string();
    const auto r = test::cli_run("run " + spec + " --out " + out + " -q --jobs 1 --threads " +
                                 std::to_string(threads));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    results[threads - 1] = test::file_read(out + "/results.csv");
    series[threads - 1] = test::file_read(out + "/series.csv");
  }
  ASSERT_NE(results[0].find("val_loss"), std::string::npos) << results[0];
  ASSERT_NE(series[0].find("val_loss"), std::string::npos);
  EXPECT_EQ(results_without_costs(results[0]), results_without_costs(results[1]));
  EXPECT_EQ(series[0], series[1]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
