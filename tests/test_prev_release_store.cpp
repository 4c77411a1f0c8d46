// A results directory written by the release before the parameter clean-up of issue #18
// (tests/data/prev_release: spec.toml and store/) resumes with this build: zero runs redone,
// every stored run unchanged, and a fresh run of the spec stores the same ids, configurations
// and parameter columns as the old release did.
#include "test_paths.h"
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli_helpers.h"
#include "experiment/store.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fixture() { return fs::path(test_source_dir()) / "tests" / "data" / "prev_release"; }

// Keys added after the fixture was stored, out of run ids at their default (ParamSpec::
// id_omit_default): a fresh run stores them as parameter columns, at that default, besides the
// old release's columns (every other column must be the same).
const std::vector<std::pair<std::string, std::string>> kAddedSince = {{"eval.N", "0"}};

// Everything a stored run holds except the timing (wall seconds, rss, finish time).
std::string run_text(const StoredRun& r, bool with_metrics) {
  std::string out = r.run_id + " " + std::to_string(r.point) + " " + std::to_string(r.seed) + " " +
                    r.status + " " + r.error + "\n" + r.config_json + "\n";
  for (const auto& [k, v] : r.params)
    if (std::find(kAddedSince.begin(), kAddedSince.end(), std::make_pair(k, v)) ==
        kAddedSince.end())
      out += k + "=" + v + "\n";
  for (const auto& k : r.swept) out += "swept " + k + "\n";
  if (!with_metrics) return out;
  for (const auto& [k, v] : r.metrics) out += k + "=" + std::to_string(v) + "\n";
  out += "series " + std::to_string(r.series.size()) + "\n";
  return out;
}

std::vector<std::string> runs_text(const fs::path& store, bool with_metrics) {
  std::vector<std::string> out;
  for (const auto& r : ResultsStore(store.string(), StoreAccess::kRead).load_runs())
    out.push_back(run_text(r, with_metrics));
  return out;
}

class PrevReleaseStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnlab_prev_release_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy(fixture() / "store", dir_ / "store", fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PrevReleaseStore, ResumesWithZeroRunsRedoneAndValuesUnchanged) {
  const fs::path stored = fixture() / "store" / "results.sqlite";
  const std::vector<std::string> before = runs_text(stored, true);
  ASSERT_EQ(before.size(), 7u);
  const auto r = test::cli_run("run " + (fixture() / "spec.toml").string() + " --out " +
                               (dir_ / "store").string() + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("7 runs: 0 ran (0 ok, 0 failed), 7 already done"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("not in the current plan"), std::string::npos) << r.out;
  EXPECT_EQ(runs_text(dir_ / "store" / "results.sqlite", true), before);
}

TEST_F(PrevReleaseStore, AFreshRunStoresTheSameIdsConfigurationsAndColumns) {
  const auto r = test::cli_run("run " + (fixture() / "spec.toml").string() + " --out " +
                               (dir_ / "fresh").string() + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(runs_text(dir_ / "fresh" / "results.sqlite", false),
            runs_text(fixture() / "store" / "results.sqlite", false));
}

}  // namespace
}  // namespace attn
