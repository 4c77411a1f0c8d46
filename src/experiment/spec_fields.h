// The keys of a spec's sections, one table per section and one row per key: [experiment],
// [[plot]], [[claim]], and the list of sections itself. A row drives the parser (the value's
// type, then the row's value check), the unknown-key check (with its did-you-mean), the JSON
// written to spec.json and read back from it (figure_data_io.cpp reads the plots), and is
// compared with the reference tables of docs/spec-format.md by tests/test_spec_fields.cpp
// (key, type and default cells).
//
// Adding a key: a member of the section's struct (spec.h), its row here (spec_fields.cpp),
// its row in the doc's table; for [[plot]] and [[claim]], the kinds that use it
// (plot_kinds.cpp, claim_kinds.cpp). Private to src/experiment (and its tests).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "experiment/spec.h"

namespace attn {

// How a key's value is read and written.
//   Text   a string (member `text`)         Flag   true or false (`flag`)
//   Number an integer or float (`number`)   Filter a table of conditions (`filter`)
//   Kind   a name of the section's kind table (read by the builder, which words the error)
//   Custom read by the section's builder, not in spec.json (experiment.seeds)
enum class FieldType { Text, Flag, Number, Filter, Kind, Custom };

template <class S>
struct SpecField {
  const char* key;
  FieldType type;
  const char* doc_type;     // the "type" cell of the key's row in docs/spec-format.md
  const char* doc_default;  // its "default" cell
  std::string S::*text = nullptr;
  bool S::*flag = nullptr;
  double S::*number = nullptr;
  bool S::*given = nullptr;  // Number: set when the key is given; spec.json has the key only then
  RunFilter S::*filter = nullptr;
  const char* (*kind_name)(const S&) = nullptr;        // Kind: the value's name
  bool (*kind_set)(S&, const std::string&) = nullptr;  // Kind: false for an unknown name
  // Value checks: "" or the whole message (what: "plot.goal").
  std::string (*check_text)(const std::string& value, const std::string& what) = nullptr;
  std::string (*check_number)(double value, const std::string& what) = nullptr;
  bool omit_empty = false;  // Text: spec.json leaves the key out when it is ""
};

const std::vector<SpecField<Spec>>& experiment_fields();
const std::vector<SpecField<PlotSpec>>& plot_fields();
const std::vector<SpecField<ClaimSpec>>& claim_fields();

template <class S>
std::vector<std::string> field_keys(const std::vector<SpecField<S>>& fields) {
  std::vector<std::string> keys;
  for (const auto& f : fields) keys.emplace_back(f.key);
  return keys;
}

// spec.json: a plot's or claim's object (every key its table writes), and back (a key that is
// missing keeps the struct's default, as in spec.json files of earlier releases).
nlohmann::json plot_json(const PlotSpec& plot);
PlotSpec plot_from_json(const nlohmann::json& j);
nlohmann::json claim_json(const ClaimSpec& claim);
ClaimSpec claim_from_json(const nlohmann::json& j);
// spec.json's "select" object ({axes, by, max_params when given}) and back; an absent or
// null object is no selection.
nlohmann::json select_json(const SelectSpec& select);
SelectSpec select_from_json(const nlohmann::json& j);
// The [experiment] keys that spec.json has (name, description), added to j.
void experiment_json(const Spec& spec, nlohmann::json& j);

// The sections of a spec, in the order messages list them. `runs`: its keys are run
// parameters ([task], [model], [train], [eval]: swept, filtered on); `settable`: [quick] and
// --set may override it.
struct SpecSection {
  const char* name;
  bool runs, settable;
};
const std::vector<SpecSection>& spec_sections();
std::vector<std::string> spec_section_names(bool runs_only = false, bool settable_only = false);

}  // namespace attn
