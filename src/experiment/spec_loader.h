// Private to src/experiment/spec*.cpp: error reporting and value conversion while a spec
// is read (Loader), the reader of a section's keys from its field table (spec_fields.h), and
// the builders of the [[plot]] and [[claim]] sections.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/suggest.h"
#include "experiment/plan.h"
#include "experiment/spec.h"
#include "experiment/spec_fields.h"
#include "experiment/spec_tree.h"
#include "models/model_registry.h"
#include "models/train_schema.h"
#include "tasks/task.h"

namespace attn::spec_detail {

// Whether the spec key `dotted` ("section.key", or "section.scope.key" in a [task.NAME] or
// [model.NAME] table) is declared a list of names (ParamType::NameList): eval.probes
// (eval_probes_param), or a row of a task's, model's, [train] or [eval] schema.
inline bool spec_key_is_name_list(const std::string& dotted) {
  static const std::set<std::string> keys = [] {
    std::set<std::string> out;
    auto add = [&](const std::string& section, const std::vector<ParamSpec>& schema) {
      for (const ParamSpec& p : schema)
        if (p.type == ParamType::NameList) out.insert(section + "." + p.name);
    };
    out.insert(kEvalProbesKey);
    add("eval", eval_schema());
    add("train", train_common_schema());
    for (const auto& model : model_registry()) {
      if (model.schema != nullptr) add("model", model.schema());
      if (model.train_schema != nullptr) add("train", model.train_schema());
    }
    for (const auto& task : task_registry()) add("task", task.schema());
    return out;
  }();
  const size_t first = dotted.find('.'), last = dotted.rfind('.');
  if (first == std::string::npos) return false;
  return keys.count(dotted.substr(0, first) + dotted.substr(last)) > 0;
}

using Kind = SpecTree::Kind;

// Whether `name` is one of `names`.
inline bool listed(const std::vector<std::string>& names, const std::string& name) {
  for (const auto& n : names)
    if (n == name) return true;
  return false;
}

struct Loader {
  std::string path;

  std::string at(int line) const {
    return line > 0 ? path + ":" + std::to_string(line) : path;
  }
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw UserError(at(line) + ": " + message);
  }
  void check_keys(const SpecTree& table, const std::string& section,
                  const std::vector<std::string>& known) const {
    for (const auto& [key, value] : table.entries) {
      bool ok = false;
      for (const auto& k : known) ok = ok || k == key;
      if (!ok) {
        const std::string list = join_names(known);
        fail(value.line, "unknown key '" + key + "' in " + section + did_you_mean(key, known) +
                             "; known keys: " + list);
      }
    }
  }
  const SpecTree& table_of(const SpecTree& root, const std::string& section) const {
    static const SpecTree empty;
    const SpecTree* t = root.find(section);
    if (t == nullptr) return empty;
    if (t->kind != Kind::Table)
      fail(t->line, "'" + section + "' must be a table: write [" + section + "]");
    return *t;
  }
  std::string string_of(const SpecTree& v, const std::string& key) const {
    if (v.kind != Kind::Value || !std::holds_alternative<std::string>(v.value))
      fail(v.line, key + " must be a string");
    return std::get<std::string>(v.value);
  }
  // A scalar; an array of strings for a key declared a list of names (spec_key_is_name_list,
  // e.g. eval.probes), [] included; else an array of numbers (a list parameter such as
  // train.lambdas): any other key's array of strings is refused as before.
  ParamValue value_of(const SpecTree& v, const std::string& key) const {
    if (v.kind == Kind::Value) return v.value;
    if (v.kind == Kind::Array && spec_key_is_name_list(key)) {
      std::vector<std::string> names;
      for (const auto& item : v.items) {
        if (item.kind != Kind::Value || !std::holds_alternative<std::string>(item.value))
          fail(item.line, key + ": a list of names must hold strings only");
        names.push_back(std::get<std::string>(item.value));
      }
      return names;
    }
    if (v.kind == Kind::Array) {
      std::vector<double> list;
      for (const auto& item : v.items) {
        if (item.kind != Kind::Value) fail(item.line, key + ": nested arrays are not supported");
        if (auto* i = std::get_if<int64_t>(&item.value))
          list.push_back(static_cast<double>(*i));
        else if (auto* d = std::get_if<double>(&item.value))
          list.push_back(*d);
        else
          fail(item.line, key + ": a list value must hold numbers only");
      }
      return list;
    }
    fail(v.line, key + " must be a value, not a table");
  }
  RunFilter filter_of(const SpecTree& v, const std::string& key) const {
    if (v.kind != Kind::Table)
      fail(v.line, key + " must be a table of conditions, e.g. { \"model.name\" = \"linear\" }");
    RunFilter filter;
    for (const auto& [k, cond] : v.entries) {
      if (cond.kind == Kind::Array) {
        for (const auto& item : cond.items) filter[k].push_back(value_of(item, key + "." + k));
      } else {
        filter[k].push_back(value_of(cond, key + "." + k));
      }
    }
    return filter;
  }
};

// The text of a section's Kind key (plot.kind, claim.type), which its builder resolves.
struct KindText {
  bool given = false;
  std::string text;
  int line = 0;
};

// Reads the keys of `table` by their rows in `fields` (spec_fields.cpp): unknown keys are
// refused first ("unknown key 'K' in SECTION (did you mean ...); known keys: ..."), then each
// key in file order: its type ("PREFIXkey must be a string"), the row's value check, the
// member. Kind keys are returned, Custom ones left to the caller.
template <class S>
KindText fields_read(const Loader& L, const SpecTree& table, const std::string& section,
                     const std::string& prefix, const std::vector<SpecField<S>>& fields, S& out);
// Whether `key` was given: a string or filter non-empty, a number or flag present in `table`.
template <class S>
bool field_given(const std::vector<SpecField<S>>& fields, const std::string& key, const S& s,
                 const SpecTree& table);

// Refuses `key`, which is not one of the swept keys `swept`: "WHAT is not a swept key (did you
// mean ...); WHY, so sweep it in [sweep] (swept keys: ...)".
[[noreturn]] inline void not_swept_fail(const Loader& L, int line, const std::string& what,
                                        const std::string& key,
                                        const std::vector<std::string>& swept,
                                        const std::string& why) {
  L.fail(line, what + " is not a swept key" + did_you_mean(key, swept) + "; " + why +
                   ", so sweep it in [sweep] (swept keys: " +
                   (swept.empty() ? std::string("none") : join_names(swept)) + ")");
}

// [[plot]] and [[claim]] entries (spec_outputs.cpp).
void plots_build(const Loader& L, const SpecTree* plots, Spec& spec);
void claims_build(const Loader& L, const SpecTree* claims, Spec& spec);
// [select] (spec_select.cpp): after the sweep; and, once the claims are read, the check that
// no claim names a selected axis.
void select_build(const Loader& L, const SpecTree* select, Spec& spec);
void select_claims_check(const Loader& L, const SpecTree* claims, const Spec& spec);

}  // namespace attn::spec_detail
