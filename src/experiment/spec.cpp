// Spec loading: TOML -> SpecTree -> ([quick], --set) -> validated Spec.
#include "experiment/spec.h"

#include <filesystem>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/front_option.h"
#include "core/params_json.h"
#include "core/suggest.h"
#include "experiment/plan.h"
#include "experiment/spec_fields.h"
#include "experiment/spec_loader.h"
#include "experiment/spec_tree.h"
#include "models/model_registry.h"
#include "tasks/task.h"

namespace attn {
namespace {

using namespace spec_detail;

// "a, b and c" (last = " and ").
std::string names_list(const std::vector<std::string>& names, const std::string& last) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return out;
}

// [sweep] task = { N = [...] } is the same as [sweep] "task.N" = [...].
void sweep_flatten(SpecTree& sweep) {
  std::vector<std::pair<std::string, SpecTree>> flat;
  for (auto& [key, value] : sweep.entries) {
    if (value.kind == Kind::Table && key != "zip") {
      SpecTree inner = value;
      sweep_flatten(inner);
      for (auto& [k, v] : inner.entries) flat.emplace_back(key + "." + k, std::move(v));
    } else {
      flat.emplace_back(key, std::move(value));
    }
  }
  sweep.entries = std::move(flat);
}

void deep_merge(SpecTree& into, const SpecTree& from) {
  for (const auto& [key, value] : from.entries) {
    SpecTree* existing = into.find(key);
    if (existing && existing->kind == Kind::Table && value.kind == Kind::Table)
      deep_merge(*existing, value);
    else if (existing)
      *existing = value;
    else
      into.entries.emplace_back(key, value);
  }
}

void quick_apply(const Loader& L, SpecTree& root, const SpecTree& quick) {
  const std::vector<std::string> sections = spec_section_names();
  const std::vector<std::string> settable = spec_section_names(false, true);
  for (const auto& [section, value] : quick.entries) {
    if (listed(sections, section) && !listed(settable, section))
      L.fail(value.line,
             "[quick] may override " + names_list(settable, " and ") + ", not '" + section + "'");
    if (!listed(sections, section))
      L.fail(value.line,
             "unknown section 'quick." + section + "'" + did_you_mean(section, sections));
    if (value.kind != Kind::Table) L.fail(value.line, "quick." + section + " must be a table");
    SpecTree& target = root.at(section, value.line);
    if (section == "sweep") {
      SpecTree flat = value;
      sweep_flatten(flat);
      for (const auto& [key, v] : flat.entries) {
        if (SpecTree* e = target.find(key))
          *e = v;
        else
          target.entries.emplace_back(key, v);
      }
    } else {
      deep_merge(target, value);
    }
  }
}

// The spellings of `key` in [section.<table>]: a renamed model key's name and its stored
// spelling (ParamSpec::stored_as), else just `key`.
std::vector<std::string> key_spellings(const std::string& section, const std::string& table,
                                       const std::string& key) {
  if (section == "model")
    for (const auto& info : model_registry())
      if (info.name == table)
        for (const auto& p : info.schema())
          if (!p.stored_as.empty() && (p.name == key || p.stored_as == key))
            return {p.name, p.stored_as};
  return {key};
}

void override_apply(const Loader& L, SpecTree& root, const std::string& text) {
  const std::string set = front_option_with(FrontOption::kSet, text);  // --set ITEM
  const ParamItem item = param_item_parse(
      text, "section.key=value, e.g. " + front_option_with(FrontOption::kSet, "task.N=16"));
  if (item.section.empty())
    throw UserError(set + ": name a section and a key, e.g. task.N=16 or train.n=512");
  const std::string& section = item.section;
  const std::string key = section + "." + item.key;
  const SpecTree value =
      spec_tree_parse_value(item.value, front_option_with(FrontOption::kSet, key));
  const std::vector<std::string> settable = spec_section_names(false, true);
  if (!listed(settable, section))
    throw UserError(set + ": '" + section + "' cannot be set from the command line" +
                    did_you_mean(section, settable));
  const std::string& rest = item.key;
  SpecTree& sec = root.at(section);
  if (section == "sweep") {
    if (value.kind != Kind::Array)
      throw UserError(set + ": a sweep axis is a list, e.g. " +
                      front_option_with(FrontOption::kSet, "'sweep.task.N=[2, 8]'"));
    if (SpecTree* e = sec.find(rest))
      *e = value;
    else
      sec.entries.emplace_back(rest, value);
    return;
  }
  // Fixing a swept key removes its axis; a zipped key cannot be fixed alone.
  if (SpecTree* sweep = root.find("sweep")) {
    sweep->erase(key);
    if (const SpecTree* zip = sweep->find("zip"))
      for (const auto& group : zip->items)
        if (group.find(key))
          throw UserError(set + ": " + key +
                          " varies together with other keys in a [[sweep.zip]] group; "
                          "override the group with " +
                          front_option(FrontOption::kSet) + ", or edit the spec");
  }
  // A plain section.key override wins over [section.<name>] tables too, in either spelling
  // of a renamed key.
  if (rest.find('.') == std::string::npos)
    for (auto& [name, table] : sec.entries)
      if (table.kind == Kind::Table)
        for (const auto& spelling : key_spellings(section, name, rest)) table.erase(spelling);
  SpecTree* node = &sec;
  std::string leaf = rest;
  for (auto d = leaf.find('.'); d != std::string::npos; d = leaf.find('.')) {
    node = &node->at(leaf.substr(0, d));
    leaf = leaf.substr(d + 1);
  }
  if (SpecTree* e = node->find(leaf))
    *e = value;
  else
    node->entries.emplace_back(leaf, value);
  (void)L;
}

void experiment_build(const Loader& L, const SpecTree& root, Spec& spec) {
  const SpecTree& e = L.table_of(root, "experiment");
  spec.name = std::filesystem::path(spec.path).stem().string();
  fields_read(L, e, "[experiment]", "experiment.", experiment_fields(), spec);
  spec.seeds = {0};
  if (const SpecTree* v = e.find("seeds")) {
    if (v->kind == Kind::Value && std::holds_alternative<int64_t>(v->value)) {
      const int64_t count = std::get<int64_t>(v->value);
      if (count < 1 || count > 100000)
        L.fail(v->line, "experiment.seeds = " + std::to_string(count) +
                            ": give a count from 1 to 100000, or a list of seeds");
      spec.seeds.clear();
      for (int64_t s = 0; s < count; ++s) spec.seeds.push_back(static_cast<uint64_t>(s));
    } else if (v->kind == Kind::Array && !v->items.empty()) {
      spec.seeds.clear();
      for (const auto& item : v->items) {
        if (item.kind != Kind::Value || !std::holds_alternative<int64_t>(item.value) ||
            std::get<int64_t>(item.value) < 0)
          L.fail(item.line, "experiment.seeds: every seed must be a whole number >= 0");
        const uint64_t seed = static_cast<uint64_t>(std::get<int64_t>(item.value));
        for (uint64_t earlier : spec.seeds)
          if (earlier == seed)
            L.fail(item.line, "experiment.seeds lists seed " + std::to_string(seed) + " twice");
        spec.seeds.push_back(seed);
      }
    } else {
      L.fail(v->line,
             "experiment.seeds must be a count (e.g. 5) or a non-empty list (e.g. [0, 7])");
    }
  }
}

void run_sections_build(const Loader& L, const SpecTree& root, Spec& spec) {
  for (const std::string& section : spec_section_names(true)) {
    const SpecTree& t = L.table_of(root, section);
    for (const auto& [key, value] : t.entries) {
      if (value.kind == Kind::Table) {
        std::vector<std::string> names;
        if (section == "task")
          for (const auto& info : task_registry()) names.push_back(info.name);
        else if (section == "model")
          for (const auto& info : model_registry()) names.push_back(info.name);
        else
          L.fail(value.line, "[" + section + "." + key + "]: only [task.<task>] and "
                             "[model.<model>] tables are allowed");
        bool known = false;
        for (const auto& n : names) known = known || n == key;
        if (!known)
          L.fail(value.line, "[" + section + "." + key + "]: '" + key + "' is not a " + section +
                                 " name" + did_you_mean(key, names) + "; see `attnlab list`");
        for (const auto& [k, v] : value.entries)
          spec.scoped[section + "." + key][k] = L.value_of(v, section + "." + key + "." + k);
      } else {
        spec.base[section + "." + key] = L.value_of(value, section + "." + key);
      }
    }
  }
}

void sweep_build(const Loader& L, SpecTree sweep, Spec& spec) {
  if (sweep.kind != Kind::Table) L.fail(sweep.line, "'sweep' must be a table: write [sweep]");
  sweep_flatten(sweep);
  auto axis_values = [&](const std::string& key, const SpecTree& v) {
    if (v.kind != Kind::Array) L.fail(v.line, "sweep." + key + " must be a list of values");
    if (v.items.empty())
      L.fail(v.line, "sweep." + key + " is an empty list: the grid would have no runs; give "
                     "at least one value");
    std::vector<ParamValue> out;
    for (const auto& item : v.items) out.push_back(L.value_of(item, "sweep." + key));
    return out;
  };
  auto check_key = [&](const std::string& key, int line) {
    const auto dot = key.find('.');
    const std::vector<std::string> runs = spec_section_names(true);
    if (dot == std::string::npos || dot + 1 >= key.size() || !listed(runs, key.substr(0, dot))) {
      L.fail(line, "sweep key '" + key + "' must name a " + names_list(runs, " or ") + " key, e.g. "
                   "\"task.N\" (seeds are set by experiment.seeds)");
    }
  };
  for (const auto& [key, value] : sweep.entries) {
    if (key == "zip") {
      if (value.kind != Kind::Array) L.fail(value.line, "sweep.zip must be written [[sweep.zip]]");
      for (const auto& group : value.items) {
        if (group.kind != Kind::Table || group.entries.empty())
          L.fail(group.line, "each [[sweep.zip]] must be a table of lists of equal length");
        SweepAxis axis;
        size_t length = 0;
        for (const auto& [k, v] : group.entries) {
          check_key(k, v.line);
          auto values = axis_values(k, v);
          if (length != 0 && values.size() != length)
            L.fail(v.line, "[[sweep.zip]]: " + k + " has " + std::to_string(values.size()) +
                               " values but the group's first list has " + std::to_string(length) +
                               "; zipped lists must have equal length");
          length = values.size();
          axis.keys.push_back(k);
          if (axis.values.empty()) axis.values.resize(length);
          for (size_t i = 0; i < length; ++i) axis.values[i].push_back(values[i]);
        }
        spec.axes.push_back(std::move(axis));
      }
      continue;
    }
    check_key(key, value.line);
    SweepAxis axis;
    axis.keys = {key};
    for (auto& v : axis_values(key, value)) axis.values.push_back({v});
    spec.axes.push_back(std::move(axis));
  }
  // A key may be swept once.
  std::vector<std::string> seen;
  for (const auto& axis : spec.axes)
    for (const auto& k : axis.keys) {
      for (const auto& s : seen)
        if (s == k) L.fail(sweep.line, "sweep key '" + k + "' appears twice; sweep it once");
      seen.push_back(k);
    }
}

}  // namespace

Spec spec_load(const std::string& path, const std::vector<std::string>& overrides, bool quick) {
  if (!std::filesystem::is_regular_file(path))
    throw IoError(path + ": no such spec file; give the path of a .toml spec (shipped ones are "
                         "listed by `attnlab list`)");
  Loader L{path};
  SpecTree root = spec_tree_parse_file(path);
  const std::vector<std::string> sections = spec_section_names();
  for (const auto& [section, value] : root.entries)
    if (!listed(sections, section))
      L.fail(value.line, "unknown section '" + section + "'" + did_you_mean(section, sections) +
                             "; sections: " + join_names(sections));
  if (SpecTree* sweep = root.find("sweep"))
    if (sweep->kind == Kind::Table) sweep_flatten(*sweep);
  if (const SpecTree* q = root.find("quick")) {
    if (q->kind != Kind::Table)
      L.fail(q->line, "'quick' must be a table: write [quick.train] etc.");
    const SpecTree quick_table = *q;
    root.erase("quick");
    SpecTree quick_root = root;  // [quick] is checked even when --quick is not given
    quick_apply(L, quick_root, quick_table);
    if (quick) root = std::move(quick_root);
  }
  for (const auto& o : overrides) override_apply(L, root, o);

  Spec spec;
  spec.path = path;
  experiment_build(L, root, spec);
  run_sections_build(L, root, spec);
  if (const SpecTree* sweep = root.find("sweep")) sweep_build(L, *sweep, spec);
  select_build(L, root.find("select"), spec);
  plots_build(L, root.find("plot"), spec);
  claims_build(L, root.find("claim"), spec);
  select_claims_check(L, root.find("claim"), spec);
  return spec;
}

namespace {

// Whether `key` is "train.<name>" for a [train] key that some model's schema marks
// `execution_only` (ridge's distributed and dual_features, ...).
bool is_execution_setting(const std::string& key) {
  static const std::set<std::string> keys = [] {
    std::set<std::string> out;
    for (const auto& model : model_registry())
      if (model.train_schema != nullptr)
        for (const auto& p : model.train_schema())
          if (p.execution_only) out.insert("train." + p.name);
    return out;
  }();
  return keys.count(key) > 0;
}

}  // namespace

std::string spec_runs_json(const Spec& spec) {
  nlohmann::json j;
  j["seeds"] = spec.seeds;
  nlohmann::json base = nlohmann::json::object();
  // Execution settings (same results to rounding) do not make another spec: a directory can be
  // resumed with them changed.
  // Probes (eval.probes) change what runs report, not what they compute: left out too.
  for (const auto& [k, v] : spec.base)
    if (!is_execution_setting(k) && k != kEvalProbesKey) base[k] = param_value_json(v);
  j["base"] = base;
  nlohmann::json scoped = nlohmann::json::object();
  for (const auto& [scope, values] : spec.scoped)
    for (const auto& [k, v] : values) scoped[scope][k] = param_value_json(v);
  j["scoped"] = scoped;
  nlohmann::json axes = nlohmann::json::array();
  for (const auto& axis : spec.axes) {
    nlohmann::json a;
    a["keys"] = axis.keys;
    nlohmann::json values = nlohmann::json::array();
    for (const auto& row : axis.values) {
      nlohmann::json r = nlohmann::json::array();
      for (const auto& v : row) r.push_back(param_value_json(v));
      values.push_back(r);
    }
    a["values"] = values;
    axes.push_back(a);
  }
  j["axes"] = axes;
  return j.dump();
}

std::vector<std::string> spec_swept_keys(const Spec& spec) {
  std::vector<std::string> keys;
  for (const auto& axis : spec.axes)
    for (const auto& k : axis.keys) keys.push_back(k);
  return keys;
}

std::vector<std::string> plot_line_keys(const std::string& line) {
  std::vector<std::string> keys;
  std::string key;
  for (std::istringstream in(line); std::getline(in, key, ',');) {
    const size_t first = key.find_first_not_of(' '), last = key.find_last_not_of(' ');
    if (first != std::string::npos) keys.push_back(key.substr(first, last - first + 1));
  }
  return keys;
}

std::vector<std::string> plot_title_keys(const std::string& title) {
  std::vector<std::string> keys;
  for (size_t open = title.find('{'); open != std::string::npos; open = title.find('{', open + 1)) {
    const size_t close = title.find('}', open);
    if (close == std::string::npos) break;
    keys.push_back(title.substr(open + 1, close - open - 1));
  }
  return keys;
}

std::string spec_to_json(const Spec& spec) {
  nlohmann::json j;
  experiment_json(spec, j);
  j["path"] = spec.path;
  nlohmann::json swept = nlohmann::json::array();
  for (const auto& axis : spec.axes)
    for (const auto& k : axis.keys) swept.push_back(k);
  j["swept"] = swept;
  nlohmann::json plots = nlohmann::json::array();
  for (const auto& p : spec.plots) plots.push_back(plot_json(p));
  j["plots"] = plots;
  nlohmann::json claims = nlohmann::json::array();
  for (const auto& c : spec.claims) claims.push_back(claim_json(c));
  j["claims"] = claims;
  if (spec.select.active()) j["select"] = select_json(spec.select);
  return j.dump(2);
}

}  // namespace attn
