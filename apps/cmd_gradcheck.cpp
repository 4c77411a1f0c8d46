// `attnlab gradcheck [--filter PREFIX] [--seed S]`: runs the gradient-check table
// (ops/gradcheck.h) — every op and every neural model against central finite differences
// in double — and prints one line per (row, tensor). Exit code 1 if any row fails.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <string>

#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/error.h"
#include "models/gradcheck_table.h"

namespace attn {
namespace {

struct GradcheckOptions {
  std::string filter;
  uint64_t seed = 1;
};

int gradcheck_command_run(const GradcheckOptions& o) {
  int rows = 0, failed = 0;
  fmt::print("{:<36} {:<18} {:>6} {:>7} {:>10}  {}\n", "row", "tensor", "probes", "skipped",
             "max error", "result");
  for (const auto& row : gradcheck_table()) {
    if (row.name.compare(0, o.filter.size(), o.filter) != 0) continue;
    ++rows;
    bool row_ok = true;
    for (const auto& r : gradcheck_run(row, o.seed)) {
      fmt::print("{:<36} {:<18} {:>6} {:>7} {:>10.2e}  {}\n", r.row, r.tensor, r.probes, r.skipped,
                 r.max_error, r.pass ? "PASS" : "FAIL");
      row_ok = row_ok && r.pass;
    }
    if (!row_ok) ++failed;
  }
  ATTN_CHECK(rows > 0, "no gradient-check row starts with '" + o.filter +
                           "' (rows are named like linear, attention/..., model/...)");
  fmt::print("{} of {} rows pass (tolerance: relative error <= the row's, 1e-6 by default)\n",
             rows - failed, rows);
  return failed == 0 ? 0 : 1;
}

}  // namespace

void gradcheck_command_register(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<GradcheckOptions>();
  auto* cmd = app.add_subcommand(
      "gradcheck", "Check every op's and model's gradients against finite differences");
  cmd->add_option("--filter", o->filter, "Only rows whose name starts with this (e.g. model/)");
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->footer("Central differences in double; a row passes when every probed entry's relative\n"
              "error is within the row's tolerance. Exit code 1 when any row fails.");
  cmd->callback([o, exit_code] { *exit_code = gradcheck_command_run(*o); });
}

}  // namespace attn
