// Running the query-key analysis on a model file (`attnlab qk-stats`, attnlab.qk_stats): read
// a .safetensors file, find the query and key weights of each layer (qk_layout.h), compute
// the statistics of every layer and head next to the null model (qk_stats.h), and with
// `out` write OUT/qk_stats.csv, OUT/qk_stats.json and OUT/heatmaps/*.png|svg (top-left
// blocks of A_l and A_{l,h}). Everything is validated before any work; on a user error
// (UserError naming the option, front_option(FrontOption::kLayers)) nothing is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/qk_report.h"
#include "analysis/qk_stats.h"

namespace attn {

// The options of `attnlab qk-stats` (same names and defaults; see its --help).
struct QkStatsOptions {
  std::string file;
  std::string layout = "auto";
  std::string query_pattern, key_pattern;
  int64_t heads = 0, head_size = 0;
  std::string layers;
  std::string heatmap_layers;
  std::string heatmap_heads = "0";
  int64_t heatmap_block = 64;
  std::string out;
  uint64_t seed = 0;
  int threads = 0;
};

struct QkStatsResult {
  QkReportInfo info;
  std::vector<QkLayerResult> layers;
  std::string json;       // qk_report_json(info, layers)
  bool heatmaps = false;  // heat maps were written to out/heatmaps/
};

QkStatsResult qk_stats_run(const QkStatsOptions& options);

}  // namespace attn
