// The claim kinds' table (src/experiment/claim_kinds.cpp) is complete: every ClaimKind has its
// row in enum order, a name that parses back to it, an evaluate function that runs, a
// description and an anchor in docs/spec-format.md whose row of the claim types table says
// the same as the code; and the loader validates a claim from its row: each missing need
// with its message, a key the kind does not use, a number that is not finite, an id used twice,
// an `along` or `size` that is not a swept key with numeric values.
#include <gtest/gtest.h>
#include "test_paths.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "doc_table_helpers.h"
#include "experiment/claim_kinds.h"
#include "experiment/claims.h"
#include "experiment/spec_fields.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string spec_format_md() {
  return test::file_read((fs::path(test_source_dir()) / "docs" / "spec-format.md").string());
}

bool listed(const std::vector<std::string>& names, const std::string& name) {
  for (const auto& n : names)
    if (n == name) return true;
  return false;
}

std::vector<std::string> need_keys(const ClaimKindRow& row) {
  std::vector<std::string> keys;
  for (const auto& need : row.needs)
    for (const auto& k : need.keys)
      if (!listed(keys, k)) keys.push_back(k);
  return keys;
}

TEST(ClaimKinds, EveryRowIsCompleteAndParsesBack) {
  const std::string doc = spec_format_md();
  const std::vector<std::string> fields = field_keys(claim_fields());
  ASSERT_EQ(claim_kinds().names().size(), kind_count<ClaimKind>);
  for (size_t k = 0; k < kind_count<ClaimKind>; ++k) {
    const ClaimKindRow& row = claim_kinds().rows[k];
    SCOPED_TRACE(row.name);
    EXPECT_EQ(static_cast<size_t>(row.kind), k) << "rows must be in enum order";
    const ClaimKind* parsed = claim_kinds().find(row.name);
    ASSERT_NE(parsed, nullptr);
    EXPECT_EQ(*parsed, row.kind);
    EXPECT_EQ(std::string(claim_kinds().name(row.kind)), row.name);
    EXPECT_NE(row.evaluate, nullptr);
    EXPECT_GT(std::string(row.description).size(), 10u);
    EXPECT_NE(doc.find("<a id=\"" + std::string(row.doc_anchor) + "\"></a>"), std::string::npos)
        << "no anchor " << row.doc_anchor << " in docs/spec-format.md";
    for (const auto& need : row.needs) {
      EXPECT_FALSE(need.keys.empty());
      EXPECT_EQ(need.message.rfind("needs ", 0), 0u) << need.message;
    }
    for (const auto& key : need_keys(row)) {
      EXPECT_TRUE(listed(fields, key)) << key << " is not a [[claim]] key";
      EXPECT_FALSE(listed(claim_common_keys(), key)) << key;
      EXPECT_FALSE(listed(row.optional, key)) << key << " is both needed and optional";
    }
    for (const auto& key : row.optional) {
      EXPECT_TRUE(listed(fields, key)) << key << " is not a [[claim]] key";
      EXPECT_FALSE(listed(claim_common_keys(), key)) << key;
    }
  }
  EXPECT_EQ(claim_kinds().find("smaller"), nullptr);
  // Every [[claim]] key is common or used by some kind (else no spec could give it).
  for (const auto& key : fields) {
    bool used = listed(claim_common_keys(), key);
    for (const ClaimKindRow& row : claim_kinds())
      used = used || listed(need_keys(row), key) || listed(row.optional, key);
    EXPECT_TRUE(used) << key << " is used by no claim kind";
  }
}

TEST(ClaimKinds, DocTypesTableSaysWhatTheRowsSay) {
  const auto rows = test::doc_table(spec_format_md(), "## [[claim]]", "| type | needs |");
  ASSERT_EQ(rows.size(), kind_count<ClaimKind>) << "one row per claim kind, in enum order";
  for (size_t k = 0; k < kind_count<ClaimKind>; ++k) {
    const ClaimKindRow& row = claim_kinds().rows[k];
    const auto& cells = rows[k];
    ASSERT_EQ(cells.size(), 4u);
    SCOPED_TRACE(row.name);
    EXPECT_EQ(test::anchor_of(cells[0]), row.doc_anchor);
    EXPECT_EQ(test::backticked(cells[0]), std::vector<std::string>{row.name});
    EXPECT_EQ(test::backticked(cells[1]), need_keys(row));
    EXPECT_EQ(test::backticked(cells[2]), row.optional);
    EXPECT_EQ(cells[3], row.description);
  }
}

using ClaimKindSpecTest = test::SpecFileTest;

// 8 lines: a claim appended starts at line 9.
const char* kBase =
    "\n[task]\nname = \"qsa\"\n[model]\nname = \"linear\"\n[sweep]\n\"task.N\" = [8, 16]\n"
    "\"task.q\" = [1, 2]\n";

// A value for each key a kind may need.
std::string key_line(const std::string& key) {
  if (key == "a") return "a = { seed = 0 }\n";
  if (key == "b") return "b = { seed = 1 }\n";
  if (key == "along") return "along = \"task.N\"\n";
  if (key == "size") return "size = \"task.q\"\n";
  if (key == "factor") return "factor = 2\n";
  if (key == "exponent") return "exponent = -0.5\n";
  if (key == "slice") return "slice = \"k\"\n";
  return key + " = 1\n";
}

// A [[claim]] of `kind` with every key it needs except `without`.
std::string claim_text(const ClaimKindRow& row, const std::string& without = "") {
  std::string text =
      std::string("[[claim]]\ntype = \"") + row.name + "\"\nmetric = \"m\"\ntext = \"t\"\n";
  for (const auto& key : need_keys(row))
    if (key != without) text += key_line(key);
  return text;
}

TEST_F(ClaimKindSpecTest, EveryKindLoadsWithItsNeedsAndEvaluates) {
  for (size_t k = 0; k < kind_count<ClaimKind>; ++k) {
    const ClaimKindRow& row = claim_kinds().rows[k];
    SCOPED_TRACE(row.name);
    const Spec spec = load(std::string(kBase) + claim_text(row));
    ASSERT_EQ(spec.claims.size(), 1u);
    EXPECT_EQ(spec.claims[0].type, row.kind);
    // No runs: each kind's function answers, and nothing is decided.
    ASSERT_NE(row.evaluate, nullptr);
    const ClaimResult r = claim_evaluate(spec.claims[0], {});
    EXPECT_EQ(r.id, "claim1");
    EXPECT_TRUE(r.verdict == Verdict::NotEvaluated || r.verdict == Verdict::Inconclusive)
        << verdict_name(r.verdict) << ": " << r.detail;
    EXPECT_FALSE(r.detail.empty());
  }
}

TEST_F(ClaimKindSpecTest, EachMissingNeedIsNamedInItsRowsWords) {
  for (size_t k = 0; k < kind_count<ClaimKind>; ++k) {
    const ClaimKindRow& row = claim_kinds().rows[k];
    for (const auto& need : row.needs) {
      const std::string msg = error(std::string(kBase) + claim_text(row, need.keys.front()));
      const std::string want = "claim 'claim1' (" + std::string(row.name) + ") " + need.message;
      EXPECT_NE(msg.find(want), std::string::npos) << "want '" << want << "' in: " << msg;
    }
  }
}

TEST_F(ClaimKindSpecTest, KeysTheKindDoesNotUseAndNonFiniteNumbersAreRefused) {
  const std::string below = std::string(kBase) + claim_text(claim_kinds().row(ClaimKind::below));
  EXPECT_EQ(error(below), "");
  EXPECT_NE(
      error(below + "along = \"task.N\"\n")
          .find("claim 'claim1' (type = \"below\") does not use along; remove it, or set type "
                "to one that does (decreasing or increasing or ratio_increasing or flat or "
                "size_increasing or size_flat or size_ratio_increasing or power_law or "
                "reach_growth or size_equals_along); a "
                "below claim takes metric, threshold, where, confidence, doc"),
      std::string::npos)
      << error(below + "along = \"task.N\"\n");
  EXPECT_NE(error(below + "factor = 2\n").find("does not use factor"), std::string::npos);
  const std::string goal_line = "spec.toml:14: ";  // [[claim]] at 9, goal its 5th key
  EXPECT_NE(error(below + "goal = \"above\"\n")
                .find(goal_line + "claim 'claim1' (type = \"below\") does not use goal"),
            std::string::npos)
      << error(below + "goal = \"above\"\n");
  const std::string power =
      std::string(kBase) + claim_text(claim_kinds().row(ClaimKind::power_law));
  EXPECT_EQ(error(power + "margin = 0.1\ncompare = \"at_most\"\n"), "");
  EXPECT_NE(error(power + "threshold = 1\n").find("(type = \"power_law\") does not use threshold"),
            std::string::npos);
  std::string nan_threshold = below;
  nan_threshold.replace(nan_threshold.find("threshold = 1"), 13, "threshold = nan");
  EXPECT_NE(error(nan_threshold).find("claim.threshold = nan must be a finite number"),
            std::string::npos)
      << error(nan_threshold);
  EXPECT_NE(error(power + "margin = inf\n").find("claim.margin = inf must be a finite number"),
            std::string::npos);
  std::string inf_exponent = power;
  inf_exponent.replace(inf_exponent.find("exponent = -0.5"), 15, "exponent = -inf");
  EXPECT_NE(error(inf_exponent).find("claim.exponent = -inf must be a finite number"),
            std::string::npos);
}

TEST_F(ClaimKindSpecTest, IdsAndPlotNamesAreUniqueAndAxesAreSweptNumericKeys) {
  const ClaimKindRow& increasing = claim_kinds().row(ClaimKind::increasing);
  const std::string claim = claim_text(increasing);
  EXPECT_EQ(error(std::string(kBase) + claim + "id = \"x\"\n" + claim + "id = \"y\"\n"), "");
  const std::string first = std::string(kBase) + claim + "id = \"x\"\n" + claim;
  const std::string twice = error(first + "id = \"x\"\n");
  const auto second_id_line = std::count(first.begin(), first.end(), '\n') + 1;
  EXPECT_NE(twice.find("spec.toml:" + std::to_string(second_id_line) +
                       ": claim id 'x' is used twice; give each claim its own id"),
            std::string::npos)
      << twice;
  // An explicit id equal to the default of another claim.
  EXPECT_NE(error(std::string(kBase) + claim + claim + "id = \"claim1\"\n")
                .find("claim id 'claim1' is used twice"),
            std::string::npos);
  const std::string plot = "[[plot]]\nname = \"p\"\nmetric = \"m\"\nx = \"task.N\"\n";
  EXPECT_EQ(error(std::string(kBase) + plot), "");
  EXPECT_NE(error(std::string(kBase) + plot + plot).find("plot name 'p' is used twice"),
            std::string::npos);

  const auto with_along = [&](const std::string& along) {
    std::string text = claim;
    text.replace(text.find("along = \"task.N\""), 16, "along = \"" + along + "\"");
    return std::string(kBase) + text;
  };
  EXPECT_EQ(error(with_along("task.q")), "");
  EXPECT_NE(error(with_along("seed"))
                .find("claim 'claim1': along = \"seed\": seeds are the "
                      "replicates every value is judged with"),
            std::string::npos)
      << error(with_along("seed"));
  EXPECT_NE(error(with_along("task.d")).find("along = \"task.d\" is not a swept key"),
            std::string::npos)
      << error(with_along("task.d"));
  EXPECT_NE(error(with_along("task.d"))
                .find("the claim compares its values, so sweep it in [sweep] (swept keys: "
                      "task.N, task.q)"),
            std::string::npos)
      << error(with_along("task.d"));
  EXPECT_NE(error(with_along("task.n")).find("did you mean 'task.N'"), std::string::npos)
      << error(with_along("task.n"));
  const std::string text_axis =
      "\n[task]\nname = \"qsa\"\nN = 8\n[sweep]\n\"model.name\" = [\"linear\", \"mean\"]\n" + claim;
  std::string by_name = text_axis;
  by_name.replace(by_name.find("along = \"task.N\""), 16, "along = \"model.name\"");
  EXPECT_NE(error(by_name).find("along = \"model.name\" takes the value linear, not a number"),
            std::string::npos)
      << error(by_name);
  // size: the same rule.
  std::string size_claim = std::string(kBase) + claim_text(claim_kinds().row(ClaimKind::size_flat));
  EXPECT_EQ(error(size_claim), "");
  const std::string swept_size = "size = \"task.q\"";
  size_claim.replace(size_claim.find(swept_size), swept_size.size(), "size = \"model.width\"");
  EXPECT_NE(error(size_claim).find("size = \"model.width\" is not a swept key"), std::string::npos)
      << error(size_claim);
}

}  // namespace
}  // namespace attn
