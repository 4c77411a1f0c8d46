// Figure data of the plots over results (line, heatmap, size_needed; figure_data.h): which runs
// each point uses, and its numbers, by the claims' functions. Series plots (curve, matrix) in
// figure_data_series.cpp.
#include "experiment/figure_data.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "experiment/axis_words.h"
#include "experiment/figure_data_detail.h"

#pragma GCC diagnostic error "-Wswitch"  // figure_data_make: every PlotKind has its data

namespace attn {
namespace figure_detail {
namespace {

using claims_detail::SeedValues;

// The ok runs matching `where` with a finite metric (a line plot's `none` left out and
// counted), then the log axes' non-positive values dropped, with warnings.
struct Picked {
  Runs runs;
  int64_t nones = 0;
};

Picked pick(const PlotSpec& plot, const std::vector<StoredRun>& runs) {
  Picked p;
  int64_t missing = 0;
  for (const auto& r : runs) {
    if (r.status != "ok" || !run_matches(r, plot.where)) continue;
    const double v = r.metric(plot.metric);
    if (!std::isfinite(v)) {
      ++missing;
    } else if (plot.kind == PlotKind::line && plot.has_none && v == plot.none) {
      ++p.nones;
    } else {
      p.runs.push_back(&r);
    }
  }
  if (missing)
    warn(plot.name, std::to_string(missing) + " matching ok run(s) have no finite " + plot.metric +
                        "; left out");
  return p;
}

// Drops the runs whose value of `what` (by `value`) is not positive, on a log axis.
void drop_non_positive(Runs& runs, const PlotSpec& plot, const std::string& axis,
                       const std::string& what,
                       double (*value)(const StoredRun&, const PlotSpec&)) {
  const size_t before = runs.size();
  runs.erase(std::remove_if(runs.begin(), runs.end(),
                            [&](const StoredRun* r) { return !(value(*r, plot) > 0); }),
             runs.end());
  if (runs.size() < before)
    warn(plot.name, "log " + axis + " axis: skipped " + std::to_string(before - runs.size()) +
                        " run(s) with a non-positive " + what);
}

double x_of(const StoredRun& r, const PlotSpec& p) { return value_of(r.param(p.x)).number; }
double metric_of(const StoredRun& r, const PlotSpec& p) { return r.metric(p.metric); }
double size_of(const StoredRun& r, const PlotSpec& p) { return value_of(r.param(p.size)).number; }

// The runs of `runs` at one x (and line, or heatmap row) value, and their seed values.
Runs runs_at(const Runs& runs, const std::string& x_key, const FigureValue& x,
             const std::vector<std::string>& line_keys, const FigureValue* line,
             const std::string& y_key = "", const FigureValue* y = nullptr) {
  Runs out;
  for (const auto* r : runs)
    if (same_value(value_of(r->param(x_key)), x) &&
        (!line || same_value(line_value(*r, line_keys), *line)) &&
        (!y || same_value(value_of(r->param(y_key)), *y)))
      out.push_back(r);
  return out;
}

SeedValues seeds_of(const Runs& runs, const std::string& metric) {
  SeedValues v;
  for (const auto* r : runs) claims_detail::seed_value_add(*r, metric, v[r->seed]);
  return v;
}

std::vector<FigureValue> values_of(const Runs& runs, const std::string& key) {
  std::vector<FigureValue> seen;
  for (const auto* r : runs) seen.push_back(value_of(r->param(key)));
  return ordered(seen);
}

std::vector<FigureValue> lines_of(const Runs& runs, const std::vector<std::string>& keys) {
  std::vector<FigureValue> seen;
  for (const auto* r : runs) seen.push_back(line_value(*r, keys));
  return ordered(seen);
}

// The filter naming a point's runs: where, x (and y), and the line's keys.
RunFilter point_filter(const PlotSpec& plot, const std::vector<std::string>& line_keys,
                       const StoredRun& one) {
  std::vector<std::string> keys = {plot.x}, texts = {one.param(plot.x)};
  if (!plot.y.empty()) keys.push_back(plot.y), texts.push_back(one.param(plot.y));
  for (const auto& k : line_keys) keys.push_back(k), texts.push_back(one.param(k));
  return filter_with(plot.where, keys, texts);
}

bool same_line(const FigureLine& a, const FigureLine& b) {
  if (a.points.size() != b.points.size()) return false;
  for (size_t i = 0; i < a.points.size(); ++i) {
    const double u = a.points[i].interval.mean, v = b.points[i].interval.mean;
    if (!same_value(a.points[i].x, b.points[i].x) ||
        !(std::fabs(u - v) <= 1e-9 * std::max({std::fabs(u), std::fabs(v), 1e-300})))
      return false;
  }
  return true;
}

FigureData line_data(const PlotSpec& plot, const std::vector<std::string>& swept,
                     const std::vector<StoredRun>& all) {
  FigureData d;
  Picked picked = pick(plot, all);
  Runs& runs = picked.runs;
  d.x_numeric = std::all_of(runs.begin(), runs.end(),
                            [&](const StoredRun* r) { return value_of(r->param(plot.x)).numeric; });
  if (plot.logx && d.x_numeric) drop_non_positive(runs, plot, "x", plot.x, x_of);
  if (plot.logy) drop_non_positive(runs, plot, "y", plot.metric, metric_of);
  if (plot.logx && !d.x_numeric) warn(plot.name, "x '" + plot.x + "' is not numeric; logx ignored");
  if (runs.empty()) {
    d.skipped = "no ok run with a " + plot.metric + " value matches {" +
                claims_detail::filter_text(plot.where) + "}" +
                (picked.nones ? " (" + std::to_string(picked.nones) + " run(s) have " +
                                    plot.metric + " = " + fmt_g(plot.none) + ", none)"
                              : "");
    return d;
  }
  const std::vector<std::string> line_keys = plot_line_keys(plot.line);
  d.title = title_of(plot.title, runs, plot.metric + " vs " + plot.x);
  d.x_label = axis_words(plot.x);
  d.y_label = axis_words(plot.metric);
  d.legend_title = axis_words_list(plot.line);
  d.x_values = values_of(runs, plot.x);
  std::vector<Runs> groups;
  const MetricRange range = metric_range_of(plot.metric);  // the bands' limits, one per plot
  for (const auto& lv : lines_of(runs, line_keys)) {
    FigureLine line;
    line.label = plot.line.empty() ? plot.metric : (lv.label.empty() ? "(empty)" : lv.label);
    for (const auto& xv : d.x_values) {
      const Runs at = runs_at(runs, plot.x, xv, line_keys, &lv);
      if (at.empty()) continue;
      groups.push_back(at);
      FigurePoint p;
      p.x = xv;
      p.filter = point_filter(plot, line_keys, *at[0]);
      point_fill(p, seeds_of(at, plot.metric), at, plot.logy, range);
      line.points.push_back(p);
    }
    for (const auto& earlier : d.lines)
      if (line.same_as.empty() && same_line(earlier, line)) line.same_as = earlier.label;
    if (!line.same_as.empty()) line.label += " (same as " + line.same_as + ")";
    d.lines.push_back(line);
  }
  std::vector<std::string> used = line_keys;
  used.push_back(plot.x);
  d.notes = mean_note(groups, others_of(swept, used, *runs[0]), "point");
  if (const std::string one = one_x_note(plot.x, d.x_values); !one.empty()) d.notes.push_back(one);
  if (picked.nones)
    d.notes.push_back(std::to_string(picked.nones) + " run(s) with " + plot.metric + " = " +
                      fmt_g(plot.none) + " (none) left out");
  d.runs_used = static_cast<int64_t>(runs.size());
  return d;
}

FigureData heatmap_data(const PlotSpec& plot, const std::vector<std::string>& swept,
                        const std::vector<StoredRun>& all) {
  FigureData d;
  const Runs runs = pick(plot, all).runs;
  if (runs.empty()) {
    d.skipped = "no ok run with a " + plot.metric + " value matches {" +
                claims_detail::filter_text(plot.where) + "}";
    return d;
  }
  d.title = title_of(plot.title, runs, plot.metric + " over " + plot.x + " and " + plot.y);
  d.x_label = axis_words(plot.x);
  d.y_label = axis_words(plot.y);
  d.value_label = "mean " + axis_words(plot.metric);
  d.x_values = values_of(runs, plot.x);
  d.y_values = values_of(runs, plot.y);
  d.x_numeric = false;  // both axes categorical
  FigureLine cells;
  std::vector<Runs> groups;
  const MetricRange range = metric_range_of(plot.metric);  // the bands' limits, one per plot
  for (const auto& yv : d.y_values)
    for (const auto& xv : d.x_values) {
      const Runs at = runs_at(runs, plot.x, xv, {}, nullptr, plot.y, &yv);
      if (at.empty()) continue;
      groups.push_back(at);
      FigurePoint p;
      p.x = xv;
      p.y = yv;
      p.filter = point_filter(plot, {}, *at[0]);
      point_fill(p, seeds_of(at, plot.metric), at, false, range);
      cells.points.push_back(p);
    }
  d.lines.push_back(cells);
  d.notes = mean_note(groups, others_of(swept, {plot.x, plot.y}, *runs[0]), "cell");
  d.product_level = plot.product_boundary;
  if (plot.product_boundary > 0) {
    auto positive = [](const std::vector<FigureValue>& vs) {
      return std::all_of(vs.begin(), vs.end(),
                         [](const FigureValue& v) { return v.numeric && v.number > 0; });
    };
    if (!positive(d.x_values) || !positive(d.y_values)) {
      warn(plot.name, "product_boundary needs positive numeric axes; not drawn");
      d.product_level = 0;
    } else {
      for (const auto& p : cells.points)
        if (p.interval.mean >= plot.product_boundary &&
            (d.product_c < 0 || p.x.number * p.y.number < d.product_c))
          d.product_c = p.x.number * p.y.number;
    }
  }
  d.runs_used = static_cast<int64_t>(runs.size());
  return d;
}

FigureData size_needed_data(const PlotSpec& plot, const std::vector<std::string>& swept,
                            const std::vector<StoredRun>& all) {
  for (const auto& r : all) {
    if (r.status != "ok" || !run_matches(r, plot.where)) continue;
    for (const auto* key : {&plot.x, &plot.size})
      if (!value_of(r.param(*key)).numeric)
        throw UserError("plot '" + plot.name + "' (size_needed): " +
                        (key == &plot.x ? "x" : "size") + " key '" + *key +
                        "' has the non-numeric value '" + r.param(*key) + "' (run " + r.run_id +
                        "); x and size must be numbers");
  }
  FigureData d;
  Runs runs = pick(plot, all).runs;
  if (plot.logx) drop_non_positive(runs, plot, "x", plot.x, x_of);
  if (plot.logy) drop_non_positive(runs, plot, "y", plot.size, size_of);
  if (runs.empty()) {
    d.skipped = "no ok run with a " + plot.metric + " value matches {" +
                claims_detail::filter_text(plot.where) + "}";
    return d;
  }
  const bool above = plot.goal == "above";
  const std::string goal = "mean " + plot.metric + (above ? " > " : " < ") + fmt_g(plot.threshold);
  const std::vector<std::string> line_keys = plot_line_keys(plot.line);
  d.title = title_of(plot.title, runs, plot.size + " needed for " + goal);
  d.x_label = axis_words(plot.x);
  d.y_label = "smallest " + axis_words(plot.size) + " with mean " + axis_words(plot.metric) +
              (above ? " > " : " < ") + fmt_g(plot.threshold);
  d.legend_title = axis_words_list(plot.line);
  d.size_key = plot.size;
  d.goal = plot.goal;
  d.threshold = plot.threshold;
  d.x_values = values_of(runs, plot.x);
  for (const auto& s : values_of(runs, plot.size)) d.sizes_tried.push_back(s.number);
  std::vector<Runs> groups;
  for (const auto& lv : lines_of(runs, line_keys)) {
    FigureLine line;
    line.label =
        plot.line.empty() ? "smallest " + plot.size : (lv.label.empty() ? "(empty)" : lv.label);
    // The line's brackets on the grid of every size it tried, as the size claims take them.
    std::map<double, std::map<double, SeedValues>> cells;
    for (const auto& xv : d.x_values) {
      const Runs at = runs_at(runs, plot.x, xv, line_keys, &lv);
      if (at.empty()) continue;
      std::map<double, SeedValues>& by_size = cells[xv.number];
      for (const auto& sv : values_of(at, plot.size)) {
        const Runs group = runs_at(at, plot.size, sv, {}, nullptr);
        groups.push_back(group);
        by_size[sv.number] = seeds_of(group, plot.metric);
      }
      FigurePoint p;
      p.x = xv;
      p.filter = point_filter(plot, line_keys, *at[0]);
      for (const auto* r : at) p.run_ids.push_back(r->run_id);
      line.points.push_back(p);
    }
    const auto brackets =
        claims_detail::size_brackets_on_grid(cells, above, plot.threshold, kFigureConfidence);
    for (FigurePoint& p : line.points) {
      const claims_detail::SizeBracket& b = brackets.at(p.x.number);
      p.size = b.by_mean;
      p.may = b.may;
      p.sure = b.sure;
      p.largest = b.largest;
    }
    d.lines.push_back(line);
  }
  std::vector<std::string> used = line_keys;
  used.push_back(plot.x);
  used.push_back(plot.size);
  d.notes = mean_note(groups, others_of(swept, used, *runs[0]), "size tried");
  if (const std::string one = one_x_note(plot.x, d.x_values); !one.empty()) d.notes.push_back(one);
  d.runs_used = static_cast<int64_t>(runs.size());
  return d;
}

}  // namespace
}  // namespace figure_detail

FigureData figure_data_make(const PlotSpec& plot, const std::vector<std::string>& swept,
                            const std::vector<StoredRun>& runs) {
  using namespace figure_detail;
  if (!plot.metric.empty() && !runs.empty()) {  // a misspelt metric is an error, not a skip
    std::set<std::string> names;
    for (const auto& r : runs)
      for (const auto& [name, v] : r.metrics) names.insert(name);
    if (!names.count(plot.metric)) {
      std::string have;
      for (const auto& n : names) have += (have.empty() ? "" : ", ") + n;
      throw UserError("plot '" + plot.name + "': metric '" + plot.metric +
                      "' is not a metric of any stored run; use one of: " + have);
    }
  }
  FigureData d;
  switch (plot.kind) {  // no default: a new kind without figure data does not compile
    case PlotKind::line: d = line_data(plot, swept, runs); break;
    case PlotKind::heatmap: d = heatmap_data(plot, swept, runs); break;
    case PlotKind::curve: d = curve_data(plot, swept, runs); break;
    case PlotKind::matrix: d = matrix_data(plot, swept, runs); break;
    case PlotKind::size_needed: d = size_needed_data(plot, swept, runs); break;
    case PlotKind::kCount: ATTN_ASSERT(false, "figure_data_make: PlotKind::kCount is not a kind");
  }
  d.name = plot.name;
  d.kind = plot.kind;
  d.logx = plot.logx;
  d.logy = plot.logy;
  d.where = plot.where;
  if (d.kind == PlotKind::line || d.kind == PlotKind::curve)
    for (const auto& line : d.lines)
      if (std::any_of(line.points.begin(), line.points.end(),
                      [](const FigurePoint& p) { return p.banded && p.band_hi > p.band_lo; })) {
        d.notes.push_back(
            band_note(metric_range_of(d.kind == PlotKind::curve ? plot.series : plot.metric)));
        break;
      }
  return d;
}

}  // namespace attn
