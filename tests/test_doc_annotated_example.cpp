// docs/spec-format.md's "Complete annotated example" against the shipped spec it annotates
// (experiments/demo/baselines.toml): the doc's text plans the same runs (every run id, full and
// --quick), and the counts its comments state (seeds, runs, the `run --quick` command's runs)
// are the shipped spec's. A change to the spec that the doc does not follow fails here.
#include <gtest/gtest.h>
#include "test_paths.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "experiment/plan.h"
#include "experiment/spec.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The section of the doc from its heading to the next "## " heading.
std::string doc_section(const std::string& doc, const std::string& heading) {
  const size_t at = doc.find("\n## " + heading + "\n");
  if (at == std::string::npos) return "";
  const size_t end = doc.find("\n## ", at + 1);
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The first number a regex's group 1 matches in `text`, or -1.
long first_number(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? std::stol(m[1]) : -1;
}

std::vector<std::string> run_ids(const Spec& spec) {
  std::vector<std::string> ids;
  for (const auto& p : plan_make(spec)) ids.push_back(p.run_id);
  return ids;
}

TEST(DocAnnotatedExample, PlansTheShippedSpecsRunsWithTheCountsItStates) {
  const fs::path root = test_source_dir();
  const std::string section =
      doc_section(read_text(root / "docs" / "spec-format.md"), "Complete annotated example");
  ASSERT_FALSE(section.empty()) << "no '## Complete annotated example' in docs/spec-format.md";
  ASSERT_NE(section.find("experiments/demo/baselines.toml"), std::string::npos);
  const size_t open = section.find("```toml\n"), close = section.find("\n```", open + 1);
  ASSERT_NE(open, std::string::npos);
  const std::string toml = section.substr(open + 8, close - open - 8);
  const fs::path doc_spec = fs::path(testing::TempDir()) / "baselines.toml";
  std::ofstream(doc_spec) << toml << "\n";
  const std::string shipped = (root / "experiments" / "demo" / "baselines.toml").string();

  for (bool quick : {false, true}) {
    const Spec ours = spec_load(doc_spec.string(), {}, quick),
               theirs = spec_load(shipped, {}, quick);
    EXPECT_EQ(run_ids(ours), run_ids(theirs)) << "quick = " << quick;
  }
  const Spec full = spec_load(shipped, {}, false), quick = spec_load(shipped, {}, true);
  const long full_runs = static_cast<long>(plan_make(full).size());
  const long quick_runs = static_cast<long>(plan_make(quick).size());
  EXPECT_EQ(first_number(toml, R"(\nseeds = (\d+) +# seeds)"),
            static_cast<long>(full.seeds.size()));
  EXPECT_EQ(first_number(toml, R"(x (\d+) seeds = \d+ runs)"),
            static_cast<long>(full.seeds.size()));
  EXPECT_EQ(first_number(toml, R"(seeds = (\d+) runs)"), full_runs);
  EXPECT_EQ(first_number(toml, R"(--quick: (\d+) seeds)"), static_cast<long>(quick.seeds.size()));
  EXPECT_EQ(first_number(toml, R"(\[quick\.sweep\].*= (\d+) runs)"), quick_runs);
  EXPECT_EQ(first_number(section, R"(baselines\.toml --out runs/demo --quick +# (\d+) runs)"),
            quick_runs);
}

}  // namespace
}  // namespace attn
