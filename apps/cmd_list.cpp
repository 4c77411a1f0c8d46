// `attnlab list [tasks|models|probes|experiments|NAME]`: tasks and models with their
// parameters, types and defaults, the probes a spec may name in [eval] probes (from the probe
// table, analysis/probes.h), and the shipped experiments.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "analysis/probes.h"
#include "apps/commands.h"
#include "core/error.h"
#include "core/home.h"
#include "core/params.h"
#include "core/suggest.h"
#include "models/model_registry.h"
#include "models/train_schema.h"
#include "tasks/task.h"

namespace attn {
namespace {

void print_params(const std::vector<ParamSpec>& schema, const std::string& section) {
  for (const auto& spec : schema) {
    std::string detail = spec.help;
    if (!spec.choices.empty()) {
      std::string list;
      for (const auto& c : spec.choices) list += (list.empty() ? "" : "|") + c;
      detail += " [" + list + "]";
    }
    if (!spec.stored_as.empty())
      detail += " (earlier name " + spec.stored_as + ": accepted, and the name in stored results)";
    fmt::print("  {:<22} = {:<12} {}\n", section + spec.name, param_value_text(spec.default_value),
               detail);
  }
}

void list_tasks(const std::string& only) {
  fmt::print("Tasks (attnlab data TASK --set task.KEY=VALUE; [task] in specs; docs/tasks.md)\n");
  for (const auto& info : task_registry()) {
    if (!only.empty() && info.name != only) continue;
    fmt::print("\n{}  {}\n", info.name, info.description);
    print_params(info.schema(), "");
  }
}

void list_models(const std::string& only) {
  fmt::print("\nModels ([model] name = \"...\" in specs; [train] n and the keys shown)\n");
  for (const auto& info : model_registry()) {
    if (!only.empty() && info.name != only) continue;
    fmt::print("\n{}  {}\n", info.name, info.description);
    print_params(info.schema(), "model.");
    print_params(info.train_schema(), "train.");
  }
  if (only.empty()) {
    fmt::print("\nEvery model: ");
    for (const auto& p : train_common_schema())
      fmt::print("train.{} = {}  ", p.name, param_value_text(p.default_value));
    for (const auto& p : eval_schema())
      fmt::print("eval.{} = {}  ", p.name, param_value_text(p.default_value));
    fmt::print("\n");
  }
}

// One probe per line: name, description; then what it applies to and where it is explained.
void list_probes(const std::string& only) {
  fmt::print("\nProbes ([eval] probes = [\"NAME\", ...] in specs; not part of run ids)\n");
  for (const ProbeRow& row : probe_table()) {
    if (!only.empty() && row.name != only) continue;
    std::string applies;
    if (!row.models.empty()) applies += "model " + join_names(row.models, "|");
    if (!row.tasks.empty())
      applies += (applies.empty() ? "" : ", ") + ("task " + join_names(row.tasks, "|"));
    if (!row.eval_instances.empty())
      applies += (applies.empty() ? "" : ", ") + ("eval.instances " + row.eval_instances);
    fmt::print("  {:<22} {}\n  {:<22} (for {}; {})\n", row.name, row.description, "",
               applies.empty() ? "any run" : applies, row.doc);
  }
}

void list_experiments() {
  namespace fs = std::filesystem;
  fmt::print(
      "\nShipped experiments (attnlab reproduce GROUP; attnlab run experiments/GROUP/SPEC.toml)\n");
  const fs::path root = fs::path(attnlab_home()) / "experiments";
  for (const auto& group : shipped_experiment_groups()) {
    std::vector<std::string> specs;
    for (const auto& e : fs::directory_iterator(root / group))
      if (e.path().extension() == ".toml") specs.push_back(e.path().filename().string());
    std::sort(specs.begin(), specs.end());
    const std::string list = join_names(specs);
    fmt::print("  {:<12} {}\n", group, list);
  }
}

void list_run(const std::string& what) {
  if (what.empty()) {
    list_tasks("");
    list_models("");
    list_probes("");
    list_experiments();
    return;
  }
  if (what == "tasks") return list_tasks("");
  if (what == "models") return list_models("");
  if (what == "probes") return list_probes("");
  if (what == "experiments") return list_experiments();
  for (const auto& info : task_registry())
    if (info.name == what) return list_tasks(what);
  for (const auto& info : model_registry())
    if (info.name == what) return list_models(what);
  for (const ProbeRow& row : probe_table())
    if (row.name == what) return list_probes(what);
  std::vector<std::string> names = {"tasks", "models", "probes", "experiments"};
  for (const auto& info : task_registry()) names.push_back(info.name);
  for (const auto& info : model_registry()) names.push_back(info.name);
  for (const ProbeRow& row : probe_table()) names.emplace_back(row.name);
  throw UserError("attnlab list: nothing called '" + what + "'" + did_you_mean(what, names) +
                  "; try tasks, models, probes, experiments, or a task, model or probe name");
}

}  // namespace

void list_command_register(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "list", "List tasks, models (with parameters and defaults), probes and shipped experiments");
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what,
                  "tasks, models, probes, experiments, or one task, model or probe name");
  cmd->callback([what] { list_run(*what); });
}

}  // namespace attn
