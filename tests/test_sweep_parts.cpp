// Several sweeps in one pool of workers (runner.h sweep_execute_parts, what `attnlab
// reproduce` runs its experiments with): each part's runs go to its own store, on_done comes
// once per part after its last run is stored, a worker left free while a part's last run goes
// on starts the next part's runs, and an on_done that throws stops new runs and is rethrown.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "experiment/runner.h"
#include "experiment/store.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

// One slow run: an MLP trained for many steps.
const char* kSlow = R"(
[experiment]
name = "slow"
[task]
name = "qsa"
N = 6
q = 2
d_out = 2
[model]
name = "mlp"
width = 64
[train]
steps = 4000
[eval]
n = 200
)";

// Four quick runs: closed-form linear fits.
const char* kQuick = R"(
[experiment]
name = "quick"
seeds = 4
[task]
name = "qsa"
N = 6
q = 2
d_out = 2
[model]
name = "linear"
[train]
n = 100
[eval]
n = 200
)";

class SweepParts : public test::SpecFileTest {
 protected:
  // Runs the slow part then the quick part with `jobs` workers. Returns how many of the quick
  // part's runs were stored when the slow part's on_done ran, and checks the rest.
  int64_t quick_runs_stored_when_slow_ends(int jobs) {
    const std::vector<RunPoint> slow = plan(kSlow), quick = plan(kQuick);
    EXPECT_EQ(slow.size(), 1u);
    EXPECT_EQ(quick.size(), 4u);
    const std::string tag = std::to_string(jobs);
    ResultsStore slow_store(path("slow" + tag + ".sqlite")),
        quick_store(path("quick" + tag + ".sqlite"));
    std::vector<std::string> done_order;
    int64_t stored_then = -1;
    std::vector<SweepPart> parts(3);
    parts[0].points = {&slow[0]};
    parts[0].store = &slow_store;
    parts[0].on_done = [&](const SweepSummary& s) {
      EXPECT_EQ(s.ok, 1);
      done_order.push_back("slow");
      stored_then = static_cast<int64_t>(quick_store.load_runs().size());
    };
    // An empty part between them.
    parts[1].on_done = [&](const SweepSummary& s) {
      EXPECT_EQ(s.ok + s.failed, 0);
      done_order.push_back("empty");
    };
    for (const auto& p : quick) parts[2].points.push_back(&p);
    parts[2].store = &quick_store;
    parts[2].on_done = [&](const SweepSummary& s) {
      EXPECT_EQ(s.ok, 4);
      done_order.push_back("quick");
    };
    SweepOptions options;
    options.jobs = jobs;
    options.progress = false;
    const std::vector<SweepSummary> summaries = sweep_execute_parts(parts, options);
    // The empty part at once; then each part when its runs are stored: with two workers the
    // quick part ends first.
    EXPECT_EQ(done_order, jobs == 1 ? (std::vector<std::string>{"empty", "slow", "quick"})
                                    : (std::vector<std::string>{"empty", "quick", "slow"}));
    EXPECT_EQ(summaries.size(), 3u);
    EXPECT_EQ(summaries[0].ok, 1);
    EXPECT_EQ(summaries[2].ok, 4);
    // Each part's runs in its own store only.
    EXPECT_EQ(slow_store.load_runs().size(), 1u);
    EXPECT_EQ(quick_store.load_runs().size(), 4u);
    return stored_then;
  }
};

TEST_F(SweepParts, AFailingOnDoneStopsNewRunsAndIsRethrownAfterTheRunningOnesAreStored) {
  const std::vector<RunPoint> slow = plan(kSlow), quick = plan(kQuick);
  ResultsStore quick_store(path("quick.sqlite")), slow_store(path("slow.sqlite")),
      last_store(path("last.sqlite"));
  std::vector<SweepPart> parts(3);
  for (const auto& p : quick) parts[0].points.push_back(&p);
  parts[0].store = &quick_store;
  parts[0].on_done = [](const SweepSummary&) { throw IoError("disk full"); };
  parts[1].points = {&slow[0]};  // a part without on_done
  parts[1].store = &slow_store;
  for (const auto& p : quick) parts[2].points.push_back(&p);
  parts[2].store = &last_store;
  SweepOptions options;
  options.jobs = 1;
  options.progress = false;
  EXPECT_THROW(sweep_execute_parts(parts, options), IoError);
  EXPECT_EQ(quick_store.load_runs().size(), 4u);
  // The freed worker had started the slow run before the first part's on_done failed: it
  // finished and was stored. Nothing started after the failure.
  EXPECT_EQ(slow_store.load_runs().size(), 1u);
  EXPECT_EQ(last_store.load_runs().size(), 0u);
}

TEST_F(SweepParts, OneWorkerRunsThePartsOneAfterAnother) {
  EXPECT_EQ(quick_runs_stored_when_slow_ends(1), 0);
}

TEST_F(SweepParts, AFreeWorkerRunsTheNextPartWhileAPartEnds) {
  // The slow run takes one worker; the other does the four quick runs meanwhile.
  EXPECT_EQ(quick_runs_stored_when_slow_ends(2), 4);
}

}  // namespace
}  // namespace attn
