// Tests for experiment/report: markdown table cells escape `|`, HTML shows `code` spans as
// <code>, a failing claim links to the paragraph of the docs its spec names (doc =
// "docs/NAME.md#anchor"), and every plot without a figure is listed with its reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_helpers.h"
#include "doc_table_helpers.h"
#include "core/home.h"
#include "experiment/report.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using ReportTest = test::SpecFileTest;

TEST(ReportText, MarkdownCellsEscapePipesAndNewlines) {
  EXPECT_EQ(report_md_cell("over {task.d=8|16|32}"), "over {task.d=8\\|16\\|32}");
  EXPECT_EQ(report_md_cell("two\nlines"), "two lines");
  EXPECT_EQ(report_md_cell("plain"), "plain");
}

TEST(ReportText, HtmlShowsBacktickSpansAsCode) {
  EXPECT_EQ(report_html_text("Spec `a<b.toml`; results in `dir`."),
            "Spec <code>a&lt;b.toml</code>; results in <code>dir</code>.");
  EXPECT_EQ(report_html_text("one ` alone & more"), "one ` alone &amp; more");
}

const char* kSpec = R"(
[experiment]
name = "t"
seeds = 1
[task]
name = "qsa"
N = 8
[model]
name = "linear"
[train]
n = 50
[eval]
n = 20
[[plot]]
name = "drawn"
metric = "test_nmse"
x = "train.n"
[[plot]]
name = "empty"
metric = "test_nmse"
x = "train.n"
where = { "model.name" = "mean" }
[[plot]]
name = "unexplained"
metric = "test_nmse"
x = "train.n"
[[claim]]
id = "fails"
text = "fails, with a doc"
type = "below"
metric = "test_nmse"
threshold = 0
doc = "docs/sanford2023.md#e4-attention-pattern"
[[claim]]
id = "passes"
text = "passes, with a doc"
type = "below"
metric = "test_nmse"
threshold = 2
doc = "docs/sanford2023.md#e4-attention-pattern"
)";

TEST_F(ReportTest, FailingClaimsLinkTheirDocAndMissingFiguresAreListed) {
  ReportSection s;
  s.name = "t";
  s.description = "a `code` word";
  s.spec_path = write(kSpec);
  s.dir = path("run");
  s.runs_ok = 1;
  s.claims = {ClaimResult{"fails", "fails, with a doc", Verdict::Fail,
                          "mean test_nmse over {task.N=8|16} = 1 >= 0"},
              ClaimResult{"passes", "passes, with a doc", Verdict::Pass, "mean test_nmse = 1 < 2"}};
  fs::create_directories(fs::path(s.dir) / "figures");
  test::file_write(s.dir + "/figures/drawn.png", "not really a png");
  test::file_write(
      s.dir + "/figures/index.json",
      R"([{"name": "drawn", "title": "Drawn", "png": "drawn.png", "svg": null, "runs_used": 1}])");
  test::file_write(
      s.dir + "/figures/skipped.json",
      R"({"empty": "no ok run with a test_nmse value matches )"
      R"(where={\"model.name\": [\"mean\"]}"})");
  const std::string out = path("report");
  report_write(out, "title", {s});
  const std::string md = test::file_read(out + "/report.md");
  const std::string html = test::file_read(out + "/report.html");

  // The failing claim's row: escaped pipes (a row of exactly three columns) and a link whose
  // target, relative to the report, is the docs file.
  const size_t row = md.find("| **FAIL** |");
  ASSERT_NE(row, std::string::npos) << md;
  const std::string line = md.substr(row, md.find('\n', row) - row);
  EXPECT_NE(line.find("{task.N=8\\|16}"), std::string::npos) << line;
  const std::string target = test::why_link(line);
  ASSERT_FALSE(target.empty()) << line;
  EXPECT_EQ(target.substr(target.find('#')), "#e4-attention-pattern");
  EXPECT_TRUE(fs::exists(fs::path(out) / target.substr(0, target.find('#')))) << target;
  EXPECT_TRUE(target.ends_with("docs/sanford2023.md#e4-attention-pattern")) << target;
  // The passing claim has no link.
  const size_t pass = md.find("| **PASS** |");
  ASSERT_NE(pass, std::string::npos);
  EXPECT_EQ(md.substr(pass, md.find('\n', pass) - pass).find("why"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"" + target + "\">why</a>"), std::string::npos);

  // Figures not drawn: the skipped one with the script's reason, the other without one.
  EXPECT_NE(md.find("Figures not drawn:"), std::string::npos) << md;
  EXPECT_NE(md.find("- `empty`: no ok run with a test_nmse value matches"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- `unexplained`: not drawn"), std::string::npos) << md;
  EXPECT_EQ(md.find("- `drawn`"), std::string::npos) << md;
  EXPECT_NE(html.find("<li><code>empty</code>: no ok run"), std::string::npos);
  EXPECT_NE(html.find("<p>a <code>code</code> word</p>"), std::string::npos);
  EXPECT_EQ(html.find('`'), std::string::npos);
}

TEST_F(ReportTest, PathsAreRelativeToTheReportOrTheRepository) {
  // A shipped spec reads as its path in the repository, its results as the report's sub-folder:
  // nothing of the machine's folders (the build tree, the output's absolute path) is shown.
  const std::string out = path("report");
  ReportSection s;
  s.name = "baselines";
  s.spec_path = (fs::path(attnlab_home()) / "experiments" / "demo" / "baselines.toml").string();
  s.dir = out + "/baselines";
  fs::create_directories(s.dir);
  report_write(out, "title", {s});
  const std::string md = test::file_read(out + "/report.md");
  EXPECT_NE(md.find("Spec `experiments/demo/baselines.toml`; results in `baselines`;"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find(out), std::string::npos) << md;
  EXPECT_EQ(md.find(attnlab_home()), std::string::npos) << md;
  EXPECT_EQ(report_path_text(out, out), ".");
  EXPECT_EQ(report_path_text(out + "/a/../b", out), "b");
  EXPECT_EQ(report_path_text("/nonexistent-root/x.toml", out), "/nonexistent-root/x.toml");
}

TEST_F(ReportTest, ClaimDocMustNameADocsParagraph) {
  const std::string base = std::string(kSpec).substr(0, std::string(kSpec).find("[[claim]]"));
  for (const char* bad : {"sanford2023.md#x", "docs/sanford2023.md", "docs/x.txt#a",
                          "docs/../x.md#a", "docs/x.md#"}) {
    const std::string msg = error(base + "[[claim]]\nid = \"c\"\ntext = \"t\"\ntype = \"below\"\n"
                                         "metric = \"m\"\nthreshold = 1\ndoc = \"" + bad + "\"\n");
    EXPECT_NE(msg.find("docs/NAME.md#anchor"), std::string::npos) << bad << ": " << msg;
  }
}

}  // namespace
}  // namespace attn
