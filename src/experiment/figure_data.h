// Figure data: every number a figure shows, computed once here from the stored runs with the
// claims' own functions (claims_evidence.h: per-seed values, Student-t bounds, the smallest
// size that reaches a goal), so a figure and a claim over the same runs cannot disagree.
// figure_data_write puts one JSON file per plot beside the figures,
// DIR/figures/data/<plot>.json (format: docs/figure-data.md); scripts/plot_results.py only
// draws from those files.
//
// A point (line, heatmap cell, curve step, size_needed x) pools the runs of one seed into
// that seed's value (their mean), then takes the mean over seeds and its bounds at
// kFigureConfidence, each bound one-sided (sample_interval: t over seeds; one seed, its
// test-sample standard error when the runs stored one; else no bounds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/claim_stats.h"
#include "experiment/spec.h"
#include "experiment/store.h"

namespace attn {

// The level of each bound a figure draws (the claims' default confidence).
inline constexpr double kFigureConfidence = 0.95;

// A value on an axis or a line: numeric (compared as a number) or text; `label` as shown.
struct FigureValue {
  bool numeric = false;
  double number = 0;
  std::string text, label;
};

struct FigurePoint {
  FigureValue x, y;               // y: the heatmap row (unused elsewhere)
  int64_t step = 0;               // curve: the series step (x holds it too)
  RunFilter filter;               // where ∧ x (∧ y) ∧ the line's keys: the runs it may use
  std::vector<std::string> run_ids;  // the runs it used
  Interval interval;              // mean over seeds, bounds at kFigureConfidence
  double sd = -1;                 // sample standard deviation over seeds (< 0: one seed)
  bool banded = false;            // interval.ok: a band [band_lo, band_hi] is drawn
  double band_lo = 0, band_hi = 0;  // the bounds, cut to the metric's range (metric_range_of:
                                    // NMSE >= 0, an accuracy in [0, 1]); logy: a lower bound
                                    // <= 0 is raised to the smallest seed value
  // size_needed: the size estimate and bracket (SizeBracket; infinite: not reached).
  double size = 0, may = 0, sure = 0, largest = 0;
  // [select]: the chosen runs' values of the selected axes and parameter counts, e.g.
  // "model.m=64 · 7503 params" (the seeds' distinct values joined by "/"); "" = none.
  std::string chosen;
};

struct FigureLine {
  std::string label;    // legend label
  std::string same_as;  // line: the label of an earlier line it coincides with ("" = none)
  std::vector<FigurePoint> points;
};

struct FigureData {
  std::string name, title;  // title with each {key} replaced by the runs' values
  PlotKind kind = PlotKind::line;
  std::string skipped;            // why nothing is drawn ("" = drawn)
  std::string x_label, y_label, value_label, legend_title;
  bool logx = false, logy = false, x_numeric = true;
  std::vector<FigureValue> x_values, y_values;  // in drawing order
  std::vector<FigureLine> lines;  // line, curve, size_needed: one per line value; heatmap:
                                  // one line holding the cells
  std::vector<std::string> notes;  // the figure's footnote lines
  int64_t runs_used = 0;
  RunFilter where;
  // heatmap: the product boundary's level (0: none) and fitted c (< 0: none).
  double product_level = 0, product_c = -1;
  // size_needed
  std::string size_key, goal;
  double threshold = 0;
  std::vector<double> sizes_tried;
  // matrix: one run's S x S values (NaN: not finite), its label, the outlined entries.
  std::string run_id, run_label, mark;
  std::vector<std::vector<double>> matrix;
  bool has_marked = false;
  std::vector<std::pair<int64_t, int64_t>> marked;
};

// The data of one plot over a store's runs (experiment_plan_runs). `swept` is the spec's
// swept keys (for the footnote naming what else a mean is over and the matrix run's label).
// UserError for data a plot cannot use: a series no run logged, a matrix series that is not
// a square, a size_needed x or size that is not a number.
FigureData figure_data_make(const PlotSpec& plot, const std::vector<std::string>& swept,
                            const std::vector<StoredRun>& runs);

// The JSON text of DIR/figures/data/<plot>.json.
std::string figure_data_json(const FigureData& data);

// Computes every plot of DIR's spec.json over the store's plan runs (checking all before
// writing anything), then writes DIR/figures/data/<plot>.json for each plot drawn,
// DIR/figures/data/index.json {"plots": [names in spec order], "skipped": {name: reason}}
// and DIR/figures/skipped.json; warnings (runs left out) through core/log.h.
void figure_data_write(const std::string& dir);

// The plots and swept keys of a spec.json (spec_to_json's text).
std::vector<PlotSpec> plots_from_spec_json(const std::string& text,
                                           std::vector<std::string>* swept);

}  // namespace attn
