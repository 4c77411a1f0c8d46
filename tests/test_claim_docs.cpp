// Every claim of a shipped spec with doc = "docs/NAME.md#anchor" points at a paragraph that
// exists: the file is in the repository and holds the anchor, as <a id="anchor"></a> or as a
// heading whose GitHub anchor it is. The claims that fail in our protocol or are known to be
// fragile have one (the report links them).
#include "test_paths.h"
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "cli_helpers.h"
#include "doc_table_helpers.h"
#include "experiment/spec.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// GitHub's anchor of a heading: lower case, spaces to '-', other punctuation dropped.
std::string heading_anchor(const std::string& heading) {
  std::string out;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80)
      out += static_cast<char>(std::tolower(c));
    else if (c == ' ') out += '-';
  }
  return out;
}

std::set<std::string> anchors_of(const std::string& text) {
  std::set<std::string> anchors;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) {
      const size_t start = line.find_first_not_of('#');
      anchors.insert(heading_anchor(line.substr(line.find_first_not_of(' ', start))));
    }
    for (size_t at = line.find("<a id=\""); at != std::string::npos;
         at = line.find("<a id=\"", at + 1))
      anchors.insert(line.substr(at + 7, line.find('"', at + 7) - at - 7));
  }
  return anchors;
}

TEST(ClaimDocs, HeadingAnchorsFollowGitHub) {
  EXPECT_EQ(heading_anchor("Why Match3 is not learned (investigation, claims left failing)"),
            "why-match3-is-not-learned-investigation-claims-left-failing");
  EXPECT_EQ(anchors_of("## E5: the read-out\ntext <a id=\"e4-attention-pattern\"></a> more\n"),
            (std::set<std::string>{"e5-the-read-out", "e4-attention-pattern"}));
}

TEST(ClaimDocs, ShippedClaimDocsExist) {
  const fs::path root = test_source_dir();
  std::set<std::string> linked;
  for (const auto& entry : fs::recursive_directory_iterator(root / "experiments")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".toml") continue;
    const Spec spec = spec_load(entry.path().string(), {}, false);
    for (const auto& claim : spec.claims) {
      if (claim.doc.empty()) continue;
      const std::string file = claim.doc.substr(0, claim.doc.find('#'));
      const std::string anchor = claim.doc.substr(claim.doc.find('#') + 1);
      ASSERT_TRUE(fs::exists(root / file)) << entry.path() << " " << claim.id << ": " << claim.doc;
      EXPECT_TRUE(anchors_of(test::file_read((root / file).string())).count(anchor))
          << entry.path() << " " << claim.id << ": no anchor " << anchor << " in " << file;
      linked.insert(spec.name + "/" + claim.id);
    }
  }
  // The claims known to fail or to be fragile in the quick or full runs (docs/sanford2023.md,
  // docs/constructions.md, docs/fu2023.md) say where that is explained.
  for (const char* id :
       {"e4_heads_vs_kernel/error_falls_with_heads", "e3_brfa_vs_rfa/rfa_samples_grow_with_d",
        "e3_brfa_vs_rfa/brfa_sample_gain_grows_with_d",
        "e1_qsa_representation/m_needed_nearly_flat_in_N",
        "e4_attention_pattern/attention_on_the_set",
        "e4_attention_pattern/attention_mass_grows_with_m",
        "e5_match2_vs_match3/third_order_learns_match3",
        "e5_match2_vs_match3/attention_fails_match3",
        "e5_match2_vs_match3/attention_learns_match2",
        "e1_qsa_random_codes/ratio_flat_in_N",
        "e5_trained_on_hard_instances/two_bits_degrade_disj"})
    EXPECT_TRUE(linked.count(id)) << id << " has no doc";
}

// Every FAIL or INCONCLUSIVE line of every published report (docs/results/GROUP/report.md)
// links the paragraph that explains it, and the link resolves: "([why](../../FILE.md#anchor))"
// names a file of docs/ holding that anchor.
TEST(ClaimDocs, PublishedFailuresLinkTheirExplanation) {
  const fs::path results = fs::path(test_source_dir()) / "docs" / "results";
  int reports = 0, lines = 0;
  for (const auto& group : fs::directory_iterator(results)) {
    const fs::path report = group.path() / "report.md";
    if (!fs::exists(report)) continue;
    ++reports;
    std::istringstream in(test::file_read(report.string()));
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("| **FAIL**") && !line.starts_with("| **INCONCLUSIVE**")) continue;
      ++lines;
      const std::string target = test::why_link(line);
      if (target.empty()) {
        ADD_FAILURE() << report << ": no ([why](...)) link on " << line.substr(0, line.find(':'));
        continue;
      }
      const size_t hash = target.find('#');
      ASSERT_NE(hash, std::string::npos) << report << ": " << target << " names no anchor";
      const fs::path file = group.path() / target.substr(0, hash);
      ASSERT_TRUE(fs::exists(file)) << report << ": " << target << " (no " << file << ")";
      EXPECT_TRUE(anchors_of(test::file_read(file.string())).count(target.substr(hash + 1)))
          << report << ": no anchor in " << target;
    }
  }
  EXPECT_GE(reports, 4);  // constructions, fu2023, hop2024, sanford2023 at least
  EXPECT_GE(lines, 1);    // the published reports do have failing or undecided claims
}

}  // namespace
}  // namespace attn
