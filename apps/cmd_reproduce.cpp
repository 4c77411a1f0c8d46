// `attnlab reproduce NAME [--quick] [--out DIR]`: run the shipped specs of experiments/NAME/,
// draw their figures, check their claims, write report.md and report.html.
// Exit code 0 when every claim passes, 1 otherwise.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/error.h"
#include "core/home.h"
#include "core/suggest.h"
#include "core/threads.h"
#include "experiment/claims.h"
#include "experiment/experiment_dir.h"
#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/store.h"

namespace attn {
namespace fs = std::filesystem;
namespace {

struct ReproduceOptions {
  std::string name, out;
  bool quick = false, quiet = false, force_new = false, report_only = false;
  int jobs = 1;
};

std::vector<std::string> experiment_groups() {
  std::vector<std::string> names;
  const fs::path root = fs::path(attnlab_home()) / "experiments";
  if (fs::is_directory(root))
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

int reproduce(const ReproduceOptions& o) {
  const fs::path group = fs::path(attnlab_home()) / "experiments" / o.name;
  if (!fs::is_directory(group)) {
    const std::string list = join_names(experiment_groups());
    throw UserError("no shipped experiments named '" + o.name + "' (looked in " + group.string() +
                    "); available: " + list);
  }
  std::vector<fs::path> specs;
  for (const auto& e : fs::directory_iterator(group))
    if (e.path().extension() == ".toml") specs.push_back(e.path());
  std::sort(specs.begin(), specs.end());
  ATTN_CHECK(!specs.empty(), group.string() + " holds no .toml specs");
  const std::string out =
      o.out.empty() ? "results/reproduce/" + o.name + (o.quick ? "-quick" : "") : o.out;

  std::vector<ReportSection> sections;
  for (const auto& spec_path : specs) {
    RunRequest rq;
    rq.spec_path = spec_path.string();
    rq.out_dir = (fs::path(out) / spec_path.stem()).string();
    rq.quick = o.quick;
    rq.jobs = o.jobs;
    rq.progress = !o.quiet;
    rq.force_new = o.force_new;
    rq.run_nothing = o.report_only;
    fmt::print("== {} ({})\n", spec_path.stem().string(), rq.spec_path);
    std::fflush(stdout);
    RunSummary s;
    std::string unreadable;  // report-only: why the directory cannot be read as this spec's
    try {
      s = experiment_run(rq);
    } catch (const UserError& e) {
      if (!o.report_only) throw;
      s.spec = spec_load(rq.spec_path, {}, o.quick);
      unreadable = e.what();
    }
    ReportSection section;
    section.name = s.spec.name;
    section.description = s.spec.description;
    section.spec_path = rq.spec_path;
    section.dir = rq.out_dir;
    if (!unreadable.empty()) {
      // E.g. the directory holds another spec's results: this section's claims fail with the
      // reason, the other sections go on.
      section.note = "not reported: " + unreadable;
      fmt::print("attnlab: {}: {}\n", section.name, section.note);
      for (const auto& claim : s.spec.claims)
        section.claims.push_back(ClaimResult{claim.id, claim.text, false, "not evaluated (see the note)"});
      sections.push_back(std::move(section));
      continue;
    }
    const bool partial = o.report_only && s.skipped < s.planned;
    if (partial)
      section.note = "partial: " + std::to_string(s.skipped) + " of " + std::to_string(s.planned) +
                     " runs are stored (--report-only ran nothing); claims and figures use those";
    if (!section.note.empty()) fmt::print("attnlab: {}: {}\n", section.name, section.note);
    if (s.stale > 0)  // (the export below prints the same on the terminal)
      section.note += (section.note.empty() ? "" : "; ") + experiment_stale_note(s.stale);
    const auto runs =
        experiment_plan_runs(ResultsStore((fs::path(rq.out_dir) / "results.sqlite").string()));
    for (const auto& r : runs) (r.status == "ok" ? section.runs_ok : section.runs_failed) += 1;
    std::string figures_note;
    if (section.runs_ok == 0) {
      figures_note = "no figures: no finished runs";
    } else {
      try {
        experiment_plot(rq.out_dir);
      } catch (const UserError& e) {
        figures_note = std::string("figures not drawn: ") + e.what();
        fmt::print(stderr, "attnlab: {}: {}\n", section.name, figures_note);
      }
    }
    if (!figures_note.empty()) section.note += (section.note.empty() ? "" : "; ") + figures_note;
    for (const auto& claim : s.spec.claims) {
      section.claims.push_back(claim_evaluate(claim, runs));
      if (partial)  // a verdict on part of the runs: say so on its line
        section.claims.back().detail += " [partial: " + std::to_string(s.skipped) + " of " +
                                        std::to_string(s.planned) + " runs stored]";
    }
    sections.push_back(std::move(section));
  }
  report_write(out, "attnlab reproduce " + o.name + (o.quick ? " --quick" : ""), sections);
  const std::string lines = report_claim_lines(sections);
  fmt::print("\n{}", lines);
  fmt::print("report: {}/report.md, {}/report.html\n", out, out);
  return lines.find("FAIL ") == std::string::npos ? 0 : 1;
}

}  // namespace

void reproduce_command_register(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  o->jobs = cpu_count();
  auto* cmd = app.add_subcommand(
      "reproduce", "Run a group of shipped experiments, check their claims, write a report");
  cmd->add_option("name", o->name, "Group name: a folder of experiments/ (e.g. demo)")->required();
  cmd->add_flag("--quick", o->quick, "Use each spec's [quick] overrides (CI-sized)");
  cmd->add_option("-o,--out", o->out,
                  "Output directory (default results/reproduce/NAME, or NAME-quick)");
  cmd->add_option("-j,--jobs", o->jobs, "Runs at once")->check(whole_number(1, INT32_MAX))->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "No progress bar");
  cmd->add_flag("--force-new", o->force_new,
                "Where a spec changed since its results were stored, move them aside and rerun");
  auto* report_only = cmd->add_flag("--report-only", o->report_only,
                "Run nothing: check the claims and draw the figures from the runs stored so far "
                "(e.g. while a long reproduction is still running elsewhere); sections with "
                "missing runs say so");
  report_only->excludes(cmd->get_option("--force-new"));
  cmd->footer("Exit code 0 when every claim passes, 1 when any fails, 2 on bad input.");
  cmd->callback([o, exit_code] {
    threads_configure(0);
    *exit_code = reproduce(*o);
  });
}

std::vector<std::string> shipped_experiment_groups() { return experiment_groups(); }

}  // namespace attn
