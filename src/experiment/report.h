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

// "PASS" or "FAIL" lines, one per claim, for the terminal.
std::string report_claim_lines(const std::vector<ReportSection>& sections);

}  // namespace attn
