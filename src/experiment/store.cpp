// SQLite results store (the CSV export is store_csv.cpp).
#include "experiment/store.h"

#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "core/errno_kind.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/version.h"
#include "experiment/store_errors.h"
#include "io/atomic_file.h"

namespace attn {
namespace {

// The error of a failed SQLite call on `db`: a full disk (SQLITE_FULL or ENOSPC) with the
// advice to free space and run the same command again; a damaged file (SQLITE_CORRUPT,
// SQLITE_NOTADB) named as such with what to do; else SQLite's own words.
[[noreturn]] void sqlite_fail(sqlite3* db, const std::string& path, const std::string& message) {
  const int code = sqlite3_errcode(db) & 0xff;  // the primary result code
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
    throw IoError(path + " is damaged (SQLite: " + message +
                  "): its runs cannot be read; move it away and run again (or restore it from "
                  "a copy)");
  const bool full = code == SQLITE_FULL;
  throw IoError(
      store_failure(path, sqlite3_system_errno(db), full, path + ": SQLite error: " + message));
}

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      sqlite_fail(db, path, sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement& text(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& integer(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& real(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  // Steps once; true while rows remain.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite_fail(sqlite3_db_handle(stmt_), path_, sqlite3_errmsg(sqlite3_db_handle(stmt_)));
  }
  void run() {
    while (step()) {
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string col_text(int i) const {
    const auto* p = sqlite3_column_text(stmt_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t col_int(int i) const { return sqlite3_column_int64(stmt_, i); }
  double col_real(int i) const {
    return sqlite3_column_type(stmt_, i) == SQLITE_NULL ? NAN : sqlite3_column_double(stmt_, i);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  std::string path_;
};

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

namespace {

const char* const kSchema[] = {
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs(run_id TEXT PRIMARY KEY, point INTEGER NOT NULL, "
    "seed INTEGER NOT NULL, status TEXT NOT NULL, error TEXT NOT NULL, config_json TEXT "
    "NOT NULL, wall_seconds REAL, peak_rss_bytes INTEGER, attnlab_version TEXT, git_commit "
    "TEXT, finished_at TEXT)",
    "CREATE TABLE IF NOT EXISTS params(run_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT "
    "NOT NULL, swept INTEGER NOT NULL, PRIMARY KEY(run_id, key))",
    "CREATE TABLE IF NOT EXISTS metrics(run_id TEXT NOT NULL, name TEXT NOT NULL, value "
    "REAL, PRIMARY KEY(run_id, name))",
    "CREATE TABLE IF NOT EXISTS series(run_id TEXT NOT NULL, name TEXT NOT NULL, step "
    "INTEGER NOT NULL, value REAL)",
    "CREATE INDEX IF NOT EXISTS series_run ON series(run_id)",
};

std::string dir_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Runs sql on db; "" on success, else SQLite's message.
std::string exec_on(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) == SQLITE_OK) return "";
  const std::string msg = err ? err : sqlite3_errmsg(db);
  sqlite3_free(err);
  return msg.empty() ? "unknown error" : msg;
}

// Creates an empty attnlab store at PATH all at once: the schema goes into PATH.tmp.<pid>
// (rollback journal, durable), which is renamed onto PATH. A crash (or a full disk) leaves
// no PATH, and a temp file that atomic_file_remove_stale_temps removes later.
void store_create(const std::string& path) {
  const std::string temp = atomic_file_temp_path(path, static_cast<long>(::getpid()));
  std::remove(temp.c_str());
  sqlite3* db = nullptr;
  std::string error;
  if (sqlite3_open_v2(temp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    error = db ? sqlite3_errmsg(db) : "cannot allocate";
  if (error.empty()) error = exec_on(db, "PRAGMA synchronous=FULL");
  if (error.empty()) error = exec_on(db, "BEGIN");
  for (const char* sql : kSchema)
    if (error.empty()) error = exec_on(db, sql);
  if (error.empty()) error = exec_on(db, "COMMIT");
  const int code = db ? sqlite3_errcode(db) : SQLITE_NOMEM;
  const int sys_errno = db ? sqlite3_system_errno(db) : 0;
  if (sqlite3_close(db) != SQLITE_OK && error.empty()) error = "cannot close";
  int rename_errno = 0;
  if (error.empty() && std::rename(temp.c_str(), path.c_str()) != 0) {
    rename_errno = errno;
    error = std::strerror(rename_errno);
  }
  if (!error.empty()) {
    std::remove(temp.c_str());
    std::remove((temp + "-journal").c_str());
    const int err = rename_errno ? rename_errno : sys_errno;
    throw IoError(store_failure(
        path, err, code == SQLITE_FULL,
        "cannot create " + path + " (" + error + "); check the output directory " + dir_of(path)));
  }
  const int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

ResultsStore::ResultsStore(const std::string& path, StoreAccess access)
    : path_(path), writer_(access == StoreAccess::kWrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (writer_) {
    if (::access(dir_of(path).c_str(), W_OK | X_OK) != 0) {
      const int err = errno;
      if (errno_kind(err) == ErrnoKind::kNotWritable)
        throw IoError(store_dir_not_writable(dir_of(path), err));
    }
    // Absent, or empty (0 bytes: left by an attnlab from before stores were created whole).
    const bool exists = fs::exists(path, ec);
    if (!exists || (fs::file_size(path, ec) == 0 && !ec && !fs::exists(path + "-wal", ec))) {
      if (exists) fs::remove(path, ec);
      store_create(path);
    } else {
      // A store the runner cannot write (its mode, an immutable flag, a read-only file in a
      // writable directory) is named as such, not as an unusable store.
      const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd >= 0) {
        ::close(fd);
      } else if (errno_kind(errno) == ErrnoKind::kNotWritable) {
        throw IoError(path + " cannot be written (" + std::strerror(errno) +
                      "); make it writable (chmod u+w " + path +
                      ") or use another output directory (" + front_option(FrontOption::kOut) +
                      ")");
      }
    }
  }
  const int flags = writer_ ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot allocate";
    sqlite3_close(db_);
    db_ = nullptr;
    throw IoError(path + ": cannot open the results store (" + msg + ")");
  }
  sqlite3_busy_timeout(db_, 30000);
  try {
    if (writer_) {
      // Another program's SQLite file of this name is not taken over: a store of any release
      // has the meta table; a file with tables but no meta is someone else's.
      bool foreign = false;
      {
        Statement s(db_,
                    "SELECT count(*), sum(name = 'meta') FROM sqlite_master WHERE "
                    "type = 'table'",
                    path_);
        foreign = s.step() && s.col_int(0) > 0 && s.col_int(1) == 0;
      }  // (finalized: no statement may be open when the journal mode changes)
      if (foreign)
        throw IoError(
            "an SQLite database of another program (tables but no attnlab meta "
            "table); it was left as it is");
      exec("PRAGMA journal_mode=WAL");
      exec("PRAGMA synchronous=NORMAL");
      for (const char* sql : kSchema) exec(sql);  // stores of earlier versions
    } else {
      Statement s(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                       "('meta', 'runs', 'params', 'metrics', 'series')", path_);
      if (!s.step() || s.col_int(0) != 5) throw IoError(path + ": tables missing");
    }
  } catch (const IoError& e) {
    const int err = sqlite3_system_errno(db_), code = sqlite3_errcode(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    throw IoError(store_failure(path, err, code == SQLITE_FULL,
                                path + ": not a usable attnlab results store (" + e.what() +
                                    "); use another output directory (" +
                                    front_option(FrontOption::kOut) + ")"));
  }
}

ResultsStore::~ResultsStore() {
  if (!db_) return;
  if (writer_) {
    // Leave one self-contained file: fold the WAL in and return to a rollback journal. While
    // another connection has the store open this does not wait and the store stays in WAL
    // mode (the last connection to close then folds the WAL in).
    sqlite3_busy_timeout(db_, 0);
    exec_on(db_, "PRAGMA wal_checkpoint(TRUNCATE)");
    exec_on(db_, "PRAGMA journal_mode=DELETE");
  }
  sqlite3_close(db_);
}

void ResultsStore::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    sqlite_fail(db_, path_, msg);
  }
}

std::string ResultsStore::meta(const std::string& key) const {
  Statement s(db_, "SELECT value FROM meta WHERE key = ?", path_);
  s.text(1, key);
  return s.step() ? s.col_text(0) : std::string();
}

void ResultsStore::set_meta(const std::string& key, const std::string& value) {
  Statement s(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", path_);
  s.text(1, key).text(2, value).run();
}

std::set<std::string> ResultsStore::finished_ids(bool include_failed) const {
  Statement s(db_, include_failed ? "SELECT run_id FROM runs"
                                  : "SELECT run_id FROM runs WHERE status = 'ok'", path_);
  std::set<std::string> ids;
  while (s.step()) ids.insert(s.col_text(0));
  return ids;
}

void ResultsStore::insert(const RunPoint& point, const RunOutcome& outcome) {
  StoredRun r;
  r.run_id = point.run_id;
  r.point = point.index;
  r.seed = point.seed;
  r.status = outcome.ok ? "ok" : "failed";
  r.error = outcome.error;
  r.config_json = point.config_json;
  auto add_section = [&](const std::string& section, const Params& params) {
    for (size_t i = 0; i < params.schema().size(); ++i)
      r.params.emplace_back(section + "." + param_stored_name(params.schema()[i]),
                            param_value_text(params.values()[i]));
  };
  r.params.emplace_back("task.name", point.config.task);
  add_section("task", point.config.task_params);
  r.params.emplace_back("model.name", point.config.model);
  add_section("model", point.config.model_params);
  add_section("train", point.config.train_params);
  add_section("eval", point.config.eval_params);
  for (const auto& [k, v] : point.swept) r.swept.push_back(k);
  r.metrics = outcome.metrics;
  r.series = outcome.series;
  r.wall_seconds = outcome.wall_seconds;
  r.peak_rss_bytes = outcome.peak_rss_bytes;
  r.version = kVersion;
  r.commit = kGitCommit;
  r.finished_at = now_utc();
  insert(r);
}

void ResultsStore::insert(const StoredRun& r) {
  exec("BEGIN IMMEDIATE");
  try {
    for (const char* table : {"runs", "params", "metrics", "series"}) {
      Statement del(db_, std::string("DELETE FROM ") + table + " WHERE run_id = ?", path_);
      del.text(1, r.run_id).run();
    }
    Statement run(db_,
                  "INSERT INTO runs(run_id, point, seed, status, error, config_json, wall_seconds, "
                  "peak_rss_bytes, attnlab_version, git_commit, finished_at) "
                  "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  path_);
    run.text(1, r.run_id).integer(2, r.point).integer(3, static_cast<int64_t>(r.seed));
    run.text(4, r.status).text(5, r.error).text(6, r.config_json).real(7, r.wall_seconds);
    run.integer(8, r.peak_rss_bytes).text(9, r.version).text(10, r.commit).text(11, r.finished_at);
    run.run();
    Statement param(db_, "INSERT INTO params(run_id, key, value, swept) VALUES(?, ?, ?, ?)", path_);
    for (const auto& [k, v] : r.params) {
      bool swept = false;
      for (const auto& s : r.swept) swept = swept || s == k;
      param.text(1, r.run_id).text(2, k).text(3, v).integer(4, swept ? 1 : 0).run();
    }
    Statement metric(db_, "INSERT OR REPLACE INTO metrics(run_id, name, value) VALUES(?, ?, ?)",
                     path_);
    for (const auto& [k, v] : r.metrics) metric.text(1, r.run_id).text(2, k).real(3, v).run();
    Statement series(db_, "INSERT INTO series(run_id, name, step, value) VALUES(?, ?, ?, ?)",
                     path_);
    for (const auto& p : r.series)
      series.text(1, r.run_id).text(2, p.series).integer(3, p.step).real(4, p.value).run();
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<StoredRun> ResultsStore::load_runs() const {
  std::vector<StoredRun> runs;
  std::map<std::string, size_t> index;
  {
    Statement s(db_,
                "SELECT run_id, point, seed, status, error, config_json, wall_seconds, "
                "peak_rss_bytes, attnlab_version, git_commit, finished_at FROM runs ORDER BY "
                "point, seed, run_id",
                path_);
    while (s.step()) {
      StoredRun r;
      r.run_id = s.col_text(0);
      r.point = s.col_int(1);
      r.seed = static_cast<uint64_t>(s.col_int(2));
      r.status = s.col_text(3);
      r.error = s.col_text(4);
      r.config_json = s.col_text(5);
      r.wall_seconds = s.col_real(6);
      r.peak_rss_bytes = s.col_int(7);
      r.version = s.col_text(8);
      r.commit = s.col_text(9);
      r.finished_at = s.col_text(10);
      index[r.run_id] = runs.size();
      runs.push_back(std::move(r));
    }
  }
  Statement p(db_, "SELECT run_id, key, value, swept FROM params ORDER BY rowid", path_);
  while (p.step()) {
    auto it = index.find(p.col_text(0));
    if (it == index.end()) continue;
    runs[it->second].params.emplace_back(p.col_text(1), p.col_text(2));
    if (p.col_int(3)) runs[it->second].swept.push_back(p.col_text(1));
  }
  Statement m(db_, "SELECT run_id, name, value FROM metrics ORDER BY rowid", path_);
  while (m.step()) {
    auto it = index.find(m.col_text(0));
    if (it != index.end()) runs[it->second].metrics.emplace_back(m.col_text(1), m.col_real(2));
  }
  Statement ser(db_, "SELECT run_id, name, step, value FROM series ORDER BY rowid", path_);
  while (ser.step()) {
    auto it = index.find(ser.col_text(0));
    if (it != index.end())
      runs[it->second].series.push_back({ser.col_text(1), ser.col_int(2), ser.col_real(3)});
  }
  return runs;
}

}  // namespace attn
