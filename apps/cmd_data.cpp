// `attnlab data TASK --n COUNT --seed S [--set task.KEY=VALUE]... -o FILE.npz`:
// generates samples first .. first+n-1 of a task's dataset and writes them as .npz.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/progress.h"
#include "core/threads.h"
#include "io/atomic_file.h"
#include "io/dataset_file.h"
#include "tasks/task.h"

namespace attn {
namespace {

struct DataOptions {
  std::string task;
  int64_t n = 0;
  uint64_t seed = 0;
  int64_t first = 0;
  std::vector<std::string> sets;
  std::string out;
  int threads = 0;
  int64_t chunk = 256;
  bool quiet = false;
};

// Applies "task.KEY=VALUE" (or "KEY=VALUE") overrides.
void apply_sets(Params& params, const std::vector<std::string>& sets) {
  for (const auto& item : sets) {
    const ParamItem p = param_item_parse(item, "task.KEY=VALUE, e.g. --set task.N=16");
    ATTN_CHECK(
        p.section.empty() || p.section == "task",
        "--set " + item + ": `attnlab data` only takes task.* keys, not " + p.section + ".*");
    params.set_text(p.key, p.value);
  }
}

std::string shape_text(int64_t n, const std::vector<int64_t>& tail) {
  std::string s = "(" + std::to_string(n);
  for (int64_t t : tail) s += ", " + std::to_string(t);
  return s + ")";
}

void print_summary(const std::string& path, const std::string& task, const Batch& b) {
  double mean = 0.0, lo = INFINITY, hi = -INFINITY;
  for (double y : b.Y) {
    mean += y;
    lo = std::min(lo, y);
    hi = std::max(hi, y);
  }
  mean /= static_cast<double>(b.Y.size());
  double var = 0.0;
  for (double y : b.Y) var += (y - mean) * (y - mean);
  var /= static_cast<double>(b.Y.size());
  fmt::print("wrote {}: {} n={}  X {}  Y {}", path, task, b.n,
             shape_text(b.n, {b.shape.T, b.shape.d_in}),
             shape_text(b.n, {b.shape.T_out, b.shape.d_out}));
  for (const auto& r : b.raw)
    fmt::print("  {} {}", r.spec.name, shape_text(b.n, r.spec.sample_shape));
  fmt::print("\n  Y: mean {:.4g}  std {:.4g}  min {:.4g}  max {:.4g}\n", mean, std::sqrt(var), lo,
             hi);
}

void data_run(const DataOptions& o) {
  ATTN_CHECK(o.n >= 1, "--n " + std::to_string(o.n) + " must be at least 1");
  ATTN_CHECK(o.first >= 0, "--first " + std::to_string(o.first) + " must be >= 0");
  ATTN_CHECK(o.chunk >= 1, "--chunk " + std::to_string(o.chunk) + " must be at least 1");
  ATTN_CHECK(o.out.size() > 4 && o.out.substr(o.out.size() - 4) == ".npz",
             "-o " + o.out + ": the output must be a .npz file name, e.g. -o data.npz");
  threads_configure(o.threads);

  Params params = task_default_params(o.task);
  apply_sets(params, o.sets);
  const auto task = task_make(o.task, params);

  // Refuse impossible sizes before any work: memory, then the output path and disk space.
  uint64_t bytes = 0;
  ATTN_CHECK(batch_bytes(task->shape(), o.n, &bytes),
             "--n " + std::to_string(o.n) + " is too large to address; lower --n");
  memory_check(bytes, "--n " + std::to_string(o.n) + " samples of " + o.task,
               "lower --n, or write several parts with --first");
  output_path_check(o.out, dataset_file_bytes(task->shape(), o.n));

  Progress progress("generating " + o.task, o.n);
  const Batch batch = task_generate(*task, o.seed, o.first, o.n, o.chunk, &progress);
  progress.finish();
  dataset_write(o.out, batch, DatasetMeta{o.task, o.seed, o.first, params.to_json()});
  if (!o.quiet) print_summary(o.out, o.task, batch);
}

}  // namespace

void data_command_register(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  auto* cmd = app.add_subcommand("data", "Generate a dataset of a task as a numpy .npz file");
  cmd->add_option("task", o->task, "Task name (see `attnlab list`)")->required();
  cmd->add_option("--n", o->n, "Number of samples")->required()->check(whole_number(1, INT64_MAX));
  cmd->add_option("--seed", o->seed, "Dataset seed: the same seed gives the same samples")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--first", o->first,
                  "Index of the first sample (disjoint ranges of one seed are disjoint parts "
                  "of one dataset, e.g. a test set)")
      ->check(whole_number(0, INT64_MAX))
      ->capture_default_str();
  cmd->add_option("--set", o->sets, "Task parameter, task.KEY=VALUE (repeatable)");
  cmd->add_option("-o,--out", o->out, "Output .npz file (written atomically)")->required();
  cmd->add_option("--threads", o->threads,
                  "Compute threads (0: ATTNLAB_THREADS or 1); results do not depend on it")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_option("--chunk", o->chunk, "Samples per work unit; results do not depend on it")
      ->check(whole_number(1, INT64_MAX))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the summary");
  cmd->footer(
      "Writes X (n, T, d_in), Y (n, T_out, d_out), the task's raw variables and `meta` (JSON:\n"
      "task, seed, first, n, resolved parameters). Load with numpy.load(FILE).");
  cmd->callback([o] { data_run(*o); });
}

}  // namespace attn
