// Spec loading and validation, grid expansion and run ids.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_helpers.h"
#include "spec_test_helpers.h"
#include "core/error.h"
#include "experiment/plan.h"
#include "experiment/spec.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

using SpecTest = test::SpecFileTest;

const char* kBase = R"(
[experiment]
name = "t"
seeds = 2
[task]
name = "qsa"
N = 8
[model]
name = "linear"
[train]
n = 50
[eval]
n = 20
)";

TEST_F(SpecTest, GridTimesSeedsInKeyOrderWithStableIds) {
  const std::string text = std::string(kBase) + R"(
[sweep]
"task.q" = [1, 2, 3]
"model.lambda" = [0.1, 1.0]
)";
  const auto points = plan_make(load(text));
  ASSERT_EQ(points.size(), 12u);  // 2 lambdas x 3 q x 2 seeds
  // Axes in key order ("model.lambda" < "task.q"), seeds fastest.
  EXPECT_EQ(points[0].config.model_params.get_real("lambda"), 0.1);
  EXPECT_EQ(points[0].config.task_params.get_int("q"), 1);
  EXPECT_EQ(points[0].seed, 0u);
  EXPECT_EQ(points[1].seed, 1u);
  EXPECT_EQ(points[2].config.task_params.get_int("q"), 2);
  EXPECT_EQ(points[6].config.model_params.get_real("lambda"), 1.0);
  std::set<std::string> ids;
  for (const auto& p : points) ids.insert(p.run_id);
  EXPECT_EQ(ids.size(), 12u);
  // Stable: the same spec plans the same ids; writing a default explicitly changes nothing.
  const auto again = plan_make(load(text));
  for (size_t k = 0; k < points.size(); ++k) EXPECT_EQ(points[k].run_id, again[k].run_id);
  std::string with_default = text;
  with_default.replace(with_default.find("N = 8"), 5, "N = 8\nd_out = 4");
  EXPECT_EQ(plan_make(load(with_default))[0].run_id, points[0].run_id);
  // A changed value changes the id.
  std::string changed = text;
  changed.replace(changed.find("n = 50"), 6, "n = 51");
  EXPECT_NE(plan_make(load(changed))[0].run_id, points[0].run_id);
}

TEST_F(SpecTest, ZipGroupsVaryTogetherAndScopedTablesApplyPerName) {
  const std::string text = std::string(kBase) + R"(
[task.rf_target]
d = 4
[model.linear]
lambda = 0.5
[[sweep.zip]]
"task.name" = ["qsa", "rf_target"]
"task.N" = [8, 3]
)";
  const auto points = plan_make(load(text));
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].config.task, "qsa");
  EXPECT_EQ(points[0].config.task_params.get_int("N"), 8);
  EXPECT_EQ(points[2].config.task, "rf_target");
  EXPECT_EQ(points[2].config.task_params.get_int("N"), 3);
  EXPECT_EQ(points[2].config.task_params.get_int("d"), 4);
  EXPECT_DOUBLE_EQ(points[0].config.model_params.get_real("lambda"), 0.5);
}

TEST_F(SpecTest, QuickAndSetOverrides) {
  const std::string text = std::string(kBase) + R"(
[sweep]
"train.n" = [10, 20, 30]
[quick.sweep]
"train.n" = [10]
[quick.experiment]
seeds = 1
)";
  EXPECT_EQ(plan_make(load(text)).size(), 6u);
  EXPECT_EQ(plan_make(load(text, {}, true)).size(), 1u);
  // --set fixes a swept key (its axis goes) and takes TOML values or bare words.
  const auto fixed = plan_make(load(text, {"train.n=40", "task.encoding=indices"}));
  ASSERT_EQ(fixed.size(), 2u);
  EXPECT_EQ(fixed[0].config.train_params.get_int("n"), 40);
  EXPECT_EQ(fixed[0].config.task_params.get_string("encoding"), "indices");
  const auto swept = plan_make(load(text, {"sweep.task.q=[1, 3]"}));
  EXPECT_EQ(swept.size(), 12u);
  const auto seeds = load(text, {"experiment.seeds=[5, 9]"});
  EXPECT_EQ(seeds.seeds, (std::vector<uint64_t>{5, 9}));
}

TEST_F(SpecTest, EveryValidationErrorNamesTheFileAndKey) {
  const std::string base = kBase;
  struct Case {
    std::string text, needle;
  };
  const std::vector<Case> cases = {
      {base + "[sweeep]\n", "unknown section 'sweeep' (did you mean 'sweep'?)"},
      {base + "[sweep]\n\"task.NN\" = [1, 2]\n", "unknown parameter 'task.NN' (did you mean 'N'?)"},
      {base + "[sweep]\n\"task.q\" = []\n", "empty list"},
      {base + "[sweep]\n\"seed\" = [1]\n", "must name a task, model, train or eval key"},
      {base + "[sweep]\n\"task.q\" = 3\n", "must be a list"},
      {base + "[sweep.zip]\n", "[[sweep.zip]]"},
      {base + "[[sweep.zip]]\n\"task.q\" = [1, 2]\n\"task.N\" = [8]\n", "equal length"},
      {std::string("[task]\nname=\"qsa\"\nq = \"two\"\n[model]\nname=\"mean\"\n"),
       "task.q must be an integer"},
      // Only a key declared a list of names (ParamType::NameList, e.g. eval.probes) takes
      // an array of strings; any other key's is refused as before.
      {std::string("[task]\nname=\"qsa\"\n[model]\nname=\"rfa\"\n[train]\n"
                   "lambdas = [\"small\"]\n"),
       "train.lambdas: a list value must hold numbers only"},
      {std::string("[task]\nname=\"qsa\"\nencoding = [\"sphere\"]\n[model]\nname=\"mean\"\n"),
       "task.encoding: a list value must hold numbers only"},
      {std::string("[task]\nname=\"qsa\"\nq = 16\n[model]\nname=\"mean\"\n"),
       "task.q = 16 must be smaller than task.N = 16"},
      {std::string("[task]\nname=\"qas\"\n[model]\nname=\"mean\"\n"), "did you mean 'qsa'"},
      {std::string("[task]\nN = 4\n[model]\nname=\"mean\"\n"), "[task] needs name"},
      {std::string("[task]\nname=\"qsa\"\n[model]\nname=\"lineer\"\n"), "did you mean 'linear'"},
      {std::string("[task]\nname=\"qsa\"\n[model]\nname=\"mean\"\nlambda = 1\n"),
       "unknown parameter 'model.lambda'"},
      {base + "[task.qas]\nN = 3\n", "is not a task name (did you mean 'qsa'?)"},
      {base + "[experiment]\nseed = 3\n", ""},  // duplicate table: a TOML error
      {base + "[train]\nm = 3\n", ""},
      {std::string("[experiment]\nseedz = 3\n") + "[task]\nname=\"qsa\"\n[model]\nname=\"mean\"\n",
       "did you mean 'seeds'"},
      {std::string("[experiment]\nseeds = 0\n") + "[task]\nname=\"qsa\"\n[model]\nname=\"mean\"\n",
       "experiment.seeds = 0"},
      {base + "[[plot]]\nmetric = \"test_mse\"\n", "needs metric"},
      {base + "[[plot]]\nmetric = \"test_mse\"\nx = \"train.nn\"\n",
       "'train.nn', which is not a key"},
      {base + "[[claim]]\ntype = \"smaller\"\nmetric = \"m\"\ntext = \"t\"\n", "is not one of"},
      {base + "[[claim]]\ntype = \"belw\"\nmetric = \"m\"\ntext = \"t\"\n", "did you mean 'below'"},
      {base + "[[claim]]\ntype = \"less_than\"\nmetric = \"m\"\ntext = \"t\"\n", "needs filters a"},
      {base + "[[claim]]\ntype = \"below\"\nmetric = \"m\"\ntext = \"t\"\n", "needs threshold"},
      {base + "[[claim]]\ntype = \"decreasing\"\nmetric = \"m\"\ntext = \"t\"\n", "needs along"},
      {base + "[[claim]]\ntype = \"below\"\nmetric = \"m\"\nthreshold = 1\n", "needs text"},
      {base + "[[claim]]\ntype = \"size_increasing\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\nthreshold = 1\n",
       "(size_increasing) needs size = \"dotted.key\" (the swept model size) and threshold"},
      {base + "[[claim]]\ntype = \"size_increasing\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\nsize = \"task.q\"\n",
       "and threshold = NUMBER"},
      {base + "[[claim]]\ntype = \"size_increasing\"\nmetric = \"m\"\ntext = \"t\"\nsize = "
              "\"task.q\"\nthreshold = 1\n",
       "(size_increasing) needs along"},
      {base + "[[claim]]\ntype = \"size_flat\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\nsize = \"task.q\"\nthreshold = 1\n",
       "(size_flat) needs factor = NUMBER >= 1"},
      {base + "[[claim]]\ntype = \"size_flat\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\nsize = \"task.q\"\nthreshold = 1\nfactor = 0.5\n",
       "(size_flat) needs factor = NUMBER >= 1"},
      {base + "[[claim]]\ntype = \"size_ratio_increasing\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\nsize = \"task.q\"\nthreshold = 1\n",
       "(size_ratio_increasing) needs filters a = {...} and b = {...}"},
      {base + "[[claim]]\ntype = \"size_ratio_increasing\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\na = { seed = 0 }\nb = { seed = 1 }\nthreshold = 1\n",
       "(size_ratio_increasing) needs size = \"dotted.key\""},
      {base + "[[claim]]\ntype = \"size_increasing\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\nsize = \"task.q\"\nthreshold = 1\ngoal = \"less\"\n",
       "claim.goal must be \"below\" or \"above\""},
      {base + "[[claim]]\ntype = \"size_increasing\"\nmetric = \"m\"\ntext = \"t\"\nalong = "
              "\"task.N\"\nsize = \"task.q\"\nthreshold = 1\n",
       "claim 'claim1': along = \"task.N\" is not a swept key"},
      {base + "[sweep]\n\"task.N\" = [8, 16]\n\"task.q\" = [1, 2]\n[[claim]]\ntype = "
              "\"size_increasing\"\nmetric = \"m\"\ntext = \"t\"\nalong = \"task.N\"\nsize = "
              "\"model.widht\"\nthreshold = 1\n",
       "claim 'claim1': size = \"model.widht\" is not a swept key"},
      {base + "[quick.plot]\nx = 1\n", "[quick] may override"},
      {base + "[task.rf_target]\ndd = 3\n", "[task.rf_target]: unknown parameter 'task.dd'"},
      {base + "[experiment]\n", ""},
      {std::string("[experiment]\nseeds = [1, 1]\n") +
           "[task]\nname=\"qsa\"\n[model]\nname=\"mean\"\n",
       "seed 1 twice"},
      {std::string("[task]\nname=\"qsa\"\nN = \"8\"\n[model]\nname=\"mean\"\n"),
       "got the string \"8\""},
      {std::string("[task]\nname=\"qsa\"\n[model]\nname=\"mean\"\nx = 1\n"), "takes no parameters"},
      {base + "x = = 1\n", "TOML syntax error"},
  };
  for (const auto& c : cases) {
    const std::string msg = error(c.text);
    EXPECT_FALSE(msg.empty()) << "no error for:\n" << c.text;
    EXPECT_NE(msg.find("spec.toml"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << "want '" << c.needle << "' in: " << msg;
  }
  EXPECT_NE(error(base, {"task.q"}).find("section.key=value"), std::string::npos);
  EXPECT_NE(error(base, {"plot.x=1"}).find("cannot be set"), std::string::npos);
  EXPECT_NE(error(base, {"sweep.task.q=2"}).find("a sweep axis is a list"), std::string::npos);
}

TEST_F(SpecTest, PlotKindsLoadAndReachSpecJson) {
  const std::string text = std::string(kBase) + R"([sweep]
"task.q" = [1, 2]
"train.n" = [30, 50]
[[plot]]
metric = "test_mse"
x = "train.n"
[[plot]]
name = "heat"
kind = "heatmap"
metric = "test_nmse"
x = "train.n"
y = "task.q"
logx = true
where = { seed = 0 }
[[plot]]
kind = "curve"
series = "val_loss"
line = "task.q"
logy = true
[[plot]]
kind = "matrix"
series = "attention_sample0"
where = { "task.q" = 2 }
)";
  const Spec spec = load(text);
  EXPECT_EQ(plan_make(spec).size(), 8u);
  ASSERT_EQ(spec.plots.size(), 4u);
  EXPECT_EQ(spec.plots[0].kind, PlotKind::line);
  EXPECT_EQ(spec.plots[1].kind, PlotKind::heatmap);
  EXPECT_EQ(spec.plots[1].y, "task.q");
  EXPECT_EQ(spec.plots[2].kind, PlotKind::curve);
  EXPECT_EQ(spec.plots[2].series, "val_loss");
  EXPECT_TRUE(spec.plots[2].metric.empty());
  EXPECT_EQ(spec.plots[3].name, "plot4");
  const auto j = nlohmann::json::parse(spec_to_json(spec));
  ASSERT_EQ(j["plots"].size(), 4u);
  EXPECT_EQ(j["plots"][0]["kind"], "line");
  EXPECT_EQ(j["plots"][1]["kind"], "heatmap");
  EXPECT_EQ(j["plots"][1]["y"], "task.q");
  EXPECT_EQ(j["plots"][1]["x"], "train.n");
  EXPECT_EQ(j["plots"][2]["series"], "val_loss");
  EXPECT_EQ(j["plots"][2]["line"], "task.q");
  EXPECT_EQ(j["plots"][3]["kind"], "matrix");
  EXPECT_EQ(j["plots"][3]["series"], "attention_sample0");
  EXPECT_EQ(j["plots"][3]["where"]["task.q"][0], 2);
}

TEST_F(SpecTest, PlotKindErrorsNameTheFileLineAndKey) {
  const std::string base = kBase;
  // Line of the first line after base: base has this many newlines.
  const int first = static_cast<int>(std::count(base.begin(), base.end(), '\n')) + 1;
  struct Case {
    std::string plot;  // the [[plot]] table's lines after "[[plot]]"
    int line;          // line of the error, relative to "[[plot]]" (0)
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"name = \"h\"\nkind = \"heatmp\"\n", 2,
       "plot 'h': kind = 'heatmp' is not one of line, heatmap, curve, matrix, size_needed (did you "
       "mean 'heatmap'?)"},
      {"kind = \"curv\"\nseries = \"val_loss\"\n", 1, "(did you mean 'curve'?)"},
      {"kind = 3\n", 1, "plot.kind must be a string"},
      {"kind = \"heatmap\"\nmetric = \"test_mse\"\nx = \"train.n\"\n", 0,
       "[[plot]] 'plot1' (kind = \"heatmap\") needs metric = \"...\" (the cell colour), x = "
       "\"dotted.key\" and y = \"dotted.key\""},
      {"kind = \"heatmap\"\ny = \"task.q\"\nx = \"train.n\"\n", 0, "needs metric"},
      {"kind = \"heatmap\"\nmetric = \"m\"\nx = \"train.n\"\ny = \"task.q\"\nline = \"task.N\"\n",
       5,
       "plot 'plot1' (kind = \"heatmap\") does not use line; remove it, or set kind to one "
       "that does (line or curve or size_needed); a heatmap plot takes metric, x, y, logx, logy, "
       "product_boundary, where"},
      {"kind = \"heatmap\"\nmetric = \"m\"\nx = \"train.n\"\ny = \"task.q\"\nproduct_boundary = "
       "0\n",
       5, "plot.product_boundary must be > 0"},
      {"kind = \"heatmap\"\nmetric = \"m\"\nx = \"train.n\"\ny = \"task.q\"\nproduct_boundary = "
       "\"a\"\n",
       5, "plot.product_boundary must be a number"},
      {"metric = \"m\"\nx = \"train.n\"\nproduct_boundary = 1\n", 3,
       "(kind = \"line\") does not use product_boundary"},
      {"kind = \"curve\"\n", 0, "(kind = \"curve\") needs series = \"...\""},
      {"kind = \"curve\"\nseries = \"val_loss\"\nmetric = \"test_mse\"\n", 3,
       "(kind = \"curve\") does not use metric"},
      {"kind = \"curve\"\nseries = \"val_loss\"\nx = \"train.n\"\n", 3, "does not use x"},
      {"kind = \"curve\"\nseries = 1\n", 2, "plot.series must be a string"},
      {"kind = \"matrix\"\nline = \"task.q\"\n", 2, "(kind = \"matrix\") does not use line"},
      {"kind = \"matrix\"\nseries = \"a\"\nmetric = \"m\"\n", 3, "does not use metric"},
      {"kind = \"matrix\"\nseries = \"a\"\nlogy = true\n", 3, "does not use logy"},
      {"kind = \"matrix\"\nseries = \"\"\n", 0, "(kind = \"matrix\") needs series"},
      {"metric = \"m\"\nx = \"train.n\"\ny = \"task.q\"\n", 3, "(kind = \"line\") does not use y"},
      {"metric = \"m\"\nx = \"train.n\"\nseries = \"s\"\n", 3, "does not use series"},
      {"series = \"val_loss\"\n", 1,
       "(kind = \"line\") does not use series; remove it, or set "
       "kind to one that does (curve or matrix)"},
      {"line = \"task.q\"\n", 0, "[[plot]] needs metric = \"...\" and x = \"dotted.key\""},
      {"kind = \"curve\"\nseries = \"val_loss\"\nwhere = { \"task.qq\" = 1 }\n", -1,
       "plot 'plot1' where refers to 'task.qq', which is not a key"},
      {"kind = \"curve\"\nseries = \"val_loss\"\nline = \"task.NN\"\n", -1,
       "plot 'plot1' line refers to 'task.NN'"},
      {"kind = \"size_needed\"\nmetric = \"m\"\nx = \"task.N\"\nthreshold = 0.5\n", 0,
       "(kind = \"size_needed\") needs metric = \"...\", x = \"dotted.key\", size = "
       "\"dotted.key\""},
      {"kind = \"size_needed\"\nmetric = \"m\"\nx = \"task.N\"\nsize = \"task.q\"\n", 0,
       "and threshold = NUMBER"},
      {"kind = \"size_needed\"\nmetric = \"m\"\nx = \"task.N\"\nsize = \"task.q\"\nthreshold = "
       "\"a\"\n",
       5, "plot.threshold must be a number"},
      {"kind = \"size_needed\"\nmetric = \"m\"\nx = \"task.N\"\nsize = \"task.q\"\nthreshold = "
       "1\ngoal = \"under\"\n",
       6, "plot.goal must be \"below\" or \"above\" (got \"under\")"},
      {"kind = \"size_needed\"\nmetric = \"m\"\nx = \"task.N\"\nsize = \"task.qq\"\nthreshold = "
       "1\n",
       -1, "plot 'plot1' size refers to 'task.qq'"},
      {"metric = \"m\"\nx = \"train.n\"\nsize = \"task.q\"\n", 3,
       "(kind = \"line\") does not use size"},
  };
  for (const auto& c : cases) {
    const std::string text = base + "[[plot]]\n" + c.plot;
    const std::string msg = error(text);
    EXPECT_NE(msg.find(c.needle), std::string::npos) << "want '" << c.needle << "' in: " << msg;
    if (c.line >= 0) {
      const std::string at = "spec.toml:" + std::to_string(first + c.line) + ": ";
      EXPECT_NE(msg.find(at), std::string::npos) << "want '" << at << "' in: " << msg;
    } else {
      EXPECT_NE(msg.find("spec.toml: "), std::string::npos) << msg;
    }
  }
}

TEST_F(SpecTest, SetOverridesScopedTablesToo) {
  const std::string text = std::string(kBase) + "[task.qsa]\nN = 10\n";
  EXPECT_EQ(plan_make(load(text))[0].config.task_params.get_int("N"), 10);
  EXPECT_EQ(plan_make(load(text, {"task.N=12"}))[0].config.task_params.get_int("N"), 12);
  EXPECT_EQ(plan_make(load(text, {"task.qsa.N=14"}))[0].config.task_params.get_int("N"), 14);
}

TEST_F(SpecTest, MissingFileIsAnIoError) {
  EXPECT_THROW(spec_load((dir_ / "nope.toml").string(), {}, false), IoError);
}

TEST_F(SpecTest, RunsFingerprintIgnoresPlotsAndClaims) {
  const Spec a = load(std::string(kBase));
  const Spec b = load(std::string(kBase) +
                      "[[plot]]\nmetric = \"test_mse\"\nx = \"train.n\"\n");
  EXPECT_EQ(spec_runs_json(a), spec_runs_json(b));
  const Spec c = load(std::string(kBase), {"train.n=51"});
  EXPECT_NE(spec_runs_json(a), spec_runs_json(c));
}

}  // namespace
}  // namespace attn
