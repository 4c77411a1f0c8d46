// The single-process parts of MPI support (label "unit"; the multi-rank checks are in
// tests/mpi/): the block partition, run points as messages, train.distributed as an
// execution setting (same run ids, same fingerprint), a one-rank distributed fit, and
// `--mpi` in a build with or without MPI.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cli_helpers.h"
#include "core/error.h"
#include "experiment/plan.h"
#include "experiment/point_codec.h"
#include "experiment/run_distributed.h"
#include "experiment/spec.h"
#include "models/model_registry.h"
#include "mpi/comm.h"
#include "mpi/mpi_session.h"
#include "tasks/task.h"
#include "train/ridge.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

const char* kSpec = R"(
[experiment]
name = "pieces"
seeds = 2
[task]
name = "rf_target"
d = 4
N = 4
[model]
name = "rfa"
heads = 4
[train]
n = 120
lambdas = [1e-4, 1e-2]
[eval]
n = 50
[sweep]
"model.heads" = [4, 8]
)";

class MpiPieces : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_mpi_pieces_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    spec_ = (dir_ / "spec.toml").string();
    test::file_write(spec_, kSpec);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string spec_;
};

TEST(CommBlock, PartitionsContiguouslyWithinOne) {
  for (int64_t n : {0, 1, 5, 23, 1000})
    for (int size : {1, 2, 3, 7}) {
      int64_t expect = 0, smallest = n, largest = 0;
      for (int r = 0; r < size; ++r) {
        int64_t lo, hi;
        comm_block(n, r, size, &lo, &hi);
        EXPECT_EQ(lo, expect);
        expect = hi;
        smallest = std::min(smallest, hi - lo);
        largest = std::max(largest, hi - lo);
      }
      EXPECT_EQ(expect, n);
      EXPECT_LE(largest - smallest, 1);
    }
}

TEST(CommSelf, CollectivesAreTheIdentityAndErrorsAreThrown) {
  const Comm& self = comm_self();
  EXPECT_EQ(self.rank(), 0);
  EXPECT_EQ(self.size(), 1);
  double v[3] = {1, 2, 3}, out[3] = {};
  self.sum_all(v, 3);
  self.gather(v, 3, out);
  EXPECT_EQ(out[2], 3.0);
  EXPECT_NO_THROW(self.agree(""));
  EXPECT_THROW(self.agree("boom"), UserError);
  EXPECT_THROW(comm_phase(self, [] { throw std::bad_alloc(); }), UserError);
}

TEST_F(MpiPieces, RunPointsRoundTripAsMessages) {
  const auto points = plan_make(spec_load(spec_, {"train.distributed=true"}, false));
  for (const RunPoint& p : points) {
    const RunPoint q = run_point_decode(run_point_encode(p));
    EXPECT_EQ(q.run_id, p.run_id);
    EXPECT_EQ(q.config_json, p.config_json);
    EXPECT_EQ(q.index, p.index);
    EXPECT_EQ(q.seed, p.seed);
    EXPECT_TRUE(run_point_is_distributed(q));
  }
  // A rank that resolves the configuration differently refuses the point.
  RunPoint other = points[0];
  other.run_id = points[1].run_id;
  EXPECT_THROW(run_point_decode(run_point_encode(other)), UserError);
}

TEST_F(MpiPieces, DistributedIsNotPartOfRunIdsOrTheFingerprint) {
  const Spec plain = spec_load(spec_, {}, false),
             dist = spec_load(spec_, {"train.distributed=true"}, false);
  const auto a = plan_make(plain), b = plan_make(dist);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].run_id, b[k].run_id);
    EXPECT_FALSE(run_point_is_distributed(a[k]));
    EXPECT_TRUE(run_point_is_distributed(b[k]));
  }
  EXPECT_EQ(spec_runs_json(plain), spec_runs_json(dist));
  EXPECT_EQ(a[0].config_json.find("distributed"), std::string::npos);
}

// On one rank the distributed fit is the ordinary fit; run_point_execute_distributed gives
// the metrics of run_point_execute.
TEST_F(MpiPieces, OneRankDistributedRunEqualsTheLocalRun) {
  const auto points = plan_make(spec_load(spec_, {"train.distributed=true"}, false));
  const RunOutcome local = run_point_execute(points[0]);
  const RunOutcome joint = run_point_execute_distributed(points[0], comm_self());
  ASSERT_TRUE(local.ok) << local.error;
  ASSERT_TRUE(joint.ok) << joint.error;
  ASSERT_EQ(local.metrics.size(), joint.metrics.size());
  for (size_t k = 0; k < local.metrics.size(); ++k) {
    EXPECT_EQ(local.metrics[k].first, joint.metrics[k].first);
    if (local.metrics[k].first != "fit_seconds") {
      EXPECT_EQ(local.metrics[k].second, joint.metrics[k].second) << local.metrics[k].first;
    }
  }
}

// Without mpirun: a build with MPI runs as one rank; a build without says so in one line.
TEST_F(MpiPieces, MpiFlagWithoutMpirun) {
  const std::string out = (dir_ / "out").string();
  const auto r = test::cli_run("run " + spec_ + " --out " + out + " --mpi -q");
  if (mpi_built()) {
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("4 runs on 1 MPI rank: 4 ran (4 ok, 0 failed)"), std::string::npos)
        << r.out;
  } else {
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_EQ(r.out, "attnlab: error: --mpi: this attnlab was built without MPI; install "
                     "libopenmpi-dev and openmpi-bin (scripts/install-deps) and rebuild, or run "
                     "without --mpi\n");
    EXPECT_FALSE(fs::exists(out));
  }
}

}  // namespace
}  // namespace attn
