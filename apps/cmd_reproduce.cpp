// `attnlab reproduce NAME [--quick] [--out DIR]`: run the shipped specs of experiments/NAME/
// (or one spec file), draw their figures, check their claims, write report.md and report.html;
// `attnlab check SPEC --out DIR`: the same from DIR's stored runs, running nothing
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
#include "experiment/sweep_interrupt.h"

namespace attn {
namespace {

// Runs the reproduction (or check) and prints its verdicts; sets *exit_code.
void reproduce_print(ReproduceOptions& o, bool quiet, int* exit_code) {
  threads_configure(0);
  sweep_interrupt_install();  // Ctrl-C, SIGTERM: "S of P runs stored; run the same command..."
  o.progress = !quiet;
  o.say = [](const std::string& line) {
    fmt::print("{}\n", line);
    std::fflush(stdout);
  };
  const ReproduceResult r = reproduce_run(o);
  fmt::print("\n{}", report_claim_lines(r.sections));
  fmt::print("{}\n", report_counts_text(r.counts));
  fmt::print("report: {}/report.md, {}/report.html\n", r.out, r.out);
  *exit_code = r.exit_code;
}

constexpr const char* kVerdictExitCodes =
    "Exit code 0 when no claim fails or is inconclusive (claims not evaluated at this size do "
    "not count), 1 when any fails, 3 when none fails but some are inconclusive, 2 on bad input.";

}  // namespace

void check_command_register(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  auto quiet = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "check",
      "Check a spec's claims and draw its figures from a results directory (runs nothing)");
  cmd->add_option("spec", o->name, "Spec file (.toml), anywhere")
      ->required()
      ->check([](const std::string& spec) {
        return reproduce_is_spec(spec)
                   ? std::string()
                   : spec +
                         " is not a .toml spec file; give the path of the spec the runs of "
                         "--out were made with";
      });
  cmd->add_option("-o,--out", o->out, "The spec's results directory (attnlab run SPEC --out DIR)")
      ->required();
  cmd->add_flag("--quick", o->quick, "The spec's [quick] overrides, as the runs were made");
  cmd->add_option("--set", o->overrides, "The --set overrides the runs were made with");
  cmd->add_flag("-q,--quiet", *quiet, "No progress bar");
  cmd->footer(std::string("The report (report.md, report.html, reproduce.json) is written into "
                          "DIR. ") +
              kVerdictExitCodes);
  cmd->callback([o, quiet, exit_code] {
    o->report_only = true;
    o->command = "attnlab check " + o->name + " --out " + o->out + (o->quick ? " --quick" : "");
    for (const auto& set : o->overrides) o->command += " --set " + set;  // as the runs were made
    reproduce_print(*o, *quiet, exit_code);
  });
}

void reproduce_command_register(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  auto quiet = std::make_shared<bool>(false);
  o->jobs = cpus_available();
  auto* cmd = app.add_subcommand(
      "reproduce", "Run a group of shipped experiments, check their claims, write a report");
  cmd->add_option("name", o->name,
                  "Group name: a folder of experiments/ (e.g. demo), or a spec file (.toml) "
                  "run into --out itself")
      ->required();
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
  cmd->footer(kVerdictExitCodes);
  cmd->callback([o, quiet, exit_code] { reproduce_print(*o, *quiet, exit_code); });
}

std::vector<std::string> shipped_experiment_groups() { return reproduce_groups(); }

}  // namespace attn
