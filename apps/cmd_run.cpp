// `attnlab run SPEC.toml --out DIR`: run (or resume) an experiment's sweep.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "apps/commands.h"
#include "core/threads.h"
#include "experiment/experiment_dir.h"
#include "experiment/runner.h"

namespace attn {
namespace {

struct RunOptions {
  RunRequest request;
  std::string shard;
  int threads = 0;
  bool quiet = false;
};

void run_command(RunOptions& o) {
  threads_configure(o.threads);
  if (!o.shard.empty()) shard_parse(o.shard, &o.request.shard_index, &o.request.shard_count);
  o.request.progress = !o.quiet;
  const RunSummary s = experiment_run(o.request);
  fmt::print("{}: {} runs{}: {} ran ({} ok, {} failed), {} already done; results in {}/results.csv\n",
             s.spec.name, s.planned,
             o.request.shard_count > 1
                 ? fmt::format(" in shard {}/{}", o.request.shard_index, o.request.shard_count)
                 : std::string(),
             s.ok + s.failed, s.ok, s.failed, s.skipped, o.request.out_dir);
  if (s.failed > 0)
    fmt::print(stderr, "attnlab: {} runs failed; their errors are in results.csv (column error). "
                       "Re-run with --retry-failed to try them again.\n", s.failed);
}

}  // namespace

void run_command_register(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  o->request.jobs = cpu_count();
  auto* cmd = app.add_subcommand("run", "Run an experiment spec (TOML); resumable");
  cmd->add_option("spec", o->request.spec_path, "Spec file (.toml); see docs/spec-format.md")->required();
  cmd->add_option("-o,--out", o->request.out_dir, "Output directory (results.sqlite, results.csv)")
      ->required();
  cmd->add_option("--set", o->request.overrides,
                  "Override a spec key, section.key=value (repeatable), e.g. --set task.N=16, "
                  "--set 'sweep.train.n=[256, 512]'");
  cmd->add_flag("--quick", o->request.quick, "Apply the spec's [quick] overrides (small grid)");
  cmd->add_option("-j,--jobs", o->request.jobs, "Runs at once, each in its own process")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Compute threads per run (0: ATTNLAB_THREADS or 1)")->capture_default_str();
  cmd->add_option("--shard", o->shard,
                  "Run only shard i of k (0-based), e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT");
  cmd->add_flag("--force-new", o->request.force_new,
                "If DIR holds another spec's results, move them to DIR/old-<time>/ and start again");
  cmd->add_flag("--retry-failed", o->request.retry_failed, "Run failed runs again");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress bar");
  cmd->footer(
      "Interrupt at any time and run the same command again: finished runs are kept, the rest\n"
      "run. Each finished run is one transaction in DIR/results.sqlite.");
  cmd->callback([o] { run_command(*o); });
}

}  // namespace attn
