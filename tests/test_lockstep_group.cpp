// Lockstep groups (experiment/lockstep_group.h) and what they are made of: the turnstile's
// turn order (core/turnstile.h), one draw of each fresh batch for a whole group
// (tasks/shared_batches.h), and a grouped sweep storing what the run-by-run sweep stores.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

#include "core/turnstile.h"
#include "experiment/lockstep_group.h"
#include "experiment/run_groups.h"
#include "grouped_sweep_helpers.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

TEST(Turnstile, PartiesTakeTurnsInRingOrderAndALeaverIsSkipped) {
  Turnstile gate(3);
  std::vector<int> order;  // only the party holding the turn appends
  auto party = [&](int k, int rounds) {
    gate.wait(k);
    for (int r = 0; r < rounds; ++r) {
      order.push_back(k);
      if (r + 1 < rounds) gate.pass_and_wait(k);
    }
    gate.leave(k);
  };
  std::vector<std::thread> threads;
  const int rounds[3] = {4, 2, 3};
  for (int k = 0; k < 3; ++k) threads.emplace_back(party, k, rounds[k]);
  for (auto& t : threads) t.join();
  // Party 1 leaves after its second turn, party 2 after its third.
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 2, 0}));
}

// Three gradient-trained models on one task stream, two seeds: two lockstep groups of three.
// patience with a min_delta stops some runs before others, so runs leave a group at
// different steps.
const char* kSpec = R"(
[experiment]
name = "lockstep"
seeds = 2
[task]
name = "qsa"
N = 4
q = 1
d_out = 2
[model]
name = "attention"
[model.attention]
m = 4
[model.mlp]
width = 16
[model.lstm]
hidden = 8
[train]
n = 0
steps = 60
batch = 16
lr = 1e-2
eval_every = 5
patience = 2
min_delta = 0.002
val_n = 64
[eval]
n = 50
[sweep]
"model.name" = ["attention", "mlp", "lstm"]
)";

class LockstepGroups : public test::SpecFileTest {};

TEST_F(LockstepGroups, FreshSampleRunsOfOneStreamFormAGroupWhateverTheirModel) {
  const std::vector<RunPoint> points = plan(kSpec);
  ASSERT_EQ(points.size(), 6u);
  std::vector<const RunPoint*> all;
  for (const auto& p : points) all.push_back(&p);
  const auto groups = run_groups_make(all);
  ASSERT_EQ(groups.size(), 2u);  // one per seed
  for (const auto& g : groups) {
    ASSERT_EQ(g.size(), 3u);
    EXPECT_TRUE(run_group_lockstep(*g[0]));
    for (const RunPoint* p : g) EXPECT_EQ(p->seed, g[0]->seed);
  }
  // Another [train] setting, a fixed training set or a learning-rate selection: not together.
  const std::vector<RunPoint> apart = plan(std::string(kSpec) + R"(
[[sweep.zip]]
"train.n" = [0, 0, 200]
"train.lrs" = [[], [1e-3, 1e-2], []]
)");
  std::vector<const RunPoint*> some;
  for (const auto& p : apart)
    if (p.seed == 0) some.push_back(&p);
  ASSERT_EQ(some.size(), 9u);
  size_t grouped = 0;
  for (const auto& g : run_groups_make(some)) grouped += g.size() > 1 ? g.size() : 0;
  EXPECT_EQ(grouped, 3u);  // only the three train.n = 0, single-rate points
}

// Metrics and series of two outcomes equal, bit for bit, but the timings.
void expect_same_outcome(const RunOutcome& a, const RunOutcome& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.ok, b.ok) << a.error << b.error;
  ASSERT_EQ(a.metrics.size(), b.metrics.size()) << a.run_id;
  for (size_t k = 0; k < a.metrics.size(); ++k) {
    ASSERT_EQ(a.metrics[k].first, b.metrics[k].first);
    if (a.metrics[k].first == "fit_seconds") continue;
    EXPECT_EQ(a.metrics[k].second, b.metrics[k].second) << a.run_id << " " << a.metrics[k].first;
  }
  ASSERT_EQ(a.series.size(), b.series.size()) << a.run_id;
  for (size_t k = 0; k < a.series.size(); ++k) {
    EXPECT_EQ(a.series[k].series, b.series[k].series);
    EXPECT_EQ(a.series[k].step, b.series[k].step);
    EXPECT_EQ(a.series[k].value, b.series[k].value) << a.run_id << " " << a.series[k].series;
  }
}

double metric_of(const RunOutcome& o, const std::string& name) {
  for (const auto& [k, v] : o.metrics)
    if (k == name) return v;
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

TEST_F(LockstepGroups, EachStepsBatchIsDrawnOnceAndEveryRunComputesWhatItDoesAlone) {
  const std::vector<RunPoint> points = plan(kSpec);
  std::vector<RunPoint> group;
  for (const auto& p : points)
    if (p.seed == 1) group.push_back(p);
  ASSERT_EQ(group.size(), 3u);
  std::vector<RunOutcome> together;
  std::vector<size_t> order;
  const LockstepStats stats = lockstep_group_run(group, [&](size_t k, RunOutcome&& o) {
    order.push_back(k);
    together.push_back(std::move(o));
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2}));
  int64_t most = 0, total = 0;
  std::set<double> stopped;
  for (size_t k = 0; k < group.size(); ++k) {
    const RunOutcome alone = run_point_execute(group[k]);
    ASSERT_TRUE(alone.ok) << alone.error;
    expect_same_outcome(together[k], alone);
    const auto steps = static_cast<int64_t>(metric_of(alone, "steps_run"));
    most = std::max(most, steps);
    total += steps;
    stopped.insert(metric_of(alone, "steps_run"));
  }
  // Each step's batch drawn once, served to every run still training at that step.
  EXPECT_EQ(stats.batches_drawn, most);
  EXPECT_EQ(stats.batches_served, total);
  EXPECT_GE(stopped.size(), 2u) << "the runs should leave the group at different steps";
}

// The whole runner path (fork server, group worker, framed outcomes, store).
TEST_F(LockstepGroups, LockstepSweepStoresWhatTheRunByRunSweepStores) {
  const test::GroupedAndSingle runs = test::run_grouped_and_single(write(kSpec), path(""), 6);
  ASSERT_EQ(runs.grouped.size(), 6u);
  EXPECT_GT(test::expect_same_stored_runs(runs), 6 * 10);
  std::set<double> early;
  for (const auto& [id, g] : runs.grouped)
    for (const auto& [name, value] : g.metrics)
      if (name == "stopped_early") early.insert(value);
  EXPECT_EQ(early, (std::set<double>{0.0, 1.0}));  // runs stopped early and ran to the end
}

}  // namespace
}  // namespace attn
