// The qk-stats report: a table for the terminal, CSV and JSON texts of the statistics of
// every layer and head (see qk_stats.h for what each number means).
//
// CSV: one row per layer (scope "layer", head empty), then one per (layer, head) (scope
// "head"); columns scope, layer, head, c_star, identity_cosine, diag_ratio,
// abs_diag_ratio, positive_diag_fraction, residual, frobenius, then null_c_star,
// null_identity_cosine, null_diag_ratio, null_abs_diag_ratio,
// null_positive_diag_fraction, null_residual.
// JSON: {"tool", "version", "file", "layout", "prefix", "D", "num_heads", "head_size",
// "heads_source", "seed", "convention", "layers": [...], "heads": [...]}; each list entry
// has "layer" (and "head") and the same fields as the CSV columns.
// Non-finite values (NaN, ±inf: see qk_stats.h) are null in JSON and nan/inf in CSV.
// Numbers are written in shortest round-trip form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/qk_stats.h"

namespace attn {

struct QkReportInfo {
  std::string file;
  std::string layout;  // bert | gpt2 | custom
  std::string prefix;
  int64_t D = 0, heads = 0, head_size = 0;
  std::string heads_source;
  uint64_t seed = 0;
};

std::string qk_report_table(const QkReportInfo& info, const std::vector<QkLayerResult>& layers);
std::string qk_report_csv(const std::vector<QkLayerResult>& layers);
std::string qk_report_json(const QkReportInfo& info, const std::vector<QkLayerResult>& layers);

}  // namespace attn
