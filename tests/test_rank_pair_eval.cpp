// The rank_pair probe (analysis/probe_rank_pair.h) on trained MLPs, through the run path a
// spec takes: below width h·d′ the pair's outputs agree and one of its inputs has error at
// least 1/q; at h·d′ and above only rank_pair_applies = 0 is logged. A spec that does not name
// the probe gets no rank_pair_* scalars; one that names it for another model, task or test set
// is refused before anything runs. A lockstep group and a run worker's request give the same
// scalars as the run alone (the one run body, experiment/run_body.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiment/lockstep_group.h"
#include "experiment/run_groups.h"
#include "experiment/run_worker.h"
#include "experiment/run_point.h"
#include "test_paths.h"

namespace attn {
namespace {

// tests/data/rank_pair_probe.toml with `sets` (--set overrides): widths 3, 7 below h·d' = 8, 8 at
// it.
std::vector<RunPoint> plan_probed(const std::vector<std::string>& sets = {}) {
  return plan_make(
      spec_load(std::string(test_source_dir()) + "/tests/data/rank_pair_probe.toml", sets, false));
}

const double* find_metric(const RunOutcome& o, const std::string& name) {
  for (const auto& [key, value] : o.metrics)
    if (key == name) return &value;
  return nullptr;
}

// Every rank_pair_* scalar of `o`, in order.
std::vector<std::pair<std::string, double>> rank_pair_scalars(const RunOutcome& o) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& m : o.metrics)
    if (m.first.starts_with("rank_pair_")) out.push_back(m);
  return out;
}

TEST(RankPairEval, BelowTheBoundThePairAgreesAndCertifiesAnErrorOfOneOverQ) {
  const auto points = plan_probed();
  ASSERT_EQ(points.size(), 3u);
  for (const auto& p : points) {
    const RunOutcome o = run_point_execute(p);
    ASSERT_TRUE(o.ok) << o.error;
    const int64_t width = std::get<int64_t>(p.swept.at("model.width"));
    const double* applies = find_metric(o, "rank_pair_applies");
    ASSERT_NE(applies, nullptr) << "width " << width;
    if (width >= 8) {
      EXPECT_EQ(*applies, 0) << "width " << width;
      EXPECT_EQ(find_metric(o, "rank_pair_certified_error"), nullptr);
      continue;
    }
    EXPECT_EQ(*applies, 1) << "width " << width;
    EXPECT_LT(*find_metric(o, "rank_pair_output_gap"), 1e-4) << "width " << width;
    EXPECT_NEAR(*find_metric(o, "rank_pair_target_gap"), 2.0 / 2, 1e-12) << "width " << width;
    EXPECT_GE(*find_metric(o, "rank_pair_certified_error"), 0.5 - 1e-4) << "width " << width;
    EXPECT_LT(*find_metric(o, "rank_pair_null_residual"), 1e-9) << "width " << width;
  }
}

// The rule since probes became opt-in: the rank_pair instances alone log no probe scalars.
TEST(RankPairEval, WithoutTheProbeNothingIsLogged) {
  const auto points = plan_probed({"eval.probes=[]"});
  EXPECT_TRUE(points[0].config.probes.empty());
  const RunOutcome o = run_point_execute(points[0]);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(find_metric(o, "rank_pair_applies"), nullptr);
  EXPECT_NE(find_metric(o, "test_mse"), nullptr);
}

TEST(RankPairEval, AProbeNamedForAnotherTestSetIsRefusedNamingTheKey) {
  try {
    plan_probed({"eval.instances=random"});
    ADD_FAILURE() << "planned rank_pair on the random instances";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("eval.probes: rank_pair needs model = mlp, task = qsa and eval.instances = "
                     "\"rank_pair\" (here model = mlp, task = qsa, eval.instances = \"random\")"),
              std::string::npos) << m;
  }
}

// The same scalars from a lockstep group (these points train on fresh samples with one rate)
// and from a point that went through a worker's request text, as from the run alone.
TEST(RankPairEval, GroupedAndEncodedRunsLogWhatTheRunAloneLogs) {
  const auto points = plan_probed();
  ASSERT_TRUE(run_group_lockstep(points[0]));
  std::vector<RunOutcome> together(points.size());
  lockstep_group_run(points, [&](size_t k, RunOutcome&& o) { together[k] = std::move(o); });
  for (size_t k = 0; k < points.size(); ++k) {
    const RunOutcome alone = run_point_execute(points[k]);
    ASSERT_TRUE(alone.ok && together[k].ok) << alone.error << together[k].error;
    ASSERT_FALSE(rank_pair_scalars(alone).empty());
    EXPECT_EQ(rank_pair_scalars(together[k]), rank_pair_scalars(alone)) << "point " << k;
    const std::vector<RunPoint> decoded = run_request_decode(run_request_encode({&points[k]}));
    EXPECT_EQ(decoded.at(0).config.probes, points[k].config.probes);
    EXPECT_EQ(rank_pair_scalars(run_point_execute(decoded[0])), rank_pair_scalars(alone));
  }
}

}  // namespace
}  // namespace attn
