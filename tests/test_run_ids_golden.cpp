// The run ids of every point of every shipped spec (experiments/<group>/*.toml), full size
// and --quick, equal the golden list tests/data/run_ids_golden.txt, written by the release
// before the parameter clean-up of issue #18: stored results keep their ids (a store is
// resumed by id, so a changed id would run a stored point again).
//
// Line format: "<group>/<spec>.toml full|quick <point index> <run id>", specs in path order.
// To make a new list (only when ids are meant to change, which resuming stores forbids):
// ATTNLAB_WRITE_RUN_IDS=FILE build/tests/attnlab_tests --gtest_filter='RunIdsGolden.*' writes
// the ids the code plans now to FILE (the test still compares them with the golden list), and
// copying FILE over tests/data/run_ids_golden.txt is a deliberate, reviewed step. A new spec's
// points are added the same way, after checking that the diff only adds lines
// (e3_mlp_rank_pair, 2026-12-02).
#include "test_paths.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "experiment/plan.h"
#include "experiment/spec.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string run_id_lines() {
  const fs::path root = fs::path(test_source_dir()) / "experiments";
  std::vector<fs::path> specs;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && entry.path().extension() == ".toml")
      specs.push_back(entry.path());
  std::sort(specs.begin(), specs.end());
  std::ostringstream out;
  for (const auto& path : specs)
    for (bool quick : {false, true})
      for (const auto& p : plan_make(spec_load(path.string(), {}, quick)))
        out << fs::relative(path, root).string() << (quick ? " quick " : " full ") << p.index
            << " " << p.run_id << "\n";
  return out.str();
}

TEST(RunIdsGolden, EveryShippedPointKeepsItsRunId) {
  const std::string golden_path =
      (fs::path(test_source_dir()) / "tests" / "data" / "run_ids_golden.txt").string();
  const std::string lines = run_id_lines();
  if (const char* out = std::getenv("ATTNLAB_WRITE_RUN_IDS")) test::file_write(out, lines);
  const std::string golden = test::file_read(golden_path);
  ASSERT_FALSE(golden.empty()) << golden_path << " is missing";
  if (lines == golden) return;
  // Name the first point that differs.
  std::istringstream a(lines), b(golden);
  std::string got, want;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, got));
    const bool more_b = static_cast<bool>(std::getline(b, want));
    if (!more_a && !more_b) break;
    if (got != want) {
      ADD_FAILURE() << "line " << line << ": plan gives '" << got << "', golden list has '" << want
                    << "'";
      break;
    }
  }
}

}  // namespace
}  // namespace attn
