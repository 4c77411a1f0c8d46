// Thm 10's rank pair on trained MLPs (experiment/rank_pair_eval.h), through the run path a
// spec takes: below width h·d′ the pair's outputs agree and one of its inputs has error at
// least 1/q; at h·d′ and above only rank_pair_applies = 0 is logged; other models and test
// sets log nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiment/run_point.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

// N = 8, q = 2, d' = 2: h·d' = 4·2 = 8.
std::string spec_text(const std::string& model, const std::string& instances) {
  return R"(
[experiment]
name = "rank_pair_eval"
seeds = 1
[task]
name = "qsa"
N = 8
q = 2
d_out = 2
[model]
name = ")" + model + "\"\n" + (model == "mlp" ? "depth = 2\n" : "m = 4\n") + R"(
[train]
n = 0
steps = 30
batch = 16
lr = 1e-2
[eval]
n = 20
)" + (instances.empty() ? "" : "instances = \"" + instances + "\"\n") +
         (model == "mlp" ? "[sweep]\n\"model.width\" = [3, 7, 8]\n" : "");
}

const double* find_metric(const RunOutcome& o, const std::string& name) {
  for (const auto& [key, value] : o.metrics)
    if (key == name) return &value;
  return nullptr;
}

class RankPairEval : public test::SpecFileTest {};

TEST_F(RankPairEval, BelowTheBoundThePairAgreesAndCertifiesAnErrorOfOneOverQ) {
  const auto points = plan(spec_text("mlp", "rank_pair"));
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

TEST_F(RankPairEval, OtherModelsAndTestSetsLogNothing) {
  for (const auto& [model, instances] :
       {std::pair<std::string, std::string>{"mlp", ""}, {"attention", "rank_pair"}}) {
    const auto points = plan(spec_text(model, instances));
    const RunOutcome o = run_point_execute(points[0]);
    ASSERT_TRUE(o.ok) << o.error;
    EXPECT_EQ(find_metric(o, "rank_pair_applies"), nullptr) << model << " " << instances;
  }
}

}  // namespace
}  // namespace attn
