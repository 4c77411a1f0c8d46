// `attnlab status DIR...`: each experiment directory's runs against its plan (planned, stored,
// failed, missing; per shard when it was run with --shard or merged from shards), and the
// command that finishes it (experiment/experiment_status.h computes; this file prints).
// Exit code 0 when every planned run of every directory is stored ok, 3 when runs are missing
// or failed, 2 on bad input (a directory without a store).
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <memory>

#include "apps/commands.h"
#include "experiment/experiment_dir.h"
#include "experiment/experiment_status.h"

namespace attn {
namespace {

// A word as the shell reads it: quoted when it holds anything but [A-Za-z0-9_./=:,+-].
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmno"
                                       "pqrstuvwxyz0123456789_./=:,+-") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The `attnlab run` that finishes st's part (its shard's, or shard `shard` of a merged one).
std::string finish_command(const ExperimentStatus& st, int shard, const std::string& out) {
  std::string cmd = "attnlab run " + shell_word(st.spec_path) + " --out " + shell_word(out);
  if (st.quick) cmd += " --quick";
  for (const auto& o : st.overrides) cmd += " --set " + shell_word(o);
  if (st.shard_count > 1) cmd += fmt::format(" --shard {}/{}", shard, st.shard_count);
  if (st.failed > 0) cmd += " --retry-failed";
  return cmd;
}

void status_print(const std::string& dir, int* exit_code) {
  const ExperimentStatus st = experiment_status(dir);
  std::string part;
  if (st.shard_count > 1 && !st.merged)
    part = fmt::format(" (shard {}/{} of a plan of {})", st.shard_index, st.shard_count,
                       st.plan_total);
  else if (st.merged)
    part = fmt::format(" (merged from {} shards)", st.shard_count);
  fmt::print("{}: {} ({}){}: {} planned, {} stored ({} ok, {} failed), {} missing\n", dir,
             st.experiment, st.spec_path, part, st.planned, st.ok + st.failed, st.ok, st.failed,
             st.missing);
  if (st.merged)
    for (const auto& s : st.shards)
      fmt::print("  shard {}/{}: {} planned, {} stored ({} ok, {} failed), {} missing\n", s.index,
                 st.shard_count, s.planned, s.ok + s.failed, s.ok, s.failed, s.missing);
  if (st.stale > 0) fmt::print("  {}\n", experiment_stale_note(st.stale));
  if (st.missing == 0 && st.failed == 0) {
    fmt::print("  complete\n");
    return;
  }
  *exit_code = 3;
  const std::string unknown =
      st.args_known ? ""
                    : " (add the --quick and --set it was run with; this store predates "
                      "their record)";
  if (!st.merged) {
    fmt::print("  to finish: {}{}\n", finish_command(st, st.shard_index, dir), unknown);
    return;
  }
  for (const auto& s : st.shards)
    if (s.missing > 0 || s.failed > 0)
      fmt::print("  to finish shard {}/{}: {}, then attnlab merge {} SHARD_DIR...\n", s.index,
                 st.shard_count, finish_command(st, s.index, "SHARD_DIR"), shell_word(dir));
}

}  // namespace

void status_command_register(CLI::App& app, int* exit_code) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "status", "Planned, stored, failed and missing runs of experiment directories");
  cmd->add_option("dirs", *dirs, "Output directories of run, reproduce or merge")->required();
  cmd->footer(
      "Exit code 0 when every planned run is stored ok, 3 when runs are missing or failed, "
      "2 on bad input.");
  cmd->callback([dirs, exit_code] {
    for (const auto& dir : *dirs) status_print(dir, exit_code);
  });
}

}  // namespace attn
