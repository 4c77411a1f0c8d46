// Reproduction reports: report.md and report.html (figures embedded) with each claim's
// text, the numbers compared and its verdict (PASS, FAIL, INCONCLUSIVE, NOT EVALUATED). Paths
// are shown relative to the report or the repository (report_path_text), never the machine's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/claims.h"

namespace attn {

struct ReportSection {
  std::string name, description, spec_path, dir;
  int64_t runs_ok = 0, runs_failed = 0;
  std::vector<ClaimResult> claims;
  std::string note;  // e.g. why figures are missing
};

// Writes OUT/report.md and OUT/report.html. Figures are read from each section's
// dir/figures/index.json (written by the plotting script).
void report_write(const std::string& out_dir, const std::string& title,
                  const std::vector<ReportSection>& sections);

// A failing or inconclusive claim whose spec entry has doc = "docs/NAME.md#anchor" links to that
// paragraph (relative to OUT); each plot of the spec (read from spec_path) without a figure is
// listed with the reason from dir/figures/skipped.json.

// How a report names a file or folder without the machine's paths: relative to `base` when it is
// under it (a spec's results in OUT/e1 read "e1", OUT itself "."), else relative to
// attnlab_home() (a shipped spec reads "experiments/fu2023/e1_rfa_vs_rfmlp.toml"), else relative
// to the working directory when under it, else as given.
std::string report_path_text(const std::string& path, const std::string& base);

// Text for one markdown table cell: `|` escaped, newlines as spaces.
std::string report_md_cell(const std::string& s);
// Text for HTML: escaped, `code` spans as <code>.
std::string report_html_text(const std::string& s);

// "PASS ...", "FAIL ...", "INCONCLUSIVE ..." lines, one per claim, for the terminal.
std::string report_claim_lines(const std::vector<ReportSection>& sections);

struct ReportCounts {
  int total = 0, pass = 0, fail = 0, inconclusive = 0, not_evaluated = 0;
};
ReportCounts report_counts(const std::vector<ReportSection>& sections);
// "12 of 15 claims pass, 1 fail, 2 inconclusive, ..."
std::string report_counts_text(const ReportCounts& n);
// `attnlab reproduce`'s exit code: 0 when no claim fails or is inconclusive (claims not
// evaluated at this size do not count), 1 when any fails, 3 when none fails but some are
// inconclusive. (2 is a user error, from the command line.)
int report_exit_code(const ReportCounts& n);

}  // namespace attn
