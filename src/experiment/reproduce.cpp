// Reproducing a group of shipped experiments: run, plot, claims, report, index (reproduce.h).
#include "experiment/reproduce.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/front_option.h"
#include "core/home.h"
#include "core/log.h"
#include "core/suggest.h"
#include "experiment/claims.h"
#include "experiment/experiment_dir.h"
#include "experiment/runner.h"
#include "experiment/selection.h"
#include "experiment/store.h"
#include "experiment/store_dir.h"
#include "io/atomic_file.h"
#include "io/text_escape.h"

namespace attn {
namespace fs = std::filesystem;
namespace {

void say(const ReproduceOptions& o, const std::string& line) {
  if (o.say) o.say(line);
}

std::vector<fs::path> group_specs(const std::string& name) {
  if (reproduce_is_spec(name)) return {fs::path(name)};
  const fs::path group = fs::path(attnlab_home()) / "experiments" / name;
  // A group is named, not given as a path: "", "." or "../experiments/demo" are not groups.
  const std::vector<std::string> groups = reproduce_groups();
  if (std::find(groups.begin(), groups.end(), name) == groups.end())
    throw UserError("no shipped experiments named '" + name + "'" + did_you_mean(name, groups) +
                    " (looked in " + (fs::path(attnlab_home()) / "experiments").string() +
                    "); available: " + join_names(groups));
  std::vector<fs::path> specs;
  for (const auto& e : fs::directory_iterator(group))
    if (e.path().extension() == ".toml") specs.push_back(e.path());
  std::sort(specs.begin(), specs.end());
  ATTN_CHECK(!specs.empty(), group.string() + " holds no .toml specs");
  return specs;
}

// One spec of the group, opened for running (or, under --report-only, for reading; then a
// directory holding another spec's results is `unreadable`, with the reason).
struct SectionRun {
  RunRequest rq;
  std::unique_ptr<OpenExperiment> open;
  RunSummary summary;       // from `open` once its runs are done (the spec alone if unreadable)
  std::string unreadable;
};

SectionRun section_open(const ReproduceOptions& o, const fs::path& spec_path,
                        const std::string& out) {
  SectionRun run;
  RunRequest& rq = run.rq;
  const bool one_spec = reproduce_is_spec(o.name);
  rq.spec_path = spec_path.string();
  rq.out_dir = one_spec ? out : (fs::path(out) / spec_path.stem()).string();
  rq.overrides = o.overrides;
  rq.quick = o.quick;
  rq.jobs = o.jobs;
  rq.groups = o.groups;
  rq.progress = o.progress;
  rq.force_new = o.force_new;
  rq.run_nothing = o.report_only;
  // Reading one spec's runs (attnlab check), a directory holding another spec's is bad input
  // (a group's report notes it instead).
  try {
    run.open = experiment_open(rq);
  } catch (const UserError& e) {
    if (!o.report_only || one_spec) throw;
    run.summary.spec = spec_load(rq.spec_path, o.overrides, o.quick);
    run.unreadable = e.what();
  }
  return run;
}

// A section whose runs are done (or were not run): its figures drawn, its claims checked.
ReportSection section_report(const ReproduceOptions& o, const SectionRun& run) {
  const RunRequest& rq = run.rq;
  const RunSummary& s = run.summary;
  const std::string& unreadable = run.unreadable;
  say(o, "== " + fs::path(rq.spec_path).stem().string() + " (" + rq.spec_path + ")");
  if (!o.report_only)
    say(o, fmt::format("{}: {} runs: {} ran ({} ok, {} failed){}, {} already done", s.spec.name,
                       s.planned, s.ok + s.failed, s.ok, s.failed,
                       s.groups == 0 ? std::string()
                                     : fmt::format("; {} in {} run group{}", s.grouped, s.groups,
                                                   s.groups > 1 ? "s" : ""),
                       s.skipped));
  ReportSection section;
  section.name = s.spec.name;
  section.description = s.spec.description;
  section.spec_path = rq.spec_path;
  section.dir = rq.out_dir;
  if (!unreadable.empty()) {
    // E.g. the directory holds another spec's results: this section's claims are undecided,
    // with the reason; the other sections go on.
    section.note = "not reported: " + unreadable;
    say(o, "attnlab: " + section.name + ": " + section.note);
    for (const auto& claim : s.spec.claims)
      section.claims.push_back(ClaimResult{claim.id, claim.text, Verdict::Inconclusive,
                                                 "not evaluated (see the note)"});
    return section;
  }
  const bool partial = o.report_only && s.skipped < s.planned;
  if (partial)
    section.note = "partial: " + std::to_string(s.skipped) + " of " + std::to_string(s.planned) +
                   " runs are stored (" + front_option(FrontOption::kReportOnly) +
                   " ran nothing); claims and figures use those";
  if (s.interrupted > 0)
    section.note += (section.note.empty() ? "partial: " : "; ") +
                    experiment_interrupted_note(s.interrupted) +
                    "; claims and figures use the stored runs";
  if (!section.note.empty()) say(o, "attnlab: " + section.name + ": " + section.note);
  if (s.stale > 0)  // (the export below prints the same on the terminal)
    section.note += (section.note.empty() ? "" : "; ") + experiment_stale_note(s.stale);
  const auto runs =
      experiment_plan_runs(
        ResultsStore((fs::path(rq.out_dir) / "results.sqlite").string(), StoreAccess::kRead));
  for (const auto& r : runs) (r.status == "ok" ? section.runs_ok : section.runs_failed) += 1;
  std::string figures_note;
  if (section.runs_ok == 0) {
    figures_note = "no figures: no finished runs";
  } else {
    try {
      experiment_plot(rq.out_dir);
    } catch (const UserError& e) {
      figures_note = std::string("figures not drawn: ") + e.what();
      log_warn("attnlab: %s: %s\n", section.name.c_str(), figures_note.c_str());
    }
  }
  if (!figures_note.empty()) section.note += (section.note.empty() ? "" : "; ") + figures_note;
  const auto claim_runs = selection_apply(s.spec, runs);  // [select]: the chosen runs
  section.claims = claims_evaluate(s.spec.claims, claim_runs);
  if (partial)  // a verdict on part of the runs: say so on its line
    for (ClaimResult& c : section.claims) {
      // Runs that are planned but not stored yet may hold the evidence: undecided, not absent.
      if (c.verdict == Verdict::NotEvaluated) c.verdict = Verdict::Inconclusive;
      c.detail += " [partial: " + std::to_string(s.skipped) + " of " + std::to_string(s.planned) +
                  " runs stored]";
    }
  return section;
}

}  // namespace

bool reproduce_is_spec(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0;
}

std::vector<std::string> reproduce_groups() {
  std::vector<std::string> names;
  const fs::path root = fs::path(attnlab_home()) / "experiments";
  if (fs::is_directory(root))
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

ReproduceResult reproduce_run(const ReproduceOptions& o) {
  const std::vector<fs::path> specs = group_specs(o.name);
  ReproduceResult result;
  result.name = o.name;
  const std::string stem = reproduce_is_spec(o.name) ? fs::path(o.name).stem().string() : o.name;
  result.out = o.out.empty() ? "results/reproduce/" + stem + (o.quick ? "-quick" : "") : o.out;
  // Reading one spec's runs (attnlab check) needs them stored (nothing is created otherwise).
  if (reproduce_is_spec(o.name) && o.report_only) store_path_existing(result.out);
  output_dir_make(result.out, front_option(FrontOption::kOut));
  // One group's report to an output directory: another group's is not replaced.
  if (std::ifstream earlier{(fs::path(result.out) / "reproduce.json").string()}) {
    const auto j = nlohmann::json::parse(earlier, nullptr, false);
    const std::string other = j.is_object() && j.contains("name") && j["name"].is_string()
                                  ? j["name"].get<std::string>()
                                  : std::string();
    // (A spec's run directory is the store's: another file of that spec may check it.)
    ATTN_CHECK(
        other.empty() || other == o.name || (reproduce_is_spec(other) && reproduce_is_spec(o.name)),
        result.out + " holds the report of group " + other + "; reproduce " + o.name +
            " into another output directory (" + front_option(FrontOption::kOut) + ")");
  }
  // The workers' fork server, started while this process is small (before any plan).
  const std::unique_ptr<ForkServer> server = o.report_only ? nullptr : sweep_server_start(o.jobs);
  // Every experiment is opened (validated, its directory locked) before any runs; then their
  // pending runs share one pool of o.jobs workers, experiment after experiment, so a worker
  // freed near the end of one experiment starts the next one's runs. Each section is reported
  // (its "==" line, figures, claims) as soon as its own runs are stored; the report keeps the
  // specs' order.
  std::vector<SectionRun> runs;
  for (const auto& spec_path : specs) runs.push_back(section_open(o, spec_path, result.out));
  result.sections.resize(runs.size());
  std::vector<SweepPart> parts(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    SectionRun& run = runs[i];
    if (run.open) {  // (else --report-only on a directory holding another spec: nothing to read)
      parts[i].points = run.open->pending;
      parts[i].store = run.open->store.get();
    }
    parts[i].on_done = [&o, &run, &result, i](const SweepSummary& s) {
      if (run.open) {
        run.open->summary.ok = s.ok;
        run.open->summary.failed = s.failed;
        run.open->summary.interrupted = s.interrupted;
        run.open->summary.groups = s.groups;
        run.open->summary.grouped = s.grouped;
        experiment_close(*run.open);
        run.summary = run.open->summary;
      }
      result.sections[i] = section_report(o, run);
    };
  }
  sweep_execute_parts(parts, SweepOptions{o.jobs, o.progress, server.get(), o.groups});
  report_write(result.out,
               !o.command.empty() ? o.command
                                  : front_command(o.quick ? FrontCommand::kReproduceQuick
                                                          : FrontCommand::kReproduce,
                                                  o.name),
               result.sections);
  result.counts = report_counts(result.sections);
  result.exit_code = report_exit_code(result.counts);
  atomic_file_write((fs::path(result.out) / "reproduce.json").string(),
                    reproduce_result_json(result));
  if (o.out.empty()) reproduce_index_write("results/reproduce");  // the default folder only
  return result;
}

std::string reproduce_result_json(const ReproduceResult& r) {
  nlohmann::json j;
  j["name"] = r.name;
  j["out"] = r.out;
  j["passed"] = r.counts.pass;
  j["failed"] = r.counts.fail;
  j["inconclusive"] = r.counts.inconclusive;
  j["not_evaluated"] = r.counts.not_evaluated;
  j["exit_code"] = r.exit_code;
  j["sections"] = nlohmann::json::array();
  for (const auto& s : r.sections) {
    nlohmann::json js{{"name", s.name},           {"description", s.description},
                      {"spec_path", s.spec_path}, {"dir", s.dir},
                      {"runs_ok", s.runs_ok},     {"runs_failed", s.runs_failed},
                      {"note", s.note},           {"claims", nlohmann::json::array()}};
    for (const auto& c : s.claims)
      js["claims"].push_back({{"id", c.id},
                              {"text", c.text},
                              {"verdict", verdict_name(c.verdict)},
                              {"detail", c.detail}});
    j["sections"].push_back(js);
  }
  return j.dump(1) + "\n";
}

void reproduce_index_write(const std::string& dir) {
  std::vector<fs::path> reports;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && fs::exists(e.path() / "reproduce.json")) reports.push_back(e.path());
  std::sort(reports.begin(), reports.end());
  std::string rows;
  for (const auto& p : reports) {
    std::ifstream in(p / "reproduce.json");
    const auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object()) continue;
    const std::string folder = p.filename().string();
    const int64_t passed = j.value("passed", int64_t{0}), failed = j.value("failed", int64_t{0});
    const int64_t inconclusive = j.value("inconclusive", int64_t{0});
    const int64_t not_evaluated = j.value("not_evaluated", int64_t{0});
    struct stat st {};
    const std::time_t t = ::stat((p / "reproduce.json").c_str(), &st) == 0 ? st.st_mtime : 0;
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M", std::localtime(&t));
    rows += fmt::format(
        "<tr><td><a href=\"{0}/report.html\">{0}</a></td><td>{1}</td><td>{2}</td><td>{3}</td>"
        "<td>{4}</td><td>{5}</td><td>{6}</td></tr>\n",
        xml_escape(folder), passed, failed, inconclusive, not_evaluated,
        failed > 0         ? "some claims fail"
        : inconclusive > 0 ? "some claims undecided"
                           : "no claim fails",
        stamp);
  }
  const std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attnlab reproductions</title>"
      "<style>body{font-family:sans-serif;margin:2em}td,th{padding:.2em "
      ".8em;text-align:left}</style>"
      "</head><body>\n<h1>attnlab reproductions</h1>\n<p>The latest report of every group "
      "reproduced into this folder (<code>attnlab reproduce NAME</code>).</p>\n"
      "<table>\n<tr><th>report</th><th>PASS</th><th>FAIL</th><th>INCONCLUSIVE</th>"
      "<th>NOT EVALUATED</th><th>verdict</th><th>finished</th></tr>\n" +
      rows + "</table>\n</body></html>\n";
  atomic_file_write((fs::path(dir) / "index.html").string(), html);
}

}  // namespace attn
