// `attnlab run SPEC.toml --out DIR`: run (or resume) an experiment's sweep.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/cpus.h"
#include "core/error.h"
#include "core/threads.h"
#include "experiment/experiment_dir.h"
#include "experiment/runner.h"
#include "experiment/sweep_interrupt.h"
#include "experiment/sweep_mpi.h"
#include "mpi/mpi_session.h"

namespace attn {
namespace {

struct RunOptions {
  RunRequest request;
  std::string shard;
  int threads = 0;
  bool quiet = false;
  bool mpi = false;
  bool jobs_given = false;
};

// --mpi: rank 0 runs the experiment and hands the runs out; the other ranks serve it.
RunSummary run_under_mpi(RunOptions& o, const Comm& world) {
  RunSummary s;
  try {
    ATTN_CHECK(!o.jobs_given || world.size() == 1,
               "--jobs does not combine with --mpi: every rank but 0 runs one run (or run group) "
               "at a time; "
               "start more ranks instead (mpirun -np K+1 for K runs at once)");
    o.request.comm = &world;
    s = experiment_run(o.request);
  } catch (const std::exception& e) {
    sweep_mpi_finish(world, e.what());
    throw;
  }
  sweep_mpi_finish(world, "");
  return s;
}

void run_command(RunOptions& o) {
  threads_configure(o.threads);
  sweep_interrupt_install();  // Ctrl-C, SIGTERM: "S of P runs stored; run the same command..."
  if (!o.shard.empty()) shard_parse(o.shard, &o.request.shard_index, &o.request.shard_count);
  o.request.progress = !o.quiet;
  std::unique_ptr<MpiSession> session;
  if (o.mpi) {
    session = std::make_unique<MpiSession>();  // one-line UserError in a build without MPI
    if (!session->world().is_root()) {
      sweep_mpi_serve(session->world());
      return;
    }
  }
  const RunSummary s = session ? run_under_mpi(o, session->world()) : experiment_run(o.request);
  fmt::print(
      "{}: {} runs{}{}: {} ran ({} ok, {} failed{}), {} already done; results in {}/results.csv\n",
      s.spec.name, s.planned,
      o.request.shard_count > 1
          ? fmt::format(" in shard {}/{}", o.request.shard_index, o.request.shard_count)
          : std::string(),
      !session                       ? std::string()
      : session->world().size() == 1 ? std::string(" on 1 MPI rank")
                                     : fmt::format(" on {} MPI ranks", session->world().size()),
      s.ok + s.failed, s.ok, s.failed,
      s.groups == 0
          ? std::string()
          : fmt::format("; {} in {} run group{}", s.grouped, s.groups, s.groups > 1 ? "s" : ""),
      s.skipped, o.request.out_dir);
  if (s.stale > 0) fmt::print(stderr, "attnlab: {}\n", experiment_stale_note(s.stale));
  if (s.interrupted > 0)
    fmt::print(stderr, "attnlab: {}\n", experiment_interrupted_note(s.interrupted));
  if (s.failed > 0)
    fmt::print(stderr, "attnlab: {} runs failed; their errors are in results.csv (column error). "
                       "Re-run with --retry-failed to try them again.\n", s.failed);
}

}  // namespace

void run_command_register(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  o->request.jobs = cpus_available();  // affinity mask, SLURM_CPUS_PER_TASK
  auto* cmd = app.add_subcommand("run", "Run an experiment spec (TOML); resumable");
  cmd->add_option("spec", o->request.spec_path, "Spec file (.toml); see docs/spec-format.md")
      ->required();
  cmd->add_option("-o,--out", o->request.out_dir, "Output directory (results.sqlite, results.csv)")
      ->required();
  cmd->add_option("--set", o->request.overrides,
                  "Override a spec key, section.key=value (repeatable), e.g. --set task.N=16, "
                  "--set 'sweep.train.n=[256, 512]'");
  cmd->add_flag("--quick", o->request.quick, "Apply the spec's [quick] overrides (small grid)");
  auto* jobs =
      cmd->add_option("-j,--jobs", o->request.jobs, "Runs at once, each in its own process")
          ->check(whole_number(1, INT32_MAX))
          ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Compute threads per run (0: ATTNLAB_THREADS or 1)")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_option(
      "--shard", o->shard,
      "Run only shard i of k (0-based), e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT");
  cmd->add_flag(
      "--force-new", o->request.force_new,
      "If DIR holds another spec's results, move them to DIR/old-<time>/ and start again");
  cmd->add_flag("--retry-failed", o->request.retry_failed, "Run failed runs again");
  cmd->add_flag("--no-groups{false}", o->request.groups,
                "Run every point in its own worker: no run groups (ridge runs with the same "
                "inputs sharing features, kernel and spectrum; fresh-sample training runs "
                "sharing their batches in lockstep; docs/spec-format.md#run-groups)");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress bar");
  cmd->add_flag("--mpi", o->mpi,
                "Under mpirun: rank 0 hands the runs out to the other ranks and writes DIR; "
                "train.distributed fits use every rank (docs/cluster.md)");
  cmd->footer(
      "Interrupt at any time and run the same command again: finished runs are kept, the rest\n"
      "run. Each finished run is one transaction in DIR/results.sqlite.");
  cmd->callback([o, jobs] {
    o->jobs_given = jobs->count() > 0;
    run_command(*o);
  });
}

}  // namespace attn
