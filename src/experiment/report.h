// Reproduction reports: report.md and report.html (figures embedded) with each claim's
// text, the numbers compared and PASS or FAIL.
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

// A failing claim whose spec entry has doc = "docs/NAME.md#anchor" links to that paragraph
// (relative to OUT); each plot of the spec (read from spec_path) without a figure is listed
// with the reason from dir/figures/skipped.json.

// Text for one markdown table cell: `|` escaped, newlines as spaces.
std::string report_md_cell(const std::string& s);
// Text for HTML: escaped, `code` spans as <code>.
std::string report_html_text(const std::string& s);

// "PASS" or "FAIL" lines, one per claim, for the terminal.
std::string report_claim_lines(const std::vector<ReportSection>& sections);

}  // namespace attn
