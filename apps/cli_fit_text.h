// What `attnlab fit` and `attnlab predict` check and print: file name endings, array
// shapes "(n, T, d)", metric lists, and their shared --threads / --quiet options.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace attn {

// True when s is longer than suffix and ends with it.
bool ends_with(const std::string& s, const std::string& suffix);

// "(2, 3, 4)"
std::string shape_text(const std::vector<int64_t>& shape);

// "PREFIXname value" pairs; `all` = false keeps the summary metrics (metric_is_summary: mse,
// nmse, accuracy or token_accuracy).
std::string metrics_text(const std::vector<std::pair<std::string, double>>& metrics,
                         const std::string& prefix, bool all);

// --threads (0: ATTNLAB_THREADS or 1) and -q/--quiet ("Do not print the summary").
void fit_output_options_add(CLI::App* cmd, int* threads, bool* quiet);

}  // namespace attn
