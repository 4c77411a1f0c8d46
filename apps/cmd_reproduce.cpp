// `attnlab reproduce NAME [--quick] [--out DIR]`: run the shipped specs of experiments/NAME/,
// draw their figures, check their claims, write report.md and report.html
// (experiment/reproduce.h does the work; this file parses and prints).
// Exit code 0 when no claim fails or is inconclusive, 1 when one fails, 3 when one is
// inconclusive and none fails, 2 on bad input (report_exit_code).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <memory>

#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/cpus.h"
#include "core/threads.h"
#include "experiment/reproduce.h"
#include "experiment/runner.h"

namespace attn {

void reproduce_command_register(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  auto quiet = std::make_shared<bool>(false);
  o->jobs = cpus_available();
  auto* cmd = app.add_subcommand(
      "reproduce", "Run a group of shipped experiments, check their claims, write a report");
  cmd->add_option("name", o->name, "Group name: a folder of experiments/ (e.g. demo)")->required();
  cmd->add_flag("--quick", o->quick, "Use each spec's [quick] overrides (CI-sized)");
  cmd->add_option("-o,--out", o->out,
                  "Output directory (default results/reproduce/NAME, or NAME-quick)");
  cmd->add_option("-j,--jobs", o->jobs, "Runs at once")
      ->check(whole_number(1, INT32_MAX))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", *quiet, "No progress bar");
  cmd->add_flag("--no-groups{false}", o->groups,
                "Run every point in its own worker, as `attnlab run --no-groups` does (the same "
                "stored values; for timing the run-by-run path, bench/full_reproduction.sh)");
  cmd->add_flag("--force-new", o->force_new,
                "Where a spec changed since its results were stored, move them aside and rerun");
  auto* report_only = cmd->add_flag("--report-only", o->report_only,
                "Run nothing: check the claims and draw the figures from the runs stored so far "
                "(e.g. while a long reproduction is still running elsewhere); sections with "
                "missing runs say so");
  report_only->excludes(cmd->get_option("--force-new"));
  cmd->footer("Exit code 0 when no claim fails or is inconclusive (claims not evaluated at this "
              "size do not count), 1 when any fails, 3 when none fails but some are "
              "inconclusive, 2 on bad input.");
  cmd->callback([o, quiet, exit_code] {
    threads_configure(0);
    o->progress = !*quiet;
    o->say = [](const std::string& line) {
      fmt::print("{}\n", line);
      std::fflush(stdout);
    };
    const ReproduceResult r = reproduce_run(*o);
    fmt::print("\n{}", report_claim_lines(r.sections));
    fmt::print("{}\n", report_counts_text(r.counts));
    fmt::print("report: {}/report.md, {}/report.html\n", r.out, r.out);
    *exit_code = r.exit_code;
  });
}

std::vector<std::string> shipped_experiment_groups() { return reproduce_groups(); }

}  // namespace attn
