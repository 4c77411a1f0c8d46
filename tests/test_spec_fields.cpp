// The field tables of a spec's sections (src/experiment/spec_fields.cpp) and the reference
// tables of docs/spec-format.md say the same (keys, type and default cells; the sections; the
// plot kinds with the keys each needs and may have), and every key a table writes to
// spec.json is read back.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "doc_table_helpers.h"
#include "core/error.h"
#include "core/suggest.h"
#include "experiment/figure_data.h"
#include "experiment/spec_fields.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string spec_format_md() {
  return test::file_read((fs::path(test_source_dir()) / "docs" / "spec-format.md").string());
}

// The doc's key table after `heading` against the code's rows: every key of one is in the
// other, with the same type and default cells (a doc row may list several keys: `logx`, `logy`).
template <class S>
void expect_doc_keys(const std::string& heading, const std::vector<SpecField<S>>& fields) {
  SCOPED_TRACE(heading);
  std::set<std::string> doc_keys;
  for (const auto& cells : test::doc_table(spec_format_md(), heading, "| key | type | default |")) {
    ASSERT_GE(cells.size(), 3u);
    for (const auto& key : test::backticked(cells[0])) {
      doc_keys.insert(key);
      const SpecField<S>* row = nullptr;
      for (const auto& f : fields)
        if (key == f.key) row = &f;
      if (row == nullptr) {
        ADD_FAILURE() << "the doc has key '" << key << "', the code has not";
        continue;
      }
      EXPECT_EQ(cells[1], row->doc_type) << key << ": type";
      EXPECT_EQ(cells[2], row->doc_default) << key << ": default";
    }
  }
  for (const auto& f : fields) EXPECT_TRUE(doc_keys.count(f.key)) << "the doc lacks key " << f.key;
}

TEST(SpecFields, DocKeyTablesMatchTheFieldTables) {
  expect_doc_keys("## [experiment]", experiment_fields());
  expect_doc_keys("## [[plot]]", plot_fields());
  expect_doc_keys("## [[claim]]", claim_fields());
}

TEST(SpecFields, DocSectionsTableMatchesTheSectionList) {
  std::set<std::string> doc;
  for (const auto& cells : test::doc_table(spec_format_md(), "## Sections", "| section |"))
    for (std::string name : test::backticked(cells[0])) {
      name = name.substr(name.find_first_not_of('['));
      doc.insert(name.substr(0, name.find_first_of(".]")));
    }
  const auto code = spec_section_names();
  EXPECT_EQ(doc, std::set<std::string>(code.begin(), code.end()));
}

TEST(SpecFields, DocPlotKindsTableMatchesTheKindRows) {
  const auto rows = test::doc_table(spec_format_md(), "## [[plot]]", "| kind | draws |");
  ASSERT_EQ(rows.size(), kind_count<PlotKind>) << "one row per plot kind, in enum order";
  for (size_t k = 0; k < kind_count<PlotKind>; ++k) {
    const PlotKindRow& row = plot_kinds().rows[k];
    SCOPED_TRACE(row.name);
    EXPECT_EQ(static_cast<size_t>(row.kind), k);
    ASSERT_NE(plot_kinds().find(row.name), nullptr);
    EXPECT_EQ(*plot_kinds().find(row.name), row.kind);
    ASSERT_EQ(rows[k].size(), 5u);
    EXPECT_EQ(test::backticked(rows[k][0]), std::vector<std::string>{row.name});
    EXPECT_EQ(test::backticked(rows[k][3]), row.required);
    std::vector<std::string> may = row.optional;
    may.push_back("where");
    EXPECT_EQ(test::backticked(rows[k][4]), may);
  }
  // "required (line, heatmap)" in the key table names the kinds that require the key.
  for (const auto& f : plot_fields()) {
    const std::string d = f.doc_default;
    if (d.rfind("required (", 0) != 0) continue;
    std::vector<std::string> want;
    for (const PlotKindRow& row : plot_kinds())
      for (const auto& r : row.required)
        if (r == f.key) want.push_back(row.name);
    EXPECT_EQ(d, "required (" + join_names(want) + ")") << f.key;
  }
}

TEST(SpecFields, KindAndTypeRowsListEveryKind) {
  const std::string doc = spec_format_md();
  for (const auto& cells : test::doc_table(doc, "## [[plot]]", "| key | type | default |"))
    if (cells[0] == "`kind`") {
      EXPECT_EQ(test::backticked(cells[3]), plot_kinds().names());
    }
  for (const auto& cells : test::doc_table(doc, "## [[claim]]", "| key | type | default |"))
    if (cells[0] == "`type`") {
      EXPECT_EQ(test::backticked(cells[3]), claim_kinds().names());
    }
}

// A struct with every field of its table set away from its default, through the table.
template <class S>
S all_set(const std::vector<SpecField<S>>& fields, const std::string& kind) {
  S s;
  for (const auto& f : fields) switch (f.type) {
      case FieldType::Text: s.*f.text = std::string("v_") + f.key; break;
      case FieldType::Flag: s.*f.flag = true; break;
      case FieldType::Number:
        s.*f.number = 7.5;
        if (f.given) s.*f.given = true;
        break;
      case FieldType::Filter:
        s.*f.filter = {{"task.N", {ParamValue(int64_t{8}), ParamValue(16.5)}}};
        break;
      case FieldType::Kind: EXPECT_TRUE(f.kind_set(s, kind)); break;
      case FieldType::Custom: break;
    }
  return s;
}

template <class S>
void expect_same_fields(const std::vector<SpecField<S>>& fields, const S& a, const S& b) {
  for (const auto& f : fields) {
    SCOPED_TRACE(f.key);
    switch (f.type) {
      case FieldType::Text: EXPECT_EQ(a.*f.text, b.*f.text); break;
      case FieldType::Flag: EXPECT_EQ(a.*f.flag, b.*f.flag); break;
      case FieldType::Number:
        EXPECT_EQ(a.*f.number, b.*f.number);
        if (f.given) {
          EXPECT_EQ(a.*f.given, b.*f.given);
        }
        break;
      case FieldType::Filter: EXPECT_EQ(a.*f.filter, b.*f.filter); break;
      case FieldType::Kind: EXPECT_STREQ(f.kind_name(a), f.kind_name(b)); break;
      case FieldType::Custom: break;
    }
  }
}

TEST(SpecFields, SpecJsonReadsBackEveryKeyItWrites) {
  const PlotSpec plot = all_set(plot_fields(), "size_needed");
  EXPECT_EQ(plot.kind, PlotKind::size_needed);
  expect_same_fields(plot_fields(), plot, plot_from_json(plot_json(plot)));
  const ClaimSpec claim = all_set(claim_fields(), "power_law");
  EXPECT_EQ(claim.type, ClaimKind::power_law);
  const nlohmann::json cj = claim_json(claim);
  EXPECT_EQ(cj["type"], "power_law");
  expect_same_fields(claim_fields(), claim, claim_from_json(cj));
  // Through spec.json as the figure data reads it.
  Spec spec;
  spec.name = "n";
  spec.plots = {plot, PlotSpec{}};
  const auto back = plots_from_spec_json(spec_to_json(spec), nullptr);
  ASSERT_EQ(back.size(), 2u);
  expect_same_fields(plot_fields(), plot, back[0]);
  expect_same_fields(plot_fields(), PlotSpec{}, back[1]);
}

TEST(SpecFields, SpecJsonOfAnEarlierReleaseReadsWithDefaults) {
  // A plot as an earlier release wrote it: no "none" nor "mark" (they were added later).
  const std::string text =
      R"({"name": "e", "plots": [{"name": "p", "kind": "heatmap", "metric": "m",
      "x": "task.N", "y": "task.q", "logx": true, "where": {"seed": [0]}}], "claims": []})";
  const auto plots = plots_from_spec_json(text, nullptr);
  ASSERT_EQ(plots.size(), 1u);
  EXPECT_EQ(plots[0].kind, PlotKind::heatmap);
  EXPECT_TRUE(plots[0].logx);
  EXPECT_FALSE(plots[0].has_none);
  EXPECT_EQ(plots[0].mark, "");
  EXPECT_EQ(plots[0].goal, "below");
  EXPECT_EQ(plots[0].where.at("seed").size(), 1u);
  // The JSON of a default plot has no "none" (not given) and no "mark" (empty).
  const nlohmann::json j = plot_json(PlotSpec{});
  EXPECT_FALSE(j.contains("none"));
  EXPECT_FALSE(j.contains("mark"));
  EXPECT_EQ(j["kind"], "line");
  EXPECT_THROW(plots_from_spec_json(R"({"plots": [{"kind": "pie"}]})", nullptr), UserError);
}

}  // namespace
}  // namespace attn
