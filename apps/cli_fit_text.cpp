// Shapes, metrics and shared options of `fit` and `predict` (see cli_fit_text.h).
#include "apps/cli_fit_text.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "apps/cli_numbers.h"
#include "train/metrics.h"

namespace attn {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + ")";
}

std::string metrics_text(const std::vector<std::pair<std::string, double>>& metrics,
                         const std::string& prefix, bool all) {
  std::string s;
  for (const auto& [name, value] : metrics)
    if (all || metric_is_summary(name))
      s += fmt::format("{}{}{} {:.6g}", s.empty() ? "" : "  ", prefix, name, value);
  return s;
}

void fit_output_options_add(CLI::App* cmd, int* threads, bool* quiet) {
  cmd->add_option("--threads", *threads,
                  "Compute threads (0: ATTNLAB_THREADS or 1); results do not depend on it")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", *quiet, "Print no summary (and, for fit, no progress)");
}

}  // namespace attn
