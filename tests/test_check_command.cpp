// `attnlab check SPEC --out DIR` (and `attnlab reproduce SPEC.toml`): a spec outside
// experiments/ gets the verdicts, report and exit code `reproduce` gives its group's copy on
// the same runs; bad input is one line, exit 2, nothing created.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "test_paths.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// (id, verdict, detail) of every claim of reproduce.json's first section.
std::vector<std::string> verdicts(const std::string& reproduce_json) {
  const auto j = nlohmann::json::parse(test::file_read(reproduce_json));
  std::vector<std::string> out;
  for (const auto& c : j.at("sections").at(0).at("claims"))
    out.push_back(c.at("id").get<std::string>() + " " + c.at("verdict").get<std::string>() + " " +
                  c.at("detail").get<std::string>());
  return out;
}

TEST(CheckCommand, ASpecOutsideExperimentsGetsTheVerdictsReproduceGives) {
  const fs::path dir = fs::temp_directory_path() / ("attnlab_check_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "mine");
  const std::string demo = std::string(test_source_dir()) + "/experiments/demo/baselines.toml";
  const std::string mine = (dir / "mine" / "my_baselines.toml").string();
  fs::copy_file(demo, mine);
  const std::string rep = (dir / "rep").string();
  const auto r = test::cli_run("reproduce demo --quick -q --out " + rep);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
  const auto c = test::cli_run("check " + mine + " --quick -q --out " + rep + "/baselines");
  EXPECT_EQ(c.exit_code, r.exit_code) << c.out;
  const auto want = verdicts(rep + "/reproduce.json");
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(verdicts(rep + "/baselines/reproduce.json"), want);
  EXPECT_TRUE(fs::exists(rep + "/baselines/report.html"));
  EXPECT_TRUE(fs::exists(rep + "/baselines/figures/index.json"));
  EXPECT_NE(c.out.find("report: " + rep + "/baselines/report.md"), std::string::npos) << c.out;
  // `reproduce SPEC.toml --out DIR` runs the spec into DIR itself, with the same verdicts.
  const auto own =
      test::cli_run("reproduce " + mine + " --quick -q --out " + (dir / "own").string());
  EXPECT_EQ(own.exit_code, r.exit_code) << own.out;
  EXPECT_TRUE(fs::exists(dir / "own" / "results.sqlite"));
  EXPECT_EQ(verdicts((dir / "own" / "reproduce.json").string()), want);

  // Bad input: one line, exit 2.
  const auto txt = test::cli_run("check " + (dir / "spec.txt").string() + " --out " + rep);
  EXPECT_EQ(txt.exit_code, 2);
  EXPECT_NE(txt.out.find("is not a .toml spec file"), std::string::npos) << txt.out;
  const auto empty = test::cli_run("check " + mine + " --quick --out " + (dir / "none").string());
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.out.find((dir / "none").string() + ": no results.sqlite here; run `attnlab run "
                                                     "SPEC --out"),
            std::string::npos)
      << empty.out;
  EXPECT_FALSE(fs::exists(dir / "none"));
  std::string text = test::file_read(mine);
  text.replace(text.find("n = 2000"), 8, "n = 100");
  test::file_write((dir / "changed.toml").string(), text);
  const auto other = test::cli_run("check " + (dir / "changed.toml").string() + " --quick --out " +
                                   rep + "/baselines");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.out.find("eval.n: stored 2000, now 100"), std::string::npos) << other.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
