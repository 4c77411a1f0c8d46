// model.heads meant four things; the two that are not a model's own head count have their own
// names now: rfmlp's matched_heads (the RFA head count its width 0 matches) and the kernel
// models' lambda_heads (λ is divided by that head count, resp. the matched width). The old
// spelling `heads` is accepted everywhere and stays the stored spelling (run ids, stored
// parameter columns), so both spellings plan the same runs.
#include <gtest/gtest.h>

#include "cli_helpers.h"
#include "core/error.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

const std::string kHeader =
    "[experiment]\nname = \"renamed\"\n[task]\nname = \"rf_target\"\nN = 2\nd = 2\n"
    "[train]\nn = 40\n[eval]\nn = 20\n";

class RenamedKeys : public test::SpecFileTest {};

TEST_F(RenamedKeys, OldAndNewSpellingPlanTheSameRuns) {
  const auto old_ids =
      plan(kHeader +
           "[model.rfmlp]\nheads = 3\n[model.rfa_kernel]\nheads = 4\n"
           "[model.rfmlp_kernel]\nheads = 5\n"
           "[sweep]\n\"model.name\" = [\"rfmlp\", \"rfa_kernel\", \"rfmlp_kernel\"]\n");
  const auto new_ids =
      plan(kHeader +
           "[model.rfmlp]\nmatched_heads = 3\n[model.rfa_kernel]\n"
           "lambda_heads = 4\n[model.rfmlp_kernel]\nlambda_heads = 5\n"
           "[sweep]\n\"model.name\" = [\"rfmlp\", \"rfa_kernel\", \"rfmlp_kernel\"]\n");
  ASSERT_EQ(old_ids.size(), 3u);
  ASSERT_EQ(new_ids.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(old_ids[k].run_id, new_ids[k].run_id) << k;
    EXPECT_NE(old_ids[k].config_json.find("\"heads\": "), std::string::npos)
        << old_ids[k].config_json;
  }
  EXPECT_EQ(new_ids[0].config.model_params.get_int("matched_heads"), 3);
  EXPECT_EQ(new_ids[1].config.model_params.get_int("lambda_heads"), 4);
  EXPECT_EQ(new_ids[2].config.model_params.get_int("heads"), 5);
}

TEST_F(RenamedKeys, ZippedHeadsOverRfaAndItsKernelStillPlans) {
  // experiments/fu2023/e4: one axis model.heads for rfa's M and rfa_kernel's λ divisor.
  const auto points = plan(kHeader + "[[sweep.zip]]\n\"model.name\" = [\"rfa\", \"rfa_kernel\"]\n"
                                     "\"model.heads\" = [8, 0]\n");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].config.model_params.get_int("heads"), 8);
  EXPECT_EQ(points[1].config.model_params.get_int("lambda_heads"), 0);
}

TEST_F(RenamedKeys, SweepsPlotsAndClaimsNameTheStoredSpelling) {
  const std::string base = kHeader + "[model]\nname = \"rfmlp\"\n";
  const std::string sweep = error(base + "[sweep]\n\"model.matched_heads\" = [2, 3]\n");
  EXPECT_NE(sweep.find("sweep key 'model.matched_heads': results store this key as 'model.heads'"),
            std::string::npos)
      << sweep;
  EXPECT_EQ(error(base + "[sweep]\n\"model.heads\" = [2, 3]\n"), "");
  const std::string plot =
      error(base + "[sweep]\n\"model.heads\" = [2, 3]\n[[plot]]\nname = \"p\"\nkind = \"line\"\n"
                   "x = \"model.matched_heads\"\nmetric = \"test_nmse\"\n");
  EXPECT_NE(plot.find("plot 'p' x 'model.matched_heads': results store this key as 'model.heads'"),
            std::string::npos)
      << plot;
}

TEST_F(RenamedKeys, CommandLineSetTakesBothSpellings) {
  const std::string spec = write(kHeader + "[model]\nname = \"rfmlp_kernel\"\n");
  EXPECT_EQ(plan_make(spec_load(spec, {"model.heads=6"}, false))[0].run_id,
            plan_make(spec_load(spec, {"model.lambda_heads=6"}, false))[0].run_id);
}

TEST_F(RenamedKeys, CommandLineSetWinsOverAScopedTableInEitherSpelling) {
  const std::string spec =
      write(kHeader + "[model]\nname = \"rfmlp\"\n[model.rfmlp]\nmatched_heads = 3\n");
  for (const char* set : {"model.heads=6", "model.matched_heads=6"})
    EXPECT_EQ(
        plan_make(spec_load(spec, {set}, false))[0].config.model_params.get_int("matched_heads"), 6)
        << set;
}

TEST(RenamedKeysCli, ListShowsTheNewNamesAndTheOldSpelling) {
  const auto r = test::cli_run("list rfmlp");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("model.matched_heads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("earlier name heads"), std::string::npos) << r.out;
  const auto k = test::cli_run("list rfa_kernel");
  EXPECT_NE(k.out.find("model.lambda_heads"), std::string::npos) << k.out;
}

}  // namespace
}  // namespace attn
