// Selection on validation (experiment/selection.h, a spec's [select]): the choice reads the
// validation metric only (a case where validation and test disagree), the budget, the
// tie-break, seeds chosen independently, a size axis that does not apply to a model, claims on
// the chosen runs, the CSV files, and the spec section (run ids unchanged).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_helpers.h"
#include "experiment/claims.h"
#include "experiment/figure_data.h"
#include "experiment/selection.h"
#include "spec_test_helpers.h"

namespace attn {
namespace {

// A stored run: its point index, seed, parameters and metrics.
StoredRun run_of(int64_t point, uint64_t seed,
                 std::vector<std::pair<std::string, std::string>> params,
                 std::vector<std::pair<std::string, double>> metrics) {
  StoredRun r;
  r.run_id = "run" + std::to_string(point);
  r.point = point;
  r.seed = seed;
  r.status = "ok";
  r.params = std::move(params);
  r.metrics = std::move(metrics);
  return r;
}

// Attention at m = 4 and m = 8 for the given seeds, train.n = 100: m = 4 is better on
// validation, m = 8 on test (each seed alike unless `flip_seed1`).
std::vector<StoredRun> val_test_disagree(int seeds, bool flip_seed1 = false) {
  std::vector<StoredRun> runs;
  int64_t point = 0;
  for (const char* m : {"4", "8"})
    for (int s = 0; s < seeds; ++s) {
      const bool small = std::string(m) == "4";
      const bool best_val = flip_seed1 && s == 1 ? !small : small;
      runs.push_back(run_of(point++, s,
                            {{"model.name", "attention"}, {"model.m", m}, {"train.n", "100"}},
                            {{"val_loss", best_val ? 0.2 : 0.3},
                             {"test_mse", small ? 0.9 : 0.1},
                             {"n_params", small ? 1000 : 2000}}));
    }
  return runs;
}

SelectSpec select_m(double budget = 0) {
  SelectSpec s;
  s.axes = {"model.m"};
  s.by = "val_loss";
  s.has_max_params = budget > 0;
  s.max_params = budget;
  return s;
}

const std::vector<std::string> kSwept = {"model.m", "train.n"};

// The claim "mean test_mse < threshold" over every run given.
ClaimSpec test_mse_below(double threshold) {
  ClaimSpec claim;
  claim.id = "c";
  claim.text = "t";
  claim.type = ClaimKind::below;
  claim.metric = "test_mse";
  claim.threshold = threshold;
  return claim;
}

TEST(Selection, ChoosesOnValidationWhereTestWouldChooseOtherwise) {
  const auto runs = val_test_disagree(1);
  const Selection sel = selection_make(select_m(), kSwept, runs);
  ASSERT_EQ(sel.reported_keys, std::vector<std::string>{"train.n"});
  ASSERT_EQ(sel.rows.size(), 1u);
  const SelectionCandidate* c = sel.rows[0].chosen_candidate();
  ASSERT_NE(c, nullptr);
  // The best on test would be m = 8 (test_mse 0.1); validation chooses m = 4.
  EXPECT_EQ(c->values, std::vector<std::string>{"4"});
  EXPECT_EQ(c->run->metric("test_mse"), 0.9);
  EXPECT_EQ(c->n_params, 1000);
  ASSERT_EQ(sel.rows[0].candidates.size(), 2u);  // the whole validation curve
  EXPECT_EQ(sel.rows[0].candidates[1].by, 0.3);
}

TEST(Selection, TestMetricsDoNotChangeTheChoice) {
  // Test values that make m = 8 the best by the smallest test metric (sign 1), then by the
  // largest (sign -1): a choice that read them either way would move to m = 8 once.
  for (double sign : {1.0, -1.0}) {
    auto runs = val_test_disagree(1);
    for (auto& r : runs)
      for (auto& [name, value] : r.metrics)
        if (name == "test_mse") value = sign * value * 100;
    const Selection sel = selection_make(select_m(), kSwept, runs);
    EXPECT_EQ(sel.rows[0].chosen_candidate()->values, std::vector<std::string>{"4"}) << sign;
  }
}

TEST(Selection, AKeyNamesAnAxisByEitherSpellingOfAModelOrTaskKey) {
  SelectSpec s;
  s.axes = {"model.attention.m", "train.lr", "task.N"};
  EXPECT_EQ(s.axis_named_by("model.attention.m"), "model.attention.m");
  EXPECT_EQ(s.axis_named_by("model.m"), "model.attention.m");  // m at an attention run
  EXPECT_EQ(s.axis_named_by("model.mlp.m"), "");                // another model's m
  EXPECT_EQ(s.axis_named_by("model.width"), "");
  EXPECT_EQ(s.axis_named_by("train.lr"), "train.lr");
  EXPECT_EQ(s.axis_named_by("train.x.lr"), "");                 // train keys have one spelling
  EXPECT_EQ(s.axis_named_by("task.qsa.N"), "task.N");
  EXPECT_EQ(s.axis_named_by(""), "");
}

TEST(Selection, ASweptKeyNamingTheSelectedAxisByItsOtherSpellingSplitsNoGroup) {
  // The store's swept list holds the keys plots name too: a plot's "model.m" beside the selected
  // "model.attention.m" must not become a reported key (each group would hold one candidate).
  std::vector<StoredRun> runs;
  for (const char* m : {"4", "8"})
    runs.push_back(run_of(static_cast<int64_t>(runs.size()), 0,
                          {{"model.name", "attention"}, {"model.m", m}},
                          {{"val_loss", std::string(m) == "4" ? 0.3 : 0.2}}));
  SelectSpec s;
  s.axes = {"model.attention.m"};
  const Selection sel = selection_make(s, {"model.name", "model.attention.m", "model.m"}, runs);
  EXPECT_EQ(sel.reported_keys, std::vector<std::string>{"model.name"});
  ASSERT_EQ(sel.rows.size(), 1u);
  ASSERT_EQ(sel.rows[0].candidates.size(), 2u);
  EXPECT_EQ(sel.rows[0].chosen_candidate()->values, std::vector<std::string>{"8"});
}

TEST(Selection, BudgetLeavesOutLargerCandidates) {
  auto runs = val_test_disagree(1);
  runs[1].metrics[0].second = 0.1;  // m = 8 now best on validation
  EXPECT_EQ(selection_make(select_m(), kSwept, runs).rows[0].chosen_candidate()->values[0], "8");
  const Selection within = selection_make(select_m(1500), kSwept, runs);
  const SelectedRow& row = within.rows[0];
  EXPECT_EQ(row.chosen_candidate()->values[0], "4");
  EXPECT_FALSE(row.candidates[1].eligible);
  EXPECT_EQ(row.candidates[1].why, "n_params 2000 > 1500");
  // A budget below every candidate leaves the group without a choice: claims see one failed
  // run saying why, and a claim on it is undecided ("failed"), not "no run matches".
  const Selection none = selection_make(select_m(10), kSwept, runs);
  EXPECT_EQ(none.rows[0].chosen, -1);
  const auto chosen = selection_chosen_runs(none);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].status, "failed");
  EXPECT_TRUE(chosen[0].metrics.empty());
  EXPECT_EQ(chosen[0].error,
            "no eligible candidate for [select]: n_params 1000 > 10; n_params 2000 > 10");
  const ClaimSpec claim = test_mse_below(0.6);
  const ClaimResult r = claim_evaluate(claim, chosen);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.detail;
  EXPECT_NE(r.detail.find("failed"), std::string::npos) << r.detail;
}

TEST(Selection, TiesGoToTheEarliestPointWhateverTheStoredOrder) {
  auto runs = val_test_disagree(1);
  runs[1].metrics[0].second = 0.2;  // the same validation loss as m = 4
  std::reverse(runs.begin(), runs.end());
  const Selection sel = selection_make(select_m(), kSwept, runs);
  EXPECT_EQ(sel.rows[0].chosen_candidate()->run->point, 0);
  EXPECT_EQ(sel.rows[0].candidates[0].run->point, 0);  // the curve is in plan order
}

TEST(Selection, EachSeedIsSelectedOnItsOwn) {
  const Selection sel = selection_make(select_m(), kSwept, val_test_disagree(2, true));
  ASSERT_EQ(sel.rows.size(), 2u);
  EXPECT_EQ(sel.rows[0].seed, 0u);
  EXPECT_EQ(sel.rows[0].chosen_candidate()->values[0], "4");
  EXPECT_EQ(sel.rows[1].seed, 1u);
  EXPECT_EQ(sel.rows[1].chosen_candidate()->values[0], "8");
}

TEST(Selection, FailedRunsAndRunsWithoutTheMetricAreNotEligible) {
  auto runs = val_test_disagree(1);
  runs[0].status = "failed";
  runs[1].metrics.erase(runs[1].metrics.begin());  // no val_loss
  const Selection sel = selection_make(select_m(), kSwept, runs);
  EXPECT_EQ(sel.rows[0].chosen, -1);
  EXPECT_EQ(sel.rows[0].candidates[0].why, "failed");
  EXPECT_EQ(sel.rows[0].candidates[1].why, "no val_loss");
}

TEST(Selection, ASizeAxisOfAnotherModelIsNoAxisForARun) {
  // attention sweeps m, mlp sweeps width; a run's value of the other model's key is "".
  std::vector<StoredRun> runs;
  auto add = [&](const std::string& model, const std::string& m, const std::string& w, double val) {
    runs.push_back(run_of(static_cast<int64_t>(runs.size()), 0,
                          {{"model.name", model}, {"model.m", m}, {"model.width", w}},
                          {{"val_loss", val}, {"test_mse", 1}, {"params", 7}}));
  };
  add("attention", "4", "", 0.5);
  add("attention", "8", "", 0.4);
  add("mlp", "", "64", 0.3);
  add("mlp", "", "128", 0.6);
  SelectSpec s;
  s.axes = {"model.m", "model.width"};
  const Selection sel = selection_make(s, {"model.name", "model.m", "model.width"}, runs);
  ASSERT_EQ(sel.rows.size(), 2u);
  EXPECT_EQ(sel.rows[0].reported, std::vector<std::string>{"attention"});
  EXPECT_EQ(sel.rows[0].chosen_candidate()->values, (std::vector<std::string>{"8", ""}));
  EXPECT_EQ(sel.rows[1].chosen_candidate()->values, (std::vector<std::string>{"", "64"}));
  // A store from before n_params: the neural models' `params`.
  EXPECT_EQ(sel.rows[1].chosen_candidate()->n_params, 7);
}

TEST(Selection, ClaimsReadTheChosenRunsMetric) {
  // Per seed: the chosen (m = 4) run's test_mse is 0.9; all runs pooled give 0.5.
  const auto runs = val_test_disagree(3);
  const ClaimSpec claim = test_mse_below(0.6);
  EXPECT_EQ(claim_evaluate(claim, runs).verdict, Verdict::Pass);
  const auto chosen = selection_apply(select_m(), kSwept, runs);
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_EQ(claim_evaluate(claim, chosen).verdict, Verdict::Fail);
  EXPECT_EQ(selection_apply(SelectSpec{}, kSwept, runs).size(), runs.size());
}

TEST(Selection, ReportTableShowsEachPointsChoicesAndParameterCounts) {
  const auto table =
      selection_table(selection_make(select_m(), kSwept, val_test_disagree(2, true)));
  ASSERT_EQ(table.size(), 2u);  // the header and one reported point (train.n = 100)
  EXPECT_EQ(table[0], (std::vector<std::string>{"train.n", "chosen model.m", "n_params", "val_loss",
                                                "eligible/candidates"}));
  EXPECT_EQ(table[1], (std::vector<std::string>{"100", "4, 8", "1000, 2000", "0.2, 0.2", "4/4"}));
  EXPECT_EQ(selection_text(select_m(1500)),
            "chosen per seed on val_loss (minimum) over model.m, with at most 1500 parameters");
}

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Selection, CsvFilesHoldTheChosenRowsAndEveryCandidate) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("attnlab_selection_csv_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto runs = val_test_disagree(1);
  selection_export_csv(selection_make(select_m(), kSwept, runs), kSwept, dir.string());
  EXPECT_EQ(file_text(dir / "selected.csv"),
            "run_id,seed,status,model.m,train.n,candidates,eligible,n_params,val_loss,test_mse\n"
            "run0,0,ok,4,100,2,2,1000,0.20000000000000001,0.90000000000000002\n");
  EXPECT_EQ(file_text(dir / "selection.csv"),
            "run_id,seed,status,model.m,train.n,n_params,val_loss,eligible,chosen,why\n"
            "run0,0,ok,4,100,1000,0.20000000000000001,1,1,\n"
            "run1,0,ok,8,100,2000,0.29999999999999999,1,0,\n");
  // Without [select] the files are removed: no stale selection is left beside results.csv.
  selection_export_csv(selection_make(SelectSpec{}, kSwept, runs), kSwept, dir.string());
  EXPECT_FALSE(std::filesystem::exists(dir / "selected.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "selection.csv"));
  std::filesystem::remove_all(dir);
}

class SelectSpecTest : public test::SpecFileTest {};

const char* kSelectSpec =
    "[task]\nname = \"qsa\"\nN = 4\nq = 1\n[model]\nname = \"attention\"\n"
    "[sweep]\n\"model.m\" = [4, 8]\n\"train.n\" = [100, 200]\n";

TEST_F(SelectSpecTest, ReadsTheSectionAndPlansTheSameRuns) {
  const Spec spec = load(std::string(kSelectSpec) +
                         "[select]\naxes = [\"model.m\"]\nby = \"val_loss\"\nmax_params = 5e4\n");
  EXPECT_EQ(spec.select.axes, std::vector<std::string>{"model.m"});
  EXPECT_EQ(spec.select.by, "val_loss");
  EXPECT_TRUE(spec.select.has_max_params);
  EXPECT_EQ(spec.select.max_params, 5e4);
  const Spec plain = load(kSelectSpec);
  EXPECT_FALSE(plain.select.active());
  // Selection reads stored runs: the same runs, ids and fingerprint with or without it.
  const auto a = plan_make(spec), b = plan_make(plain);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].run_id, b[i].run_id);
  EXPECT_EQ(spec_runs_json(spec), spec_runs_json(plain));
  // One axis may be written as a string; `by` defaults to val_loss.
  const Spec one = load(std::string(kSelectSpec) + "[select]\naxes = \"model.m\"\n");
  EXPECT_EQ(one.select.axes, std::vector<std::string>{"model.m"});
  EXPECT_EQ(one.select.by, "val_loss");
  EXPECT_FALSE(one.select.has_max_params);
}

TEST_F(SelectSpecTest, RefusesWhatCannotBeSelected) {
  auto error_of_spec = [&](const std::string& text) {
    try {
      load(text);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto error_of = [&](const std::string& select) {
    return error_of_spec(std::string(kSelectSpec) + select);
  };
  EXPECT_NE(error_of("[select]\naxes = [\"seed\"]\n").find("seeds are selected independently"),
            std::string::npos);
  EXPECT_NE(error_of("[select]\naxes = [\"model.n\"]\n").find("did you mean"), std::string::npos);
  // The training set's size changes the validation data: its validation losses are not comparable.
  EXPECT_NE(error_of("[select]\naxes = [\"train.n\"]\n").find("changes the data or the loss"),
            std::string::npos);
  EXPECT_NE(error_of("[select]\naxes = []\n").find("select.axes is an empty list"),
            std::string::npos);
  EXPECT_NE(error_of("[select]\nby = \"val_loss\"\n").find("[select] needs axes"),
            std::string::npos);
  EXPECT_NE(error_of("[select]\naxes = [\"model.m\", \"model.m\"]\n").find("twice"),
            std::string::npos);
  EXPECT_NE(error_of("[select]\naxes = [\"model.m\"]\nby = \"test_max_pos_err\"\n")
                .find("selection never looks at test data"),
            std::string::npos);
  EXPECT_NE(error_of("[select]\naxes = [\"model.m\"]\nmax_params = -3\n").find("> 0"),
            std::string::npos);
  EXPECT_NE(error_of("[select]\naxes = [\"model.m\"]\n[[claim]]\ntype = \"less_than\"\n"
                     "metric = \"test_mse\"\ntext = \"t\"\na = { \"model.m\" = 4 }\n"
                     "b = { \"model.m\" = 8 }\n")
                .find("claim 'claim1': a names \"model.m\""),
            std::string::npos);
  // A factor of a product size, or the scoped spelling of a selected plain key, is refused too.
  const std::string with_d = std::string(kSelectSpec) + "\"task.d\" = [4, 8]\n";
  EXPECT_NE(error_of_spec(with_d + "[select]\naxes = [\"model.m\"]\n[[claim]]\n"
                          "type = \"size_increasing\"\nmetric = \"test_mse\"\ntext = \"t\"\n"
                          "along = \"train.n\"\nsize = \"task.d * model.m\"\nthreshold = 1\n")
                .find("claim 'claim1': size names \"model.m\""),
            std::string::npos);
  EXPECT_NE(error_of("[select]\naxes = [\"model.m\"]\n[[claim]]\ntype = \"below\"\n"
                     "metric = \"test_mse\"\ntext = \"t\"\nthreshold = 1\n"
                     "where = { \"model.attention.m\" = 4 }\n")
                .find("where names \"model.attention.m\" (the selected axis \"model.m\")"),
            std::string::npos);
  // spec.json keeps the section (the figures and `attnlab export` read it back).
  const Spec spec =
      load(std::string(kSelectSpec) + "[select]\naxes = [\"model.m\"]\nmax_params = 100\n");
  EXPECT_NE(spec_to_json(spec).find("\"select\""), std::string::npos);
  EXPECT_EQ(spec_to_json(load(kSelectSpec)).find("\"select\""), std::string::npos);
}

TEST_F(SelectSpecTest, FiguresDrawTheChosenRunsLabelledUnlessTheyNameASelectedAxis) {
  const std::string spec = write(
      "[experiment]\nseeds = 2\n[task]\nname = \"qsa\"\nN = 4\nq = 1\nd_out = 2\n"
      "[model]\nname = \"attention\"\n[train]\nn = 60\nsteps = 20\nbatch = 8\n"
      "eval_every = 10\n[eval]\nn = 20\n[sweep]\n\"model.m\" = [4, 8]\n"
      "[select]\naxes = [\"model.m\"]\n"
      "[[plot]]\nname = \"chosen\"\nmetric = \"test_mse\"\nx = \"train.n\"\n"
      "[[plot]]\nname = \"curve\"\nmetric = \"val_loss\"\nx = \"model.m\"\n");
  const std::string out = path("out");
  ASSERT_EQ(test::cli_run("run " + spec + " -q -o " + out).exit_code, 0);
  figure_data_write(out);
  const std::string chosen = test::file_read(out + "/figures/data/chosen.json");
  EXPECT_NE(chosen.find("\"runs\": 2"), std::string::npos) << chosen;  // one run per seed
  EXPECT_NE(chosen.find("\"chosen\": \"model.m="), std::string::npos) << chosen;
  EXPECT_NE(chosen.find("runs chosen per seed on val_loss"), std::string::npos);
  const std::string curve = test::file_read(out + "/figures/data/curve.json");
  EXPECT_EQ(curve.find("\"chosen\": \"model.m="), std::string::npos);  // every candidate
  EXPECT_NE(curve.find("\"runs\": 2"), std::string::npos);             // each m: its two seeds
}

// Scoped sweep axes: "model.attention.m" is an axis at attention points only, so one spec
// sweeps each model's own size beside model.name (sanford2023 E2 at each model's best size).
const char* kScopedSpec =
    "[task]\nname = \"qsa\"\nN = 4\nq = 1\n[model]\nname = \"attention\"\n[sweep]\n"
    "\"model.name\" = [\"attention\", \"mlp\"]\n\"model.attention.m\" = [4, 8]\n"
    "\"model.mlp.width\" = [16, 32]\n";

TEST_F(SelectSpecTest, AScopedAxisVariesOnlyAtItsModelsPointsWithTheSameRunIds) {
  const auto points = plan(kScopedSpec);
  ASSERT_EQ(points.size(), 4u);  // attention m = 4, 8; mlp width = 16, 32 (not 2 x 2 x 2)
  const auto attention = plan(
      "[task]\nname = \"qsa\"\nN = 4\nq = 1\n[model]\nname = \"attention\"\n[sweep]\n"
      "\"model.m\" = [4, 8]\n");
  const auto mlp = plan(
      "[task]\nname = \"qsa\"\nN = 4\nq = 1\n[model]\nname = \"mlp\"\n[sweep]\n"
      "\"model.width\" = [16, 32]\n");
  // Axes in key order (model.attention.m, model.mlp.width, model.name), the coinciding grid
  // points dropped: attention m = 4, mlp width = 16, mlp width = 32, attention m = 8.
  EXPECT_EQ(points[0].run_id, attention[0].run_id);
  EXPECT_EQ(points[1].run_id, mlp[0].run_id);
  EXPECT_EQ(points[2].run_id, mlp[1].run_id);
  EXPECT_EQ(points[3].run_id, attention[1].run_id);
  EXPECT_EQ(points[0].swept.count("model.mlp.width"), 0u);  // not an axis of attention points
  EXPECT_EQ(points[1].swept.count("model.attention.m"), 0u);
  EXPECT_EQ(points[1].swept.count("model.mlp.width"), 1u);
  // Selected together: each model's size chosen at its own points.
  const Spec spec = load(std::string(kScopedSpec) +
                         "[select]\naxes = [\"model.attention.m\", \"model.mlp.width\"]\n");
  EXPECT_EQ(spec.select.axes.size(), 2u);
  // A stored run answers the scoped key with its own key, or "" at another model's run.
  StoredRun r = run_of(0, 0, {{"model.name", "attention"}, {"model.m", "8"}}, {});
  EXPECT_EQ(r.param("model.attention.m"), "8");
  EXPECT_EQ(r.param("model.mlp.width"), "");
  // A scoped axis of a model no run has, or a key that model lacks, is refused.
  EXPECT_NE(error(std::string(kScopedSpec) + "\"model.lstm.hidden\" = [8]\n")
                .find("applies only to runs whose model is lstm"),
            std::string::npos);
  const std::string no_key = error(std::string(kScopedSpec) + "\"model.mlp.m\" = [8]\n");
  EXPECT_NE(no_key.find("unknown parameter"), std::string::npos) << no_key;
}

}  // namespace
}  // namespace attn
