// `attnlab list`: every task with its parameters, types, defaults and help.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "apps/commands.h"
#include "core/params.h"
#include "tasks/task.h"

namespace attn {
namespace {

void list_tasks(const std::string& only) {
  if (!only.empty()) task_find(only);  // unknown name: error with a did-you-mean
  fmt::print("Tasks (set parameters with --set task.KEY=VALUE; docs/tasks.md has the definitions)\n");
  for (const auto& info : task_registry()) {
    if (!only.empty() && info.name != only) continue;
    fmt::print("\n{}  {}\n", info.name, info.description);
    for (const auto& spec : info.schema()) {
      std::string detail = spec.help;
      if (!spec.choices.empty()) {
        std::string list;
        for (const auto& c : spec.choices) list += (list.empty() ? "" : "|") + c;
        detail += " [" + list + "]";
      }
      fmt::print("  {:<16} = {:<12} {}\n", spec.name, param_value_text(spec.default_value), detail);
    }
  }
}

}  // namespace

void list_command_register(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List tasks with their parameters and defaults");
  auto only = std::make_shared<std::string>();
  cmd->add_option("task", *only, "Show only this task");
  cmd->callback([only] { list_tasks(*only); });
}

}  // namespace attn
