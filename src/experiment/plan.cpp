// Grid expansion and config resolution.
#include "experiment/plan.h"

#include <cstdio>
#include <set>

#include "core/error.h"
#include "core/fnv.h"
#include "core/log.h"
#include "core/memory.h"
#include "core/suggest.h"
#include "experiment/eval_length.h"
#include "models/model_registry.h"
#include "tasks/task.h"

namespace attn {
namespace {

// Sets section.key = value on params, prefixing errors with the spec file.
void set_checked(const Spec& spec, Params& params, const std::string& key, const ParamValue& v) {
  try {
    params.set(key, v);
  } catch (const UserError& e) {
    throw UserError(spec.path + ": " + e.what());
  }
}

std::string name_of(const Spec& spec, const std::map<std::string, ParamValue>& values,
                    const std::string& section, const std::string& example) {
  const auto it = values.find(section + ".name");
  if (it == values.end())
    throw UserError(spec.path + ": [" + section + "] needs name = \"...\" (e.g. " + example +
                    "; `attnlab list` shows them)");
  if (!std::holds_alternative<std::string>(it->second))
    throw UserError(spec.path + ": " + section + ".name must be a string");
  return std::get<std::string>(it->second);
}

// eval.probes: a list of names (eval_probes_param), each a probe named once.
std::vector<ProbeKind> probes_of(const ParamValue& v) {
  const auto* numbers = std::get_if<std::vector<double>>(&v);
  ATTN_CHECK(std::holds_alternative<std::vector<std::string>>(v) ||
                 std::holds_alternative<std::string>(v) || (numbers && numbers->empty()),
             std::string(kEvalProbesKey) + " must be a list of probe names, e.g. probes = " +
                 "[\"rank_pair\"]; probes: " + probes_text(probe_kinds()));
  Params probes("eval", {eval_probes_param()});
  probes.set("probes", v);
  return probes_parse(join_names(probes.get_name_list("probes")));
}

// A sweep key of one task's or model's own key, "model.<model>.<key>" or "task.<task>.<key>"
// (a scoped axis): its section, the name it applies to and the key; false for any other key.
bool scoped_key_split(const std::string& key, std::string* section, std::string* name,
                      std::string* rest) {
  const size_t first = key.find('.');
  if (first == std::string::npos) return false;
  const size_t second = key.find('.', first + 1);
  if (second == std::string::npos || second + 1 >= key.size()) return false;
  const std::string s = key.substr(0, first), n = key.substr(first + 1, second - first - 1);
  bool known = false;
  if (s == "model")
    for (const auto& info : model_registry()) known = known || info.name == n;
  if (s == "task")
    for (const auto& info : task_registry()) known = known || info.name == n;
  if (!known) return false;
  *section = s;
  *name = n;
  *rest = key.substr(second + 1);
  return true;
}

// A grid point's assignment with its scoped axes resolved: a scoped key of the point's own
// task or model becomes its plain key ("model.attention.m" -> "model.m" at an attention
// point) in *resolved; at any other point it is no axis and is dropped from *kept too.
void scoped_resolve(const Spec& spec, std::map<std::string, ParamValue>* kept,
                    std::map<std::string, ParamValue>* resolved) {
  *resolved = *kept;
  for (auto it = kept->begin(); it != kept->end();) {
    std::string section, name, rest;
    if (!scoped_key_split(it->first, &section, &name, &rest)) {
      ++it;
      continue;
    }
    resolved->erase(it->first);
    auto own = kept->find(section + ".name");
    const ParamValue* value = own != kept->end() ? &own->second : nullptr;
    if (value == nullptr && spec.base.count(section + ".name"))
      value = &spec.base.at(section + ".name");
    const auto* text = value ? std::get_if<std::string>(value) : nullptr;
    if (text != nullptr && *text == name) {
      (*resolved)[section + "." + rest] = it->second;
      ++it;
    } else {
      it = kept->erase(it);
    }
  }
}

}  // namespace

const ParamSpec& eval_probes_param() {
  static const ParamSpec spec =
      param_name_list("probes", {},
                      "diagnostics of the trained model run after the test metrics "
                      "(analysis/probes.h; `attnlab list probes`); not part of run ids");
  return spec;
}

RunConfig run_config_defaults(const std::string& task, const std::string& model) {
  const ModelInfo& info = model_find(model);
  RunConfig c;
  c.task = task;
  c.model = info.name;
  c.task_params = task_default_params(task);
  c.model_params = Params("model", info.schema());
  c.train_params = Params("train", model_train_schema(info));
  c.eval_params = Params("eval", eval_schema());
  return c;
}

const Params* run_config_section(const RunConfig& c, const std::string& section) {
  if (section == "task") return &c.task_params;
  if (section == "model") return &c.model_params;
  if (section == "train") return &c.train_params;
  if (section == "eval") return &c.eval_params;
  return nullptr;
}

Params* run_config_section(RunConfig& c, const std::string& section) {
  return const_cast<Params*>(run_config_section(static_cast<const RunConfig&>(c), section));
}

Params eval_task_params(const RunConfig& c) {
  Params params = c.task_params;
  if (const int64_t N = eval_length(c); N != 0) {
    ATTN_CHECK(params.has("N"), "eval.N = " + std::to_string(N) + ": task " + c.task +
                                    " has no sequence length task.N; remove eval.N");
    try {
      params.set("N", N);
    } catch (const UserError& e) {
      throw UserError("eval.N: " + std::string(e.what()));
    }
  }
  const std::string& instances = c.eval_params.get_string("instances");
  if (instances.empty()) return params;
  ATTN_CHECK(params.has("instances"),
             "eval.instances = " + instances + ": task " + c.task +
                 " has no hard instances (no task.instances; qsa and match3 have them); remove "
                 "eval.instances");
  try {
    params.set("instances", instances);
  } catch (const UserError& e) {
    throw UserError("eval.instances: " + std::string(e.what()));
  }
  return params;
}

RunConfig config_resolve(const Spec& spec, const std::map<std::string, ParamValue>& swept) {
  if (swept.count(kEvalProbesKey))
    throw UserError(spec.path + ": sweep key '" + kEvalProbesKey + "': probes are what every "
                    "run reports, not part of a run; name them once in [eval] probes = [...]");
  std::map<std::string, ParamValue> values = spec.base;
  for (const auto& [k, v] : swept) values[k] = v;
  const std::string task = name_of(spec, values, "task", "name = \"qsa\"");
  const std::string model_name = name_of(spec, values, "model", "name = \"linear\"");
  RunConfig c;
  try {
    task_find(task);
    c = run_config_defaults(task, model_name);
  } catch (const UserError& e) {
    throw UserError(spec.path + ": " + e.what());
  }
  const ModelInfo& model = model_find(c.model);
  auto params_of = [&](const std::string& section) -> Params& {
    return *run_config_section(c, section);
  };
  auto apply = [&](const std::string& dotted, const ParamValue& v) {
    const auto dot = dotted.find('.');
    const std::string section = dotted.substr(0, dot), key = dotted.substr(dot + 1);
    if (key == "name" && (section == "task" || section == "model")) return;
    if (dotted == kEvalProbesKey) {
      try {
        c.probes = probes_of(v);
      } catch (const UserError& e) {
        throw UserError(spec.path + ": " + e.what());
      }
      return;
    }
    set_checked(spec, params_of(section), key, v);
  };
  // Base values, then the chosen task's and model's own tables, then the swept values.
  for (const auto& [k, v] : spec.base)
    if (!swept.count(k)) apply(k, v);
  for (const std::string& scope : {"task." + c.task, "model." + c.model}) {
    const auto it = spec.scoped.find(scope);
    if (it == spec.scoped.end()) continue;
    const std::string section = scope.substr(0, scope.find('.'));
    for (const auto& [k, v] : it->second)
      if (!swept.count(section + "." + k)) set_checked(spec, params_of(section), k, v);
  }
  for (const auto& [k, v] : swept) apply(k, v);
  std::string at;
  for (const auto& [k, v] : swept)
    at += (at.empty() ? " (at " : ", ") + k + " = " + param_value_text(v);
  if (!at.empty()) at += ")";
  const int64_t n_train = c.train_params.get_int("n"), first = c.eval_params.get_int("first");
  if (first < n_train)
    throw UserError(spec.path + ": eval.first = " + std::to_string(first) +
                    " overlaps the training samples 0.." + std::to_string(n_train - 1) + at +
                    "; raise eval.first above the largest train.n");
  if (n_train == 0 && !model.fresh_samples)
    throw UserError(spec.path + ": train.n = 0 (fresh samples every step) is only for "
                    "gradient-trained models, not " + c.model + at + "; set train.n");
  if (model.check_train) {
    try {
      model.check_train(c.train_params);
    } catch (const UserError& e) {
      throw UserError(spec.path + ": " + e.what() + at);
    }
  }
  std::unique_ptr<Task> train_task;
  try {
    train_task = task_make(c.task, c.task_params);  // cross-parameter checks (e.g. q < N)
  } catch (const UserError& e) {
    throw UserError(spec.path + ": " + e.what() + at);
  }
  // The test set's task (eval.instances, eval.N): valid choices, and its own cross-parameter
  // rules; at another length, a model that can read it (experiment/eval_length.h).
  const std::string& instances = c.eval_params.get_string("instances");
  if (!instances.empty() || eval_length(c) != 0) {
    Params test_params;
    try {
      test_params = eval_task_params(c);
    } catch (const UserError& e) {
      throw UserError(spec.path + ": " + e.what() + at);
    }
    std::string keys = instances.empty() ? "" : "eval.instances = " + instances + ": ";
    if (eval_length(c) != 0) keys += "eval.N = " + std::to_string(eval_length(c)) + ": ";
    std::unique_ptr<Task> test_task;
    try {
      test_task = task_make(c.task, test_params);
    } catch (const UserError& e) {
      throw UserError(spec.path + ": " + keys + e.what() + at);
    }
    try {
      eval_length_check(c, train_task->shape(), test_task->shape());
    } catch (const UserError& e) {
      throw UserError(spec.path + ": " + e.what() + at);
    }
  }
  for (ProbeKind probe : c.probes) {
    try {
      probe_check(probe, c.model, c.task, instances);
    } catch (const UserError& e) {
      throw UserError(spec.path + ": " + e.what() + at);
    }
  }
  return c;
}

std::string hash_hex(const std::string& text) {
  uint64_t h = fnv1a_64(text.data(), text.size());
  // SplitMix64 finaliser: nearby texts get unrelated-looking ids.
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string run_config_json(const RunConfig& c, uint64_t seed) {
  return "{\"task\": " + json_quote(c.task) + ", \"task_params\": " + c.task_params.to_json() +
         ", \"model\": " + json_quote(c.model) + ", \"model_params\": " + c.model_params.to_json() +
         ", \"train\": " + c.train_params.to_json() + ", \"eval\": " + c.eval_params.to_json() +
         ", \"seed\": " + std::to_string(seed) + "}";
}

uint64_t plan_count(const Spec& spec, std::string* factors) {
  uint64_t count = spec.seeds.size();
  std::string text;
  for (const auto& axis : spec.axes) {
    std::string keys;
    for (const auto& k : axis.keys) keys += (keys.empty() ? "sweep." : " + sweep.") + k;
    text += keys + ": " + std::to_string(axis.values.size()) + " values × ";
    if (!checked_mul(count, axis.values.size(), &count)) count = UINT64_MAX;
  }
  if (factors) *factors = text + std::to_string(spec.seeds.size()) + " seeds";
  return count;
}

std::vector<RunPoint> plan_make(const Spec& spec) {
  std::string factors;
  const uint64_t count = plan_count(spec, &factors);
  const std::string count_text = count == UINT64_MAX ? "more than 10^19" : std::to_string(count);
  if (count > kPlanMaxRuns)
    throw UserError(spec.path + ": the sweep plans " + count_text + " runs (" + factors +
                    "), more than the " + std::to_string(kPlanMaxRuns) +
                    " one experiment may hold; shorten those axes or split the spec");
  if (count > kPlanWarnRuns)
    log_warn("attnlab: warning: %s: the sweep plans %s runs (%s); planning takes a "
             "while and every run is a process of its own\n",
                 spec.path.c_str(), count_text.c_str(), factors.c_str());
  // Grid of swept assignments, first axis slowest.
  std::vector<std::map<std::string, ParamValue>> grid = {{}};
  for (const auto& axis : spec.axes) {
    std::vector<std::map<std::string, ParamValue>> next;
    for (const auto& partial : grid)
      for (const auto& row : axis.values) {
        auto assignment = partial;
        for (size_t k = 0; k < axis.keys.size(); ++k) assignment[axis.keys[k]] = row[k];
        next.push_back(std::move(assignment));
      }
    grid = std::move(next);
  }
  // Scoped axes ("model.attention.m"): an axis only at the points of their task or model; the
  // grid points that then coincide are one point (the first in grid order).
  std::set<std::string> scoped_used;
  bool any_scoped = false;
  std::vector<std::map<std::string, ParamValue>> resolved_grid;
  if (!grid.empty()) {
    std::string section, name, rest;
    for (const auto& [k, v] : grid.front())
      any_scoped |= scoped_key_split(k, &section, &name, &rest);
  }
  if (any_scoped) {
    std::vector<std::map<std::string, ParamValue>> kept_grid;
    std::set<std::string> seen_points;
    for (auto& assignment : grid) {
      std::map<std::string, ParamValue> resolved;
      scoped_resolve(spec, &assignment, &resolved);
      std::string text;
      for (const auto& [k, v] : assignment) text += k + "=" + param_value_text(v) + ";";
      if (!seen_points.insert(text).second) continue;
      for (const auto& [k, v] : assignment) scoped_used.insert(k);
      kept_grid.push_back(assignment);
      resolved_grid.push_back(std::move(resolved));
    }
    grid = std::move(kept_grid);
    for (const auto& axis : spec.axes)
      for (const auto& k : axis.keys) {
        std::string section, name, rest;
        if (scoped_key_split(k, &section, &name, &rest) && !scoped_used.count(k))
          throw UserError(spec.path + ": sweep key '" + k + "' applies only to runs whose " +
                          section + " is " + name + ", and no run has " + section + ".name = " +
                          name + "; sweep " + section + ".name over it, or remove the axis");
      }
  } else {
    resolved_grid = grid;
  }
  std::vector<RunPoint> points;
  for (size_t g = 0; g < grid.size(); ++g) {
    const auto& assignment = grid[g];
    const RunConfig config = config_resolve(spec, resolved_grid[g]);
    for (uint64_t seed : spec.seeds) {
      RunPoint p;
      p.index = static_cast<int64_t>(points.size());
      p.seed = seed;
      p.swept = assignment;
      p.config = config;
      p.config_json = run_config_json(config, seed);
      p.run_id = hash_hex(p.config_json);
      points.push_back(std::move(p));
    }
  }
  // Two points with the same id would be the same run twice (e.g. a swept value equal to
  // another's default): refuse, since results would be ambiguous.
  std::map<std::string, int64_t> seen;
  for (const auto& p : points) {
    auto [it, inserted] = seen.emplace(p.run_id, p.index);
    if (!inserted)
      throw UserError(spec.path + ": run points " + std::to_string(it->second) + " and " +
                      std::to_string(p.index) + " resolve to the same configuration; remove the "
                      "duplicate sweep value");
  }
  // Sweep axes, plots and claims name stored result columns: keys that exist, renamed keys
  // in their stored spelling (ParamSpec::stored_as). The stored key, or "" if none.
  auto stored_key = [&](const std::string& key) -> std::string {
    if (key == "seed" || key == "task.name" || key == "model.name") return key;
    if (std::string section, name, rest; scoped_key_split(key, &section, &name, &rest)) {
      // A scoped key: a key of that task or model (its stored spelling), else none.
      const Params params = section == "task" ? task_default_params(name)
                                              : Params("model", model_find(name).schema());
      if (!params.has(rest)) return "";
      return section + "." + name + "." + params.stored_key(rest);
    }
    const auto dot = key.find('.');
    if (dot == std::string::npos) return "";
    for (const auto& p : points) {
      const Params* params = run_config_section(p.config, key.substr(0, dot));
      if (params && params->has(key.substr(dot + 1)))
        return key.substr(0, dot + 1) + params->stored_key(key.substr(dot + 1));
    }
    return "";
  };
  auto check = [&](const std::string& key, const std::string& what) {
    if (key.empty()) return;
    const std::string stored = stored_key(key);
    if (stored.empty())
      throw UserError(spec.path + ": " + what + " refers to '" + key +
                      "', which is not a key of this experiment (e.g. \"task.N\", \"train.n\", "
                      "\"model.name\" or \"seed\")");
    if (stored != key)
      throw UserError(spec.path + ": " + what + " '" + key + "': results store this key as '" +
                      stored + "' (its earlier name); write \"" + stored + "\" there");
  };
  for (const auto& axis : spec.axes)
    for (const auto& k : axis.keys) check(k, "sweep key");
  for (const auto& plot : spec.plots) {
    check(plot.x, "plot '" + plot.name + "' x");
    for (const auto& k : plot_line_keys(plot.line)) check(k, "plot '" + plot.name + "' line");
    for (const auto& k : plot_title_keys(plot.title)) check(k, "plot '" + plot.name + "' title");
    check(plot.y, "plot '" + plot.name + "' y");
    check(plot.size, "plot '" + plot.name + "' size");
    for (const auto& [k, v] : plot.where) check(k, "plot '" + plot.name + "' where");
  }
  // [task.<name>] / [model.<name>] tables are checked even for names no run uses.
  for (const auto& [scope, values] : spec.scoped) {
    const std::string section = scope.substr(0, scope.find('.')),
                      name = scope.substr(scope.find('.') + 1);
    Params params = section == "task" ? task_default_params(name)
                                      : Params("model", model_find(name).schema());
    for (const auto& [k, v] : values) {
      try {
        params.set(k, v);
      } catch (const UserError& e) {
        throw UserError(spec.path + ": [" + scope + "]: " + e.what());
      }
    }
  }
  for (const auto& claim : spec.claims) {
    check(claim.along, "claim '" + claim.id + "' along");
    for (const auto& k : claim_size_keys(claim.size)) check(k, "claim '" + claim.id + "' size");
    for (const auto* f : {&claim.a, &claim.b, &claim.where})
      for (const auto& [k, v] : *f) check(k, "claim '" + claim.id + "' filter");
  }
  return points;
}

}  // namespace attn
