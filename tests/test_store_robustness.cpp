// The results directory survives anything: a finished store is one plain SQLite file that
// readers open from a read-only directory; a read-only directory is named as such; the
// temp files of killed writers are removed by the next runner; a store whose creation
// crashed is no obstacle to the next run.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "cli_helpers.h"
#include "experiment/experiment_dir.h"
#include "experiment/store.h"
#include "io/atomic_file.h"
#include "store_test_helpers.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

class StoreRobustness : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_store_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    spec_ = path("spec.toml");
    test::file_write(spec_, test::small_spec(3));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  test::CliResult run(const std::string& out) {
    return test::cli_run("run " + spec_ + " --out " + out + " -q");
  }

  fs::path dir_;
  std::string spec_;
};

// Number of lines of text (a trailing newline ends the last one).
int line_count(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

// Runs in the read-only view: the store read through the SQLite library with a read-only
// URI, as sqlite3 and pandas do. "" when it holds `runs` runs.
std::string sqlite_reads(const std::string& store, int runs) {
  sqlite3* db = nullptr;
  const std::string uri = "file:" + store + "?mode=ro";
  std::string failure;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    failure = "open: " + std::string(sqlite3_errmsg(db));
  } else {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &s, nullptr) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW)
      failure = "query: " + std::string(sqlite3_errmsg(db));
    else if (sqlite3_column_int(s, 0) != runs)
      failure = "runs: " + std::to_string(sqlite3_column_int(s, 0));
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return failure;
}

TEST_F(StoreRobustness, FinishedStoreIsOnePlainFileReadableFromReadOnlyDir) {
  const std::string out = path("o");
  const auto r = run(out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(out + "/results.sqlite-wal"));
  EXPECT_FALSE(fs::exists(out + "/results.sqlite-shm"));
  // The file format's read/write version bytes (offsets 18, 19): 1 = rollback journal, 2 = WAL.
  const std::string header = test::file_read(out + "/results.sqlite").substr(0, 20);
  ASSERT_EQ(header.size(), 20u);
  EXPECT_EQ(header[18], 1);
  EXPECT_EQ(header[19], 1);
  // A resumed run goes back to WAL while it runs and leaves a plain file again.
  ASSERT_EQ(run(out).exit_code, 0);
  EXPECT_EQ(test::file_read(out + "/results.sqlite")[18], 1);
  const auto view =
      test::in_read_only_view(out, [&] { return sqlite_reads(out + "/results.sqlite", 6); });
  if (!view.available) GTEST_SKIP() << "no read-only bind mount here (unshare -m)";
  EXPECT_EQ(view.failure, "");
}

TEST_F(StoreRobustness, ReadOnlyDirectoryIsNamedAndStillRead) {
  const std::string out = path("o");
  ASSERT_EQ(run(out).exit_code, 0);
  const std::string before = test::file_read(out + "/results.sqlite");
  const auto view = test::in_read_only_view(out, [&]() -> std::string {
    const auto r = run(out);
    if (r.exit_code != 2) return "run: exit code " + std::to_string(r.exit_code) + ": " + r.out;
    if (line_count(r.out) != 1 || r.out.find(out + " is not writable") == std::string::npos ||
        r.out.find("not a usable") != std::string::npos)
      return "run: message: " + r.out;
    // The library's readers (Python attnlab.load_runs, reproduce's claims) read it as is.
    try {
      const size_t n = ResultsStore(out + "/results.sqlite", StoreAccess::kRead).load_runs().size();
      if (n != 6) return "load_runs: " + std::to_string(n) + " runs";
    } catch (const std::exception& e) {
      return std::string("load_runs: ") + e.what();
    }
    // reproduce --report-only counts and reads the stored runs, writing nothing there.
    try {
      RunRequest rq;
      rq.spec_path = spec_;
      rq.out_dir = out;
      rq.run_nothing = true;
      rq.progress = false;
      const RunSummary s = experiment_run(rq);
      if (s.planned != 6 || s.skipped != 6)
        return "report-only: " + std::to_string(s.skipped) + " stored";
    } catch (const std::exception& e) {
      return std::string("report-only: ") + e.what();
    }
    // export has to write results.csv: one line saying so.
    const auto e = test::cli_run("export " + out);
    if (e.exit_code != 2 || line_count(e.out) != 1 ||
        e.out.find("not writable") == std::string::npos)
      return "export: " + e.out;
    return sqlite_reads(out + "/results.sqlite", 6);
  });
  if (!view.available) GTEST_SKIP() << "no read-only bind mount here (unshare -m)";
  EXPECT_EQ(view.failure, "");
  EXPECT_EQ(test::file_read(out + "/results.sqlite"), before);
}

// A store file that cannot be written in a writable directory (mode 0444) is named as such:
// one line saying how to make it writable, not "not a usable attnlab results store" with
// SQLite's words. Modes do not stop root, so as root the runner runs as the unprivileged user
// 65534 (setpriv, util-linux), with the directory and its lock file open to it.
TEST_F(StoreRobustness, AStoreFileThatCannotBeWrittenIsNamedWithTheFix) {
  const std::string out = path("o"), store = out + "/results.sqlite";
  ASSERT_EQ(run(out).exit_code, 0);
  const std::string before = test::file_read(store);
  fs::permissions(store, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  test::file_write(spec_, test::small_spec(4));  // more runs to do
  std::string as_user;
  if (geteuid() == 0) {
    fs::permissions(out, fs::perms::all);
    fs::permissions(out + "/.attnlab.lock", fs::perms::all & ~fs::perms::owner_exec &
                                                ~fs::perms::group_exec & ~fs::perms::others_exec);
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  const auto r = test::shell(as_user + test_cli_path() + " run " + spec_ + " --out " + out + " -q");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(line_count(r.out), 1) << r.out;
  EXPECT_NE(r.out.find(store + " cannot be written ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("make it writable (chmod u+w " + store + ")"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("not a usable"), std::string::npos) << r.out;
  EXPECT_EQ(test::file_read(store), before);
}

// A store with damaged pages (bytes overwritten on disk) is named as damaged, with the advice,
// by run and export alike, instead of SQLite's "database disk image is malformed" alone.
TEST_F(StoreRobustness, ADamagedStoreIsNamedAsSuchWithTheAdvice) {
  const std::string out = path("o"), store = out + "/results.sqlite";
  ASSERT_EQ(run(out).exit_code, 0);
  {
    std::string bytes = test::file_read(store);
    ASSERT_GT(bytes.size(), 4096u * 4);
    for (size_t page = 1; page * 4096 + 72 < bytes.size(); ++page)
      std::fill_n(bytes.begin() + page * 4096 + 8, 64, '\x13');
    test::file_write(store, bytes);
  }
  for (const std::string& args : {"run " + spec_ + " --out " + out + " -q", "export " + out}) {
    const auto r = test::cli_run(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_EQ(line_count(r.out), 1) << r.out;
    EXPECT_NE(r.out.find(store + " is damaged (SQLite: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("move it away and run again"), std::string::npos) << r.out;
  }
}

TEST_F(StoreRobustness, RunnerRemovesTempFilesOfDeadProcesses) {
  const std::string out = path("o");
  ASSERT_EQ(run(out).exit_code, 0);
  const long dead = test::dead_pid();
  const std::string d = std::to_string(dead), alive = std::to_string(getpid());
  const std::vector<std::string> leftovers = {
      "results.csv.tmp." + d, "series.csv.tmp." + d, "spec.json.tmp." + d,
      "results.sqlite.tmp." + d, "results.sqlite.tmp." + d + "-journal",
      // a plot killed while it wrote a figure or its numbers (issue #34, item 7)
      "figures/plot1.svg.tmp." + d, "figures/plot1.png.tmp." + d,
      "figures/data/plot1.json.tmp." + d};
  const std::vector<std::string> kept = {
      "results.csv.tmp." + alive,  // a live export's
      "results.csv.tmp.x1",       "results.csv.tmp." + d + "x",
      "notes.txt.tmp." + d,       "figures/plot1.svg.tmp." + alive,
      "figures/.tmp." + d};
  fs::create_directories(out + "/figures/data");
  for (const auto& name : leftovers) test::file_write(out + "/" + name, "partial");
  for (const auto& name : kept) test::file_write(out + "/" + name, "keep");
  const auto r = run(out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const auto& name : leftovers) EXPECT_FALSE(fs::exists(out + "/" + name)) << name;
  for (const auto& name : kept) EXPECT_TRUE(fs::exists(out + "/" + name)) << name;
}

// Another program's SQLite file named results.sqlite is refused and left as it is: no attnlab
// table is added to it (issue #34, item 7: the previous release took it over).
TEST_F(StoreRobustness, AnotherProgramsSqliteFileIsNotTakenOver) {
  const std::string out = path("foreign");
  fs::create_directories(out);
  const std::string file = out + "/results.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('mine')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string before = test::file_read(file);
  const auto r = run(out);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(file + ": not a usable attnlab results store (an SQLite database of "
                              "another program (tables but no attnlab meta table); it was left "
                              "as it is)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(test::file_read(file), before);
  EXPECT_FALSE(fs::exists(file + "-wal"));
}

TEST_F(StoreRobustness, RemoveStaleTempsKeepsLiveAndForeignFiles) {
  const std::string target = path("results.csv");
  const std::string d = std::to_string(test::dead_pid());
  test::file_write(atomic_file_temp_path(target, std::stol(d)), "x");
  test::file_write(target + ".tmp." + d + "-journal", "x");
  test::file_write(atomic_file_temp_path(target, getpid()), "x");
  test::file_write(target + ".tmp.", "x");
  test::file_write(target + ".tmp.99999999999999", "x");
  EXPECT_EQ(atomic_file_remove_stale_temps(target), 2);
  EXPECT_FALSE(fs::exists(target + ".tmp." + d));
  EXPECT_TRUE(fs::exists(atomic_file_temp_path(target, getpid())));
  EXPECT_TRUE(fs::exists(target + ".tmp."));
  EXPECT_TRUE(fs::exists(target + ".tmp.99999999999999"));
  EXPECT_EQ(atomic_file_remove_stale_temps(path("missing/results.csv")), 0);
}

TEST_F(StoreRobustness, EmptyStoreOfACrashedCreationIsTreatedAsNew) {
  const std::string out = path("o");
  fs::create_directories(out);
  test::file_write(out + "/results.sqlite", "");
  const auto r = run(out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("6 ran (6 ok"), std::string::npos) << r.out;
}

// A full disk while the store is created: the run fails with one line about space (not
// "not a usable store"), and what it leaves does not stop the same command once there is
// space. In a private mount namespace: a 4 KiB tmpfs, then the same one remounted larger.
TEST_F(StoreRobustness, FullDiskAtCreationNamesSpaceAndLeavesNoObstacle) {
  if (test::shell("unshare -m true").exit_code != 0) GTEST_SKIP() << "no unshare -m here";
  const std::string mnt = path("small"), out = path("small") + "/o";
  fs::create_directories(mnt);
  const std::string cmd = std::string(test_cli_path()) + " run " + spec_ + " --out " + out + " -q";
  for (const char* size : {"4k", "8k", "16k", "32k"}) {
    const auto r = test::shell(
        "unshare -m sh -c 'mount --make-rprivate / && mount -t tmpfs -o size=" + std::string(size) +
        " tmpfs " + mnt + " && { " + cmd + "; echo rc=$?; mount -o remount,size=4m " + mnt +
        " && " + cmd + "; echo rc=$?; }'");
    SCOPED_TRACE(size);
    const size_t first = r.out.find("rc=");
    ASSERT_NE(first, std::string::npos) << r.out;
    const std::string failed = r.out.substr(0, first);
    EXPECT_EQ(r.out.substr(first, 5), "rc=2\n") << r.out;
    EXPECT_EQ(line_count(failed), 1) << r.out;
    EXPECT_NE(failed.find("no space left"), std::string::npos) << r.out;
    EXPECT_EQ(failed.find("not a usable"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("6 ran (6 ok", first), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rc=0", first), std::string::npos) << r.out;
  }
}

// A disk that fills in the middle of a sweep (a 256 KiB tmpfs, 300 small runs): one line about
// space with the advice to free some and run the same command again (the previous release
// printed SQLite's "database or disk is full"); the same command, with space, keeps the runs
// stored before and does the others.
TEST_F(StoreRobustness, FullDiskMidSweepSaysFreeSpaceThenRunTheSameCommand) {
  if (test::shell("unshare -m true").exit_code != 0) GTEST_SKIP() << "no unshare -m here";
  test::file_write(spec_,
                   "[experiment]\nname = \"fill\"\nseeds = 300\n[task]\nname = \"qsa\"\nN = 4\n"
                   "q = 1\n[model]\nname = \"mean\"\n[train]\nn = 8\n[eval]\nn = 8\n");
  const std::string mnt = path("small"), out = path("small") + "/o";
  fs::create_directories(mnt);
  const std::string cmd = std::string(test_cli_path()) + " run " + spec_ + " --out " + out + " -q";
  const auto r = test::shell(
      "unshare -m sh -c 'mount --make-rprivate / && mount -t tmpfs -o "
      "size=256k tmpfs " +
      mnt + " && { " + cmd + "; echo rc=$?; " + "mount -o remount,size=16m " + mnt + " && " + cmd +
      "; echo rc=$?; }'");
  const size_t first = r.out.find("rc=");
  ASSERT_NE(first, std::string::npos) << r.out;
  const std::string failed = r.out.substr(0, first);
  EXPECT_EQ(r.out.substr(first, 5), "rc=2\n") << r.out;
  EXPECT_EQ(line_count(failed), 1) << r.out;
  EXPECT_NE(failed.find("no space left on device; free space on the filesystem of " + out),
            std::string::npos)
      << r.out;
  EXPECT_NE(failed.find("then run the same command again"), std::string::npos) << r.out;
  // "fill: 300 runs: R ran (R ok, 0 failed), S already done; ...": S runs were stored before.
  const size_t done = r.out.find(" already done", first);
  ASSERT_NE(done, std::string::npos) << r.out;
  const size_t comma = r.out.rfind(", ", done);
  const long stored = std::stol(r.out.substr(comma + 2, done - comma - 2));
  EXPECT_GT(stored, 0) << "the disk filled before any run was stored: not mid-sweep\n" << r.out;
  EXPECT_NE(r.out.find(std::to_string(300 - stored) + " ran (" + std::to_string(300 - stored) +
                       " ok, 0 failed), " + std::to_string(stored) + " already done"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rc=0", first + 5), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attn
