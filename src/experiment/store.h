// Results store: one SQLite file per experiment output directory.
//
// A writer (the runner) creates a new store under a temp name and renames it into place,
// so a crash leaves no store or a usable one; it works in WAL mode and, when it closes,
// checkpoints and returns the file to journal_mode=DELETE, so a finished results.sqlite is
// one self-contained file that plain readers (sqlite3, pandas) open even in a read-only
// directory. A reader (StoreAccess::kRead) opens it read-only and changes nothing.
//
// Tables: meta(key, value); runs(run_id, point, seed, status, error, config_json,
// wall_seconds, peak_rss_bytes, attnlab_version, git_commit, finished_at);
// params(run_id, key, value, swept) with every resolved parameter by dotted key;
// metrics(run_id, name, value); series(run_id, name, step, value).
// Each finished run is written in one transaction, so a crash leaves either the whole
// run or nothing. Re-inserting a run id replaces it (a retried failure).
// The CSV export of stored runs is store_csv.h.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "experiment/plan.h"
#include "experiment/run_point.h"

struct sqlite3;

namespace attn {

struct StoredRun {
  std::string run_id;
  int64_t point = 0;
  uint64_t seed = 0;
  std::string status;  // "ok" or "failed"
  std::string error;
  std::string config_json;
  std::vector<std::pair<std::string, std::string>> params;  // dotted key -> value text
  std::vector<std::string> swept;                           // keys swept for this run
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<FitLog::Point> series;
  double wall_seconds = 0;
  int64_t peak_rss_bytes = 0;
  std::string version, commit, finished_at;

  // Parameter value by dotted key ("seed" included); "" when absent.
  std::string param(const std::string& key) const;
  // Metric value, or NaN when absent.
  double metric(const std::string& name) const;
};

enum class StoreAccess { kWrite, kRead };

class ResultsStore {
 public:
  // kWrite: opens or creates PATH. kRead: opens an existing PATH read-only. IoError (one
  // line naming PATH) if it cannot be opened, is not an attnlab store, or, for kWrite, its
  // directory is not writable.
  explicit ResultsStore(const std::string& path, StoreAccess access = StoreAccess::kWrite);
  ~ResultsStore();
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  std::string meta(const std::string& key) const;  // "" when unset
  void set_meta(const std::string& key, const std::string& value);

  // Ids of stored runs with status ok (and failed ones too if include_failed).
  std::set<std::string> finished_ids(bool include_failed) const;
  void insert(const RunPoint& point, const RunOutcome& outcome);
  void insert(const StoredRun& run);  // e.g. when merging shards
  std::vector<StoredRun> load_runs() const;  // ordered by point
  const std::string& path() const { return path_; }

 private:
  void exec(const std::string& sql) const;

  std::string path_;
  sqlite3* db_ = nullptr;
  bool writer_ = false;
};

}  // namespace attn
