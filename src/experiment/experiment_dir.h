// An experiment's output directory: run a spec into it (resumable), export, plot, merge.
//
// DIR/results.sqlite  the store (see store.h); meta records the spec's run fingerprint
// DIR/results.csv     regenerated from the store after every run, merge or plot
// DIR/spec.json       the spec's plots and claims, for the plotting script
// DIR/figures/        PNG and SVG figures, figures/index.json, figures/data/ (figure_data.h)
// DIR/.attnlab.lock   held by the one runner computing into DIR (dir_lock.h)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiment/plan.h"
#include "experiment/spec.h"

namespace attn {

class Comm;
class DirLock;
class ResultsStore;
struct StoredRun;

struct RunRequest {
  std::string spec_path;
  std::string out_dir;
  std::vector<std::string> overrides;  // --set
  bool quick = false;
  int jobs = 1;
  int shard_index = 0, shard_count = 1;  // --shard i/k (0-based i)
  bool force_new = false;
  bool retry_failed = false;
  // Run groups (experiment/run_groups.h; SweepOptions::groups); false: --no-groups. Under
  // --mpi a group goes to one rank whole (experiment/sweep_mpi.h).
  bool groups = true;
  bool progress = true;
  // Run nothing: validate, open (or create) the store, count what it holds, export the CSV
  // (`attnlab reproduce --report-only`: claims and figures from the runs stored so far).
  bool run_nothing = false;
  // --mpi: the job's ranks. Rank 0 calls experiment_run and hands the runs out to the
  // others (experiment/sweep_mpi.h); null or one rank: this process runs them (--jobs).
  const Comm* comm = nullptr;
};

struct RunSummary {
  Spec spec;
  int64_t planned = 0;  // points of this shard
  int64_t skipped = 0;  // already in the store
  int64_t ok = 0, failed = 0;
  int64_t interrupted = 0;          // stopped by a signal from outside: not stored (RunOutcome)
  int64_t groups = 0, grouped = 0;  // run groups of several points run, and their points
  int64_t stale = 0;  // stored runs left out of results.csv: not in the current plan
};

// Validates everything, then runs the points of the shard that the store does not hold
// yet. UserError (nothing written) on a bad spec, or when DIR holds another spec's
// results and force_new is not set. experiment_open, then the sweep, then experiment_close.
RunSummary experiment_run(const RunRequest& request);

// An experiment ready to run: its spec loaded and planned, DIR locked (unless run_nothing)
// and its store open, the points of the shard not stored yet in `pending`.
// `attnlab reproduce` opens every experiment of a group, then runs all their pending points
// in one pool of workers (runner.h sweep_execute_parts).
struct OpenExperiment {
  RunRequest request;
  RunSummary summary;              // spec, planned, skipped; ok/failed/groups by the caller
  std::vector<RunPoint> points;    // the whole plan (pending points into it)
  std::vector<const RunPoint*> pending;
  std::unique_ptr<DirLock> lock;   // null under run_nothing
  std::unique_ptr<ResultsStore> store;
  bool read_only = false;          // run_nothing on a directory it cannot write
  OpenExperiment();
  ~OpenExperiment();
};

// Everything experiment_run does before its sweep (same errors, nothing runs).
std::unique_ptr<OpenExperiment> experiment_open(const RunRequest& request);

// After the sweep: regenerates DIR/results.csv (counting summary.stale), closes the store and
// releases DIR.
void experiment_close(OpenExperiment& experiment);

// The runs of a store that belong to the plan its spec was last run with (meta plan_ids, the
// run ids of every point), or all of them in stores from before plan_ids was recorded.
// *stale (if given) counts the others: runs whose resolved settings differ from what the spec
// resolves to now (e.g. a model parameter added since, with its default). results.csv, the
// figures and the claims use only the plan's runs.
// The runs come in plan order, each with its point index in the plan (runs stored before the
// grid grew keep the old grid's index in the store).
std::vector<StoredRun> experiment_plan_runs(const ResultsStore& store, int64_t* stale = nullptr);
// The same with the plan given as run ids in plan order (empty: every stored run).
std::vector<StoredRun> experiment_plan_runs(const ResultsStore& store,
                                            const std::vector<std::string>& plan_ids,
                                            int64_t* stale = nullptr);

// "N stored runs are not in the current plan (...); left out of ...": one wording for run,
// export, plot, merge and reproduce.
std::string experiment_stale_note(int64_t stale);

// Creates output directory `dir` (and its parents) unless it is one already. IoError (a user
// error, exit 2) naming `dir` when it is a file or cannot be created; `option` is how the
// caller's front end names it (front_option(FrontOption::kOut), "OUT").
void output_dir_make(const std::string& dir, const std::string& option);
// "N runs were stopped from outside (a signal) and not stored; run the same command to run
// them": one wording for run and reproduce.
std::string experiment_interrupted_note(int64_t interrupted);

// The largest shard count --shard accepts (a shard index is an int).
inline constexpr int64_t kShardCountMax = 2147483647;

// Parses "i/k" (decimal integers, 0 <= i < k <= kShardCountMax); UserError (one line naming
// the text) otherwise, including for values that do not fit in 64 bits.
void shard_parse(const std::string& text, int* index, int* count);

// Regenerates DIR/results.csv from DIR/results.sqlite.
void experiment_export(const std::string& dir);

// Draws DIR's figures: writes their numbers (figure_data_write: DIR/figures/data/*.json),
// then draws them with the plotting script (Debian's Python and matplotlib).
void experiment_plot(const std::string& dir);

// Merges shard directories into out_dir (created if needed); refuses shards of
// different specs. Returns the number of runs in out_dir afterwards.
int64_t experiment_merge(const std::string& out_dir, const std::vector<std::string>& shard_dirs);

}  // namespace attn
