// Figure data (experiment/figure_data.h): for every shipped spec (--quick plan, synthetic
// results), each figure point over the same runs as a number a claim compared shows the same
// number (mean, seeds, bounds; size needed and its bracket); and the figure data of small
// synthetic run sets: means over seeds, skips, notes, titles, the product boundary, sizes.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiment/claims.h"
#include "experiment/figure_data.h"
#include "experiment/plan.h"
#include "experiment/spec.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// A stored run of a plan point, as ResultsStore::insert records its parameters.
StoredRun run_of(const RunPoint& point) {
  StoredRun r;
  r.run_id = point.run_id;
  r.point = point.index;
  r.seed = point.seed;
  r.status = "ok";
  const RunConfig& c = point.config;
  r.params = {{"task.name", c.task}, {"model.name", c.model}};
  const std::vector<std::pair<std::string, const Params*>> sections = {
      {"task", &c.task_params}, {"model", &c.model_params}, {"train", &c.train_params},
      {"eval", &c.eval_params}};
  for (const auto& [section, params] : sections)
    for (size_t i = 0; i < params->schema().size(); ++i)
      r.params.emplace_back(section + "." + params->schema()[i].name,
                            param_value_text(params->values()[i]));
  for (const auto& [k, v] : point.swept) r.swept.push_back(k);
  return r;
}

// A value in (0, 1) from a text (FNV-1a).
double unit_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return static_cast<double>(h >> 11) / 9007199254740992.0;
}

// Synthetic results for every point of the spec's quick plan: each metric the claims and
// plots name, with a test-sample standard error; about one run in six failed, so seeds hold
// unequal numbers of runs in a point (a mean over runs is then not the mean over seeds).
std::vector<StoredRun> synthetic_runs(const Spec& spec) {
  std::set<std::string> metrics;
  for (const auto& c : spec.claims) metrics.insert(c.metric);
  for (const auto& p : spec.plots)
    if (!p.metric.empty()) metrics.insert(p.metric);
  std::vector<StoredRun> runs;
  for (const auto& point : plan_make(spec)) {
    StoredRun r = run_of(point);
    if (unit_hash(r.run_id + "failed") < 0.17) r.status = "failed";
    for (const auto& m : metrics) {
      r.metrics.emplace_back(m, 0.05 + unit_hash(r.run_id + m));
      r.metrics.emplace_back(m + "_se", 0.02 * unit_hash(r.run_id + m + "_se"));
    }
    r.metrics.emplace_back("test_samples", 200);
    runs.push_back(r);
  }
  return runs;
}

std::set<std::string> ids_of(const std::vector<StoredRun>& runs, const RunFilter& f,
                             const std::string& metric) {
  std::set<std::string> ids;
  for (const auto& r : runs)
    if (r.status == "ok" && run_matches(r, f) && std::isfinite(r.metric(metric)))
      ids.insert(r.run_id);
  return ids;
}

std::vector<std::string> swept_of(const Spec& spec) {
  std::vector<std::string> keys;
  for (const auto& axis : spec.axes) keys.insert(keys.end(), axis.keys.begin(), axis.keys.end());
  return keys;
}

// Compared pairs: (claim cell, figure point) over the same runs.
struct Compared {
  int means = 0, sizes = 0;
};

void compare_spec(const fs::path& path, Compared& n) {
  const Spec spec = spec_load(path.string(), {}, true);
  const auto runs = synthetic_runs(spec);
  for (const auto& plot : spec.plots) {
    if (plot.kind == PlotKind::curve || plot.kind == PlotKind::matrix)
      continue;  // series: no claim uses one
    const FigureData fd = figure_data_make(plot, swept_of(spec), runs);
    for (const auto& claim : spec.claims) {
      if (claim.metric != plot.metric) continue;
      std::vector<ClaimCell> cells;
      claim_evaluate(claim, runs, &cells);
      for (const auto& cell : cells) {
        const std::set<std::string> ids = ids_of(runs, cell.filter, claim.metric);
        for (const auto& line : fd.lines)
          for (const auto& p : line.points) {
            if (ids.empty() || std::set<std::string>(p.run_ids.begin(), p.run_ids.end()) != ids)
              continue;
            const std::string where = path.filename().string() + ": claim " + claim.id +
                                      " vs plot " + plot.name + " (" + line.label +
                                      ", x=" + p.x.label + ")";
            if (cell.size) {
              if (plot.kind != PlotKind::size_needed || plot.size != claim.size ||
                  plot.threshold != claim.threshold || plot.goal != claim.goal ||
                  claim.confidence != kFigureConfidence)
                continue;
              EXPECT_EQ(p.may, cell.may) << where;
              EXPECT_EQ(p.sure, cell.sure) << where;
              ++n.sizes;
            } else if (plot.kind != PlotKind::size_needed) {
              EXPECT_EQ(p.interval.mean, cell.interval.mean) << where;
              EXPECT_EQ(p.interval.seeds, cell.interval.seeds) << where;
              if (claim.confidence == kFigureConfidence) {
                EXPECT_EQ(p.interval.ok, cell.interval.ok) << where;
                EXPECT_EQ(p.interval.lo, cell.interval.lo) << where;
                EXPECT_EQ(p.interval.hi, cell.interval.hi) << where;
              }
              ++n.means;
            }
          }
      }
    }
  }
}

TEST(FigureData, ShippedSpecsShowTheClaimsNumbers) {
  std::vector<fs::path> specs;
  for (const auto& e :
       fs::recursive_directory_iterator(fs::path(test_source_dir()) / "experiments"))
    if (e.is_regular_file() && e.path().extension() == ".toml") specs.push_back(e.path());
  std::sort(specs.begin(), specs.end());
  ASSERT_GE(specs.size(), 19u);
  Compared n;
  for (const auto& path : specs) compare_spec(path, n);
  // Today: many cells of the point and trend claims, and the size claims of fu2023 and
  // sanford2023 against their size_needed figures.
  EXPECT_GE(n.means, 20) << "claim cells compared with a figure point";
  EXPECT_GE(n.sizes, 2) << "size brackets compared with a size_needed point";
  std::printf("compared %d means and %d size brackets\n", n.means, n.sizes);
}

// --- Small synthetic run sets --------------------------------------------------------------

StoredRun run(const std::string& id, uint64_t seed,
              std::vector<std::pair<std::string, std::string>> params,
              std::vector<std::pair<std::string, double>> metrics,
              const std::string& status = "ok") {
  StoredRun r;
  r.run_id = id;
  r.seed = seed;
  r.status = status;
  r.params = std::move(params);
  r.metrics = std::move(metrics);
  return r;
}

PlotSpec plot_of(PlotKind kind, const std::string& metric, const std::string& x) {
  PlotSpec p;
  p.name = plot_kinds().name(kind);
  p.kind = kind;
  p.metric = metric;
  p.x = x;
  return p;
}

TEST(FigureData, LinePointsAreMeansOverSeedsOfPooledRuns) {
  // Seed 0 has two runs at N = 8 (other.k = 1, 2), seed 1 one: the mean over seeds is
  // ((1 + 3) / 2 + 5) / 2 = 3.5, not the mean over runs 3.
  std::vector<StoredRun> runs = {
      run("a", 0, {{"task.N", "8"}, {"other.k", "1"}}, {{"m", 1}}),
      run("b", 0, {{"task.N", "8"}, {"other.k", "2"}}, {{"m", 3}}),
      run("c", 1, {{"task.N", "8"}, {"other.k", "1"}}, {{"m", 5}}),
      run("d", 1, {{"task.N", "8"}, {"other.k", "2"}}, {{"m", 7}}, "failed"),
      run("e", 0, {{"task.N", "16"}, {"other.k", "1"}}, {{"m", -1}}),
      run("f", 1, {{"task.N", "16"}, {"other.k", "1"}}, {{"m", 2}}),
  };
  PlotSpec p = plot_of(PlotKind::line, "m", "task.N");
  p.title = "N = {task.N}";
  p.has_none = true;
  p.none = -1;
  const FigureData d = figure_data_make(p, {"task.N", "other.k"}, runs);
  ASSERT_EQ(d.lines.size(), 1u);
  ASSERT_EQ(d.lines[0].points.size(), 2u);
  const FigurePoint& at8 = d.lines[0].points[0];
  EXPECT_EQ(at8.x.number, 8);
  EXPECT_DOUBLE_EQ(at8.interval.mean, 3.5);
  EXPECT_EQ(at8.interval.seeds, 2);
  EXPECT_EQ(at8.run_ids, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(at8.banded);
  EXPECT_EQ(d.lines[0].points[1].interval.seeds, 1);  // the none run left out
  EXPECT_EQ(d.runs_used, 4);
  EXPECT_EQ(d.title, "N = 8, 16");
  EXPECT_EQ(d.notes.at(0), "each point: mean over seeds and other.k");
  EXPECT_EQ(d.notes.at(1), "1 run(s) with m = -1 (none) left out");
  const std::string json = figure_data_json(d);
  EXPECT_NE(json.find("\"mean\": 3.5"), std::string::npos) << json;
  EXPECT_NE(json.find("\"x_numeric\": true"), std::string::npos) << json;
}

TEST(FigureData, AxesAndLegendReadAsWordsAndUnknownKeysAsThemselves) {
  std::vector<StoredRun> runs = {
      run("a", 0, {{"train.n", "8"}, {"model.name", "rfa"}, {"task.zeta", "1"}},
          {{"test_nmse", 1}, {"m", 1}}),
      run("b", 1, {{"train.n", "8"}, {"model.name", "rfa"}, {"task.zeta", "1"}},
          {{"test_nmse", 2}, {"m", 1}}),
  };
  PlotSpec p = plot_of(PlotKind::line, "test_nmse", "train.n");
  p.line = "model.name, task.zeta";
  FigureData d = figure_data_make(p, {"train.n"}, runs);
  EXPECT_EQ(d.x_label, "training samples n");
  EXPECT_EQ(d.y_label, "test NMSE");
  EXPECT_EQ(d.legend_title, "model, task.zeta");
  d = figure_data_make(plot_of(PlotKind::line, "m", "task.zeta"), {}, runs);
  EXPECT_EQ(d.x_label, "task.zeta");  // not in the table: the key itself
  EXPECT_EQ(d.y_label, "m");
  EXPECT_EQ(d.legend_title, "");
}

TEST(FigureData, BandsStayInTheMetricsRange) {
  // Two seeds far apart: the t bounds of the mean (0.5 and 0.01 for NMSE, 0.9 and 0.2 for a
  // success rate) reach below 0 and above 1; the bands are cut to the metric's range.
  const std::vector<StoredRun> runs = {
      run("a", 0, {{"task.N", "8"}}, {{"test_nmse", 0.5}, {"test_success_rate", 0.99}, {"m", 0.5}}),
      run("b", 1, {{"task.N", "8"}},
          {{"test_nmse", 0.01}, {"test_success_rate", 0.2}, {"m", 0.01}}),
  };
  const FigurePoint nmse =
      figure_data_make(plot_of(PlotKind::line, "test_nmse", "task.N"), {}, runs)
          .lines.at(0)
          .points.at(0);
  EXPECT_LT(nmse.interval.lo, 0);  // the claims' bound itself is unchanged
  EXPECT_EQ(nmse.band_lo, 0);
  EXPECT_EQ(nmse.band_hi, nmse.interval.hi);
  const FigureData rate =
      figure_data_make(plot_of(PlotKind::line, "test_success_rate", "task.N"), {}, runs);
  const FigurePoint& r = rate.lines.at(0).points.at(0);
  EXPECT_GT(r.interval.hi, 1);
  EXPECT_LT(r.interval.lo, 0);
  EXPECT_EQ(r.band_lo, 0);
  EXPECT_EQ(r.band_hi, 1);
  EXPECT_NE(rate.notes.back().find("cut to [0, 1], the metric's range"), std::string::npos)
      << rate.notes.back();
  const FigurePoint m =
      figure_data_make(plot_of(PlotKind::line, "m", "task.N"), {}, runs).lines.at(0).points.at(0);
  EXPECT_LT(m.band_lo, 0);  // a metric of unknown range: the bound as it is
}

TEST(FigureData, NothingMatchingIsSkippedWithTheReason) {
  std::vector<StoredRun> runs = {run("a", 0, {{"task.N", "8"}}, {{"m", 1}})};
  PlotSpec p = plot_of(PlotKind::line, "m", "task.N");
  p.where["task.N"] = {ParamValue(int64_t{16})};
  const FigureData d = figure_data_make(p, {}, runs);
  EXPECT_EQ(d.skipped, "no ok run with a m value matches {task.N=16}");
}

TEST(FigureData, AMetricNoRunHasIsAnErrorNamingIt) {
  std::vector<StoredRun> runs = {run("a", 0, {{"task.N", "8"}}, {{"test_mse", 1}})};
  try {
    figure_data_make(plot_of(PlotKind::line, "test_mes", "task.N"), {}, runs);
    ADD_FAILURE() << "no error for a misspelt metric";
  } catch (const UserError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "plot 'line': metric 'test_mes' is not a metric of any stored run; use one of: test_mse");
  }
}

TEST(FigureData, HeatmapFitsTheProductBoundary) {
  std::vector<StoredRun> runs;
  for (int m : {10, 100, 1000})
    for (int q : {1, 10})
      runs.push_back(run(std::to_string(m) + "_" + std::to_string(q), 0,
                         {{"model.m", std::to_string(m)}, {"task.q", std::to_string(q)}},
                         {{"acc", m * q >= 1000 ? 1.0 : 0.2}}));
  PlotSpec p = plot_of(PlotKind::heatmap, "acc", "model.m");
  p.y = "task.q";
  p.product_boundary = 0.9;
  const FigureData d = figure_data_make(p, {}, runs);
  EXPECT_EQ(d.product_c, 1000);
  EXPECT_EQ(d.lines.at(0).points.size(), 6u);
  EXPECT_EQ(d.title, "acc over model.m and task.q");
}

TEST(FigureData, SizeNeededHasTheClaimsBracket) {
  // Two seeds per width; the mean reaches < 0.25 at width 8 for N = 4; never for N = 8.
  std::vector<StoredRun> runs;
  for (int N : {4, 8})
    for (int w : {4, 8, 16})
      for (uint64_t s : {0, 1}) {
        const double loss = N == 4 ? (w >= 8 ? 0.1 + 0.01 * s : 0.5) : 0.4 + 0.01 * s;
        runs.push_back(run(std::to_string(N) + "_" + std::to_string(w) + "_" + std::to_string(s), s,
                           {{"task.N", std::to_string(N)}, {"model.width", std::to_string(w)}},
                           {{"loss", loss}}));
      }
  PlotSpec p = plot_of(PlotKind::size_needed, "loss", "task.N");
  p.size = "model.width";
  p.threshold = 0.25;
  const FigureData d = figure_data_make(p, {}, runs);
  ASSERT_EQ(d.lines.at(0).points.size(), 2u);
  EXPECT_EQ(d.lines[0].points[0].size, 8);
  EXPECT_EQ(d.lines[0].points[0].sure, 8);
  EXPECT_TRUE(std::isinf(d.lines[0].points[1].size));
  EXPECT_EQ(d.lines[0].points[1].largest, 16);
  EXPECT_EQ(d.title, "model.width needed for mean loss < 0.25");
  EXPECT_EQ(d.sizes_tried, (std::vector<double>{4, 8, 16}));
  EXPECT_NE(figure_data_json(d).find("\"size\": null"), std::string::npos);
  // A text size is a user error naming the key.
  runs[0].params[1].second = "wide";
  try {
    figure_data_make(p, {}, runs);
    ADD_FAILURE() << "no error for a text size";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("size key 'model.width' has the non-numeric value 'wide'"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn
