// Running, exporting, plotting and merging experiment directories.
#include "experiment/experiment_dir.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/front_option.h"
#include "core/home.h"
#include "core/log.h"
#include "core/process.h"
#include "core/version.h"
#include "experiment/dir_lock.h"
#include "experiment/experiment_status.h"
#include "experiment/figure_data.h"
#include "experiment/plan.h"
#include "experiment/run_args.h"
#include "experiment/run_distributed.h"
#include "experiment/runner.h"
#include "experiment/selection.h"
#include "experiment/spec_change.h"
#include "experiment/spec_fields.h"
#include "experiment/store.h"
#include "experiment/store_csv.h"
#include "experiment/store_dir.h"
#include "experiment/sweep_interrupt.h"
#include "experiment/sweep_mpi.h"
#include "io/atomic_file.h"

namespace attn {
namespace fs = std::filesystem;
namespace {

// The parameter columns of results.csv: the swept keys, then any other key a plot uses
// (so a plot over a key fixed by --set still finds its column).
std::vector<std::string> swept_keys(const Spec& spec) {
  std::vector<std::string> keys;
  auto add = [&](const std::string& k) {
    if (k.empty() || k == "seed") return;
    for (const auto& have : keys)
      if (have == k) return;
    keys.push_back(k);
  };
  for (const auto& axis : spec.axes)
    for (const auto& k : axis.keys) add(k);
  for (const auto& plot : spec.plots) {
    add(plot.x);
    add(plot.y);
    for (const auto& k : plot_line_keys(plot.line)) add(k);
    for (const auto& [k, v] : plot.where) add(k);
    for (const auto& k : plot_title_keys(plot.title)) add(k);
  }
  return keys;
}

// Moves the results of an earlier spec to DIR/old-<time>/ (for --force-new).
void move_aside(const std::string& dir) {
  char stamp[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  fs::path old = fs::path(dir) / (std::string("old-") + stamp);
  for (int k = 2; fs::exists(old); ++k)
    old = fs::path(dir) / (std::string("old-") + stamp + "-" + std::to_string(k));
  fs::create_directories(old);
  for (const char* name : {"results.sqlite", "results.sqlite-wal", "results.sqlite-shm",
                           "results.csv", "series.csv", "spec.json", "figures"}) {
    const fs::path p = fs::path(dir) / name;
    if (fs::exists(p)) fs::rename(p, old / name);
  }
  log_warn("attnlab: moved the earlier results to %s\n", old.c_str());
}

// Whether the store's fingerprint `previous` is this spec's at the other size (quick vs full).
bool is_other_size(const RunRequest& rq, const std::string& previous) {
  try {
    return hash_hex(spec_runs_json(spec_load(rq.spec_path, rq.overrides, !rq.quick))) == previous;
  } catch (const UserError&) {
    return false;
  }
}

// Why DIR cannot take this run: it holds this spec's results at the other size (quick vs
// full), or another spec's, whose first differing key (spec_change.h) is `key`.
std::string different_spec_message(const RunRequest& rq, const ResultsStore& existing,
                                   bool other_size, const std::string& key) {
  const std::string aside = std::string("; use another output directory (") +
                            front_option(FrontOption::kOut) + "), or add " +
                            front_option(FrontOption::kForceNew) +
                            " to move the old results aside and start again";
  const std::string quick_size =
      std::string("quick-size (") + front_option(FrontOption::kQuick) + ")";
  if (other_size)
    return rq.out_dir + " holds the " + (rq.quick ? "full-size" : quick_size) + " results of " +
           existing.meta("experiment") + " (" + existing.meta("spec_path") + ") and this run is " +
           (rq.quick ? quick_size : "full-size") + aside;
  return rq.out_dir + " holds results of a different spec (" + existing.meta("experiment") + ", " +
         existing.meta("spec_path") + "): " + key +
         " (not a swept key's values: it changes what the stored runs mean)" + aside;
}

// The files a run writes into DIR.
constexpr const char* kRunFiles[] = {"results.csv", "series.csv", "spec.json", "results.sqlite"};

// What killed runners, exports and plots left in DIR: the temp files of their atomic writes
// (results.csv.tmp.<pid>, figures/NAME.svg.tmp.<pid>, ...) and of a store being created.
// Called with DIR's lock held.
void remove_leftovers(const std::string& dir) {
  std::vector<fs::path> written;
  for (const char* name : kRunFiles) written.push_back(fs::path(dir) / name);
  std::error_code ec;
  for (const char* sub : {"figures", "figures/data"})
    for (fs::directory_iterator it(fs::path(dir) / sub, ec), end; !ec && it != end;
         it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const size_t tmp = name.find(".tmp.");
      if (tmp != std::string::npos && tmp > 0)
        written.push_back(it->path().parent_path() / name.substr(0, tmp));
    }
  for (const fs::path& path : written) {
    const int n = atomic_file_remove_stale_temps(path.string());
    if (n > 0)
      log_warn(
          "attnlab: removed %d leftover temp file(s) of %s in %s (of a killed "
          "process)\n",
          n, path.filename().c_str(), path.parent_path().c_str());
  }
}

std::vector<std::string> json_string_list(const std::string& text) {
  std::vector<std::string> out;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_array())
    for (const auto& v : j)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace

void shard_parse(const std::string& text, int* index, int* count) {
  const std::string shard = front_option(FrontOption::kShard);
  const std::string usage = "; give i/k with 0 <= i < k, e.g. " + shard + " 0/4 (Slurm: " + shard +
                            " $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT with --array=0-(k-1))";
  // Decimal digits only (an optional '-' is parsed to be refused as negative); 64-bit, so
  // an out-of-range value is refused instead of wrapping.
  auto parse = [](const std::string& part, int64_t* v) {
    const char* end = part.data() + part.size();
    const auto r = std::from_chars(part.data(), end, *v, 10);
    return !part.empty() && r.ec == std::errc() && r.ptr == end;
  };
  const auto slash = text.find('/');
  int64_t i = 0, k = 0;
  ATTN_CHECK(slash != std::string::npos && parse(text.substr(0, slash), &i) &&
                 parse(text.substr(slash + 1), &k),
             shard + " " + text + " is not two integers i/k" + usage);
  ATTN_CHECK(k >= 1 && k <= kShardCountMax, shard + " " + text +
                                                ": the shard count k must be between 1 and " +
                                                std::to_string(kShardCountMax) + usage);
  ATTN_CHECK(i >= 0 && i < k, shard + " " + text +
                                  ": the shard index i must be between 0 and k-1 = " +
                                  std::to_string(k - 1) + usage);
  *index = static_cast<int>(i);
  *count = static_cast<int>(k);
}

OpenExperiment::OpenExperiment() = default;
OpenExperiment::~OpenExperiment() = default;

std::unique_ptr<OpenExperiment> experiment_open(const RunRequest& rq) {
  auto e = std::make_unique<OpenExperiment>();
  e->request = rq;
  RunSummary& summary = e->summary;
  summary.spec = spec_load(rq.spec_path, rq.overrides, rq.quick);
  const Spec& spec = summary.spec;
  e->points = plan_make(spec);  // validates every point
  const std::vector<RunPoint>& points = e->points;
  const std::string runs_json = spec_runs_json(spec);
  const std::string fingerprint = hash_hex(runs_json);

  ATTN_CHECK(rq.jobs >= 1, "jobs = " + std::to_string(rq.jobs) + " must be at least 1");
  ATTN_CHECK(rq.shard_count >= 1 && rq.shard_index >= 0 && rq.shard_index < rq.shard_count,
             "shard " + std::to_string(rq.shard_index) + "/" + std::to_string(rq.shard_count) +
                 " must be i/k with 0 <= i < k");
  // Only now touch the output directory.
  ATTN_CHECK(!rq.out_dir.empty(), std::string("the output directory (") +
                                      front_option(FrontOption::kOut) +
                                      ") is required: the directory for results.sqlite");
  output_dir_make(rq.out_dir, front_option(FrontOption::kOut));
  std::error_code ec;
  for (const char* name : kRunFiles)
    if (fs::is_directory(fs::path(rq.out_dir) / name, ec))
      throw IoError((fs::path(rq.out_dir) / name).string() +
                    " is a directory; attnlab writes that file there: move it away or choose "
                    "another output directory (" +
                    front_option(FrontOption::kOut) + ")");
  // A runner holds DIR until experiment_close; --report-only only reads what is stored.
  if (!rq.run_nothing) {
    e->lock = std::make_unique<DirLock>(rq.out_dir);
    remove_leftovers(rq.out_dir);
  }
  // --report-only on a directory it cannot write (e.g. a read-only copy): read the store as
  // it is and write nothing there.
  e->read_only = rq.run_nothing && fs::exists(store_path(rq.out_dir)) &&
                 ::access(rq.out_dir.c_str(), W_OK | X_OK) != 0;
  const StoreAccess access = e->read_only ? StoreAccess::kRead : StoreAccess::kWrite;
  // A spec whose grid changed (axis values, seeds; spec_change.h) takes the directory over:
  // its stored runs keep their ids and are reused, runs no longer in the grid are left out.
  // force_new still moves the old results aside for any change.
  bool grid_changed = false;
  if (fs::exists(store_path(rq.out_dir))) {
    auto existing = std::make_unique<ResultsStore>(store_path(rq.out_dir), access);
    const std::string previous = existing->meta("spec_hash");
    if (!previous.empty() && previous != fingerprint) {
      const bool other_size = is_other_size(rq, previous);
      const SpecChange change = spec_change(existing->meta("spec_runs"), runs_json);
      grid_changed = !other_size && change.key.empty() && !rq.force_new;
      if (grid_changed) {
        log_warn(
            "attnlab: %s: the spec's grid changed since its runs were stored (%s): stored "
            "runs of the new grid are reused%s\n",
            rq.out_dir.c_str(), change.grid.c_str(),
            rq.run_nothing ? "" : ", only its new points run");
      } else if (!rq.force_new) {
        throw UserError(different_spec_message(rq, *existing, other_size, change.key));
      } else {
        existing.reset();
        move_aside(rq.out_dir);
      }
    }
  }
  e->store = std::make_unique<ResultsStore>(store_path(rq.out_dir), access);
  ResultsStore& store = *e->store;
  if (!e->read_only) {
    if (store.meta("spec_hash").empty() || grid_changed) {
      store.set_meta("spec_hash", fingerprint);
      store.set_meta("spec_runs", runs_json);
      if (store.meta("attnlab_version").empty()) store.set_meta("attnlab_version", kVersion);
    }
    if (!rq.run_nothing)  // what `run` was given besides the spec and DIR
      store.set_meta("run_args", run_args_json(RunArgs{rq.quick, rq.overrides, rq.shard_index,
                                                        rq.shard_count}));
    store.set_meta("experiment", spec.name);
    store.set_meta("spec_path", spec.path);
    store.set_meta("spec_json", spec_to_json(spec));
    nlohmann::json swept = swept_keys(spec);
    store.set_meta("swept", swept.dump());
    nlohmann::json plan_ids = nlohmann::json::array();
    for (const auto& p : points) plan_ids.push_back(p.run_id);
    store.set_meta("plan_ids", plan_ids.dump());
    atomic_file_write((fs::path(rq.out_dir) / "spec.json").string(), spec_to_json(spec));
  }

  const std::set<std::string> done = store.finished_ids(!rq.retry_failed);
  for (const auto& p : points) {
    if (p.index % rq.shard_count != rq.shard_index) continue;
    ++summary.planned;
    if (done.count(p.run_id))
      ++summary.skipped;
    else
      e->pending.push_back(&p);
  }
  if (rq.run_nothing) e->pending.clear();
  sweep_interrupt_plan(summary.planned, summary.skipped);
  const bool mpi = rq.comm != nullptr && rq.comm->size() > 1;
  for (const RunPoint* p : e->pending)
    if (!mpi && run_point_is_distributed(*p)) {
      log_warn(
          "attnlab: train.distributed = true needs `%s` with K >= 2; fitting each run in one "
          "process\n",
          front_command(FrontCommand::kRunMpiStart).c_str());
      break;
    }
  return e;
}

void experiment_close(OpenExperiment& e) {
  const RunRequest& rq = e.request;
  if (e.read_only) {
    experiment_plan_runs(*e.store, &e.summary.stale);
    log_warn("attnlab: %s is not writable: reading its store as it is (results.csv "
             "and spec.json not regenerated)\n", rq.out_dir.c_str());
  } else {
    const std::vector<StoredRun> runs = experiment_plan_runs(*e.store, &e.summary.stale);
    const std::vector<std::string> swept = swept_keys(e.summary.spec);
    results_export_csv(runs, swept, (fs::path(rq.out_dir) / "results.csv").string());
    selection_export_csv(selection_make(e.summary.spec.select, swept, runs), swept, rq.out_dir);
  }
  e.store.reset();
  e.lock.reset();
}

RunSummary experiment_run(const RunRequest& rq) {
  const bool mpi = rq.comm != nullptr && rq.comm->size() > 1;
  // The workers' fork server, started while this process is small: before the plan is
  // expanded and before the output directory is locked (the server holds no lock).
  const std::unique_ptr<ForkServer> server =
      rq.run_nothing || mpi ? nullptr : sweep_server_start(rq.jobs);
  const std::unique_ptr<OpenExperiment> e = experiment_open(rq);
  const SweepOptions options{rq.jobs, rq.progress, server.get(), rq.groups};
  const SweepSummary s = mpi ? sweep_mpi_coordinate(e->pending, *e->store, *rq.comm, options)
                             : sweep_execute(e->pending, *e->store, options);
  e->summary.ok = s.ok;
  e->summary.failed = s.failed;
  e->summary.interrupted = s.interrupted;
  e->summary.groups = s.groups;
  e->summary.grouped = s.grouped;
  experiment_close(*e);
  return e->summary;
}

std::vector<StoredRun> experiment_plan_runs(const ResultsStore& store, int64_t* stale) {
  return experiment_plan_runs(store, json_string_list(store.meta("plan_ids")), stale);
}

std::vector<StoredRun> experiment_plan_runs(const ResultsStore& store,
                                            const std::vector<std::string>& plan_ids,
                                            int64_t* stale) {
  std::vector<StoredRun> runs = store.load_runs();
  int64_t left_out = 0;
  if (!plan_ids.empty()) {
    // In plan order: after the grid grew, a stored run's point index is the old grid's.
    std::map<std::string, int64_t> position;
    for (const auto& id : plan_ids) position.emplace(id, static_cast<int64_t>(position.size()));
    const auto end = std::remove_if(runs.begin(), runs.end(), [&](const StoredRun& r) {
      return position.count(r.run_id) == 0;
    });
    left_out = static_cast<int64_t>(runs.end() - end);
    runs.erase(end, runs.end());
    for (StoredRun& r : runs) r.point = position.at(r.run_id);
    std::stable_sort(runs.begin(), runs.end(),
                     [](const StoredRun& a, const StoredRun& b) { return a.point < b.point; });
  }
  if (stale != nullptr) *stale = left_out;
  return runs;
}

namespace {

// Regenerates DIR/results.csv (and the selection's selected.csv and selection.csv, from the
// [select] of the spec the store was last run with) from the plan's runs, saying if any
// stored run was left out.
void export_plan_csv(const ResultsStore& store, const std::string& dir) {
  int64_t stale = 0;
  const std::vector<StoredRun> runs = experiment_plan_runs(store, &stale);
  const std::vector<std::string> swept = json_string_list(store.meta("swept"));
  results_export_csv(runs, swept, (fs::path(dir) / "results.csv").string());
  const std::string spec_json = store.meta("spec_json");
  const auto spec = nlohmann::json::parse(spec_json.empty() ? "{}" : spec_json, nullptr, false);
  const SelectSpec select = spec.is_object() && spec.contains("select")
                                ? select_from_json(spec.at("select"))
                                : SelectSpec{};
  selection_export_csv(selection_make(select, swept, runs), swept, dir);
  if (stale > 0) log_warn("attnlab: %s: %s\n", dir.c_str(), experiment_stale_note(stale).c_str());
}

}  // namespace

void output_dir_make(const std::string& dir, const std::string& option) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw IoError(dir + " exists and is not a directory; choose another output directory (" +
                  option + ")");
  fs::create_directories(dir, ec);
  if (ec) throw IoError(dir + ": cannot create the output directory (" + ec.message() + ")");
}

std::string experiment_stale_note(int64_t stale) {
  return std::to_string(stale) +
         " stored runs are not in the current plan (points no longer in the grid, or settings "
         "that differ from what the spec resolves to now, e.g. a changed default); left out of "
         "results.csv, the figures and the claims";
}

std::string experiment_interrupted_note(int64_t interrupted) {
  return std::to_string(interrupted) + (interrupted == 1 ? " run was" : " runs were") +
         " stopped from outside (a signal) and not stored; run the same command to run " +
         (interrupted == 1 ? "it" : "them");
}

void experiment_export(const std::string& dir) {
  ResultsStore store(store_path_existing(dir), StoreAccess::kRead);
  export_plan_csv(store, dir);
  const std::string spec_json = store.meta("spec_json");
  if (!spec_json.empty()) atomic_file_write((fs::path(dir) / "spec.json").string(), spec_json);
}

void experiment_plot(const std::string& dir) {
  experiment_export(dir);
  figure_data_write(dir);  // every number the figures show; the script only draws
  const std::string script = (fs::path(attnlab_home()) / "scripts" / "plot_results.py").string();
  if (!fs::exists(script))
    throw IoError(script + ": the plotting script is missing; set ATTNLAB_HOME to the attnlab "
                           "source tree");
  const int rc = process_run({attnlab_python(), script, dir});
  if (rc == 127)
    throw UserError("cannot run " + attnlab_python() + " for plotting; install python3-matplotlib "
                    "(scripts/install-deps) or set ATTNLAB_PYTHON");
  if (rc != 0)
    throw UserError("plotting " + dir + " failed (exit code " + std::to_string(rc) + ")");
}

int64_t experiment_merge(const std::string& out_dir, const std::vector<std::string>& shard_dirs) {
  ATTN_CHECK(!shard_dirs.empty(),
             "attnlab merge OUT SHARD_DIR...: name at least one shard directory");
  // Check every shard before writing anything.
  std::string fingerprint, first_dir;
  std::vector<std::unique_ptr<ResultsStore>> shards;
  int shard_count = 0;  // the shards' k when all say the same (meta run_args), else 0
  for (const auto& dir : shard_dirs) {
    if (!fs::exists(store_path(dir)))
      throw IoError(dir + ": no results.sqlite here; is this a shard's output directory?");
    shards.push_back(std::make_unique<ResultsStore>(store_path(dir), StoreAccess::kRead));
    const std::string h = shards.back()->meta("spec_hash");
    RunArgs args;
    const int k = run_args_parse(shards.back()->meta("run_args"), &args) ? args.shard_count : 0;
    shard_count = fingerprint.empty() || k == shard_count ? k : 0;
    if (fingerprint.empty()) {
      fingerprint = h;
      first_dir = dir;
    } else if (h != fingerprint) {
      const SpecChange change =
          spec_change(shards.front()->meta("spec_runs"), shards.back()->meta("spec_runs"));
      if (!change.key.empty())
        throw UserError(dir + " holds results of a different spec than " + first_dir + " (" +
                        change.key + "); merge only shards of one spec");
      throw UserError(dir + " holds another grid of the spec of " + first_dir + " (" + change.grid +
                      "); run every shard with one grid (the same " +
                      front_option(FrontOption::kQuick) + " and " +
                      front_option(FrontOption::kSet) + "), then merge");
    }
  }
  for (const auto& dir : shard_dirs) {
    std::error_code ec;
    ATTN_CHECK(!fs::equivalent(dir, out_dir, ec),
               "merge: " + out_dir + " is also one of the shards; merge into a new directory");
  }
  output_dir_make(out_dir, "OUT");
  const DirLock lock(out_dir);
  remove_leftovers(out_dir);
  ResultsStore out(store_path(out_dir));
  const std::string existing = out.meta("spec_hash");
  // OUT may hold an earlier grid of the shards' spec (spec_change.h): it takes the new one.
  bool grid_changed = false;
  if (!existing.empty() && existing != fingerprint) {
    const SpecChange change = spec_change(out.meta("spec_runs"), shards.front()->meta("spec_runs"));
    if (!change.key.empty())
      throw UserError(out_dir + " already holds results of a different spec (" + change.key +
                      "); merge into a new directory");
    grid_changed = true;
  }
  for (const char* key : {"spec_hash", "spec_runs", "experiment", "attnlab_version", "spec_path",
                          "spec_json", "swept"})
    if (out.meta(key).empty() || (grid_changed && std::string(key) != "attnlab_version"))
      out.set_meta(key, shards.front()->meta(key));
  // How the shards were run (experiment_status names the shards with missing runs).
  if (shard_count > 1) {
    RunArgs args;
    run_args_parse(shards.front()->meta("run_args"), &args);
    args.shard_index = 0;
    args.shard_count = 1;
    out.set_meta("run_args", run_args_json(args));
    out.set_meta("merged_shards", std::to_string(shard_count));
  }
  // The plan is the shards' (the newest run of the spec), not what OUT held before: after a
  // parameter was added, re-run shards have new run ids and OUT's old ones are stale.
  const std::string plan_ids = shards.front()->meta("plan_ids");
  if (!plan_ids.empty()) out.set_meta("plan_ids", plan_ids);
  const std::set<std::string> have_ok = out.finished_ids(false);
  for (const auto& shard : shards)
    for (const auto& run : shard->load_runs()) {
      if (have_ok.count(run.run_id)) continue;  // already there (ok results are identical)
      if (run.status != "ok" && out.finished_ids(true).count(run.run_id)) continue;
      out.insert(run);
    }
  export_plan_csv(out, out_dir);
  atomic_file_write((fs::path(out_dir) / "spec.json").string(), out.meta("spec_json"));
  const int64_t runs = static_cast<int64_t>(out.load_runs().size());
  const std::string missing = experiment_missing_text(experiment_status(out_dir));
  if (!missing.empty())
    log_warn("attnlab: merge: %s: %s; run those shards to the end and merge again\n",
             out_dir.c_str(), missing.c_str());
  return runs;
}

}  // namespace attn
