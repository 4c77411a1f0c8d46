// Reproducing a group of shipped experiments (`attnlab reproduce NAME`, attnlab.reproduce), or
// one spec file (`attnlab reproduce SPEC.toml`; `attnlab check SPEC --out DIR`, attnlab.check):
// run every spec of experiments/NAME/ into OUT/<spec>/, draw its figures, check its claims,
// write OUT/report.md, OUT/report.html and OUT/reproduce.json, and (with the default OUT,
// results/reproduce/NAME[-quick]) refresh results/reproduce/index.html, the index of every
// group's latest report.
//
// Front ends parse options and show results: the status lines reproduce_run produces
// ("== spec (path)", notes) go to ReproduceOptions::say; warnings go through core/log.h.
// Errors: UserError (nothing run) for an unknown group or a group without specs, and
// whatever experiment_run throws (except with report_only on a group, where a section whose
// directory cannot be read as its spec's gets a note and inconclusive claims).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "experiment/report.h"

namespace attn {

struct ReproduceOptions {
  // A folder of experiments/, or a spec file (NAME ending in .toml, anywhere): then OUT itself
  // is the spec's run directory (`attnlab check SPEC --out DIR` is that with report_only;
  // there a DIR without a store, or holding another spec's runs, is an error, not a note).
  std::string name;
  std::string out;  // default results/reproduce/NAME (a spec: its stem), or -quick
  std::vector<std::string> overrides;  // --set, applied to every spec
  std::string command;                 // the report's title line ("": the reproduce command)
  bool quick = false;           // each spec's [quick] overrides
  bool progress = true;         // progress bar on a terminal
  bool force_new = false;       // move another spec's results aside and rerun
  bool report_only = false;     // run nothing: claims and figures from what is stored
  int jobs = 1;                 // runs at once
  bool groups = true;           // run groups (runner.h RunRequest::groups); false: --no-groups
  std::function<void(const std::string& line)> say;  // status lines (none if empty)
};

struct ReproduceResult {
  std::string name, out;        // the group and its output directory
  std::vector<ReportSection> sections;
  ReportCounts counts;          // claims by verdict
  int exit_code = 0;            // report_exit_code: 0 none fails or is inconclusive, 1 some
                                // fails, 3 some inconclusive (none fails)
};

ReproduceResult reproduce_run(const ReproduceOptions& options);

// Whether NAME names a spec file (ends in .toml) rather than a group.
bool reproduce_is_spec(const std::string& name);

// The folders of experiments/ under attnlab_home(), sorted.
std::vector<std::string> reproduce_groups();

// The result as JSON: {"name", "out", "passed", "failed", "inconclusive", "not_evaluated",
// "exit_code", "sections": [{"name", "description", "spec_path", "dir", "runs_ok",
// "runs_failed", "note", "claims": [{"id", "text", "verdict" ("PASS" | "FAIL" |
// "INCONCLUSIVE" | "NOT EVALUATED"), "detail"}]}]} (OUT/reproduce.json, Python).
std::string reproduce_result_json(const ReproduceResult& result);

// Rewrites DIR/index.html: one row per DIR/*/reproduce.json (a group's latest report) with
// its verdict counts and a link to its report.html.
void reproduce_index_write(const std::string& dir);

}  // namespace attn
