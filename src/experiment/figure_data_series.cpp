// Figure data of the series plots (figure_data.h): curve (a series' mean over seeds per step,
// one line per `line` value) and matrix (one run's series as an S x S image, step k at entry
// (k / S, k % S)).
#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "experiment/axis_words.h"
#include "experiment/figure_data_detail.h"

namespace attn::figure_detail {
namespace {

// UserError unless some run logged `series`.
void require_series(const PlotSpec& plot, const std::vector<StoredRun>& runs) {
  std::set<std::string> logged;
  for (const auto& r : runs)
    for (const auto& p : r.series) logged.insert(p.series);
  if (logged.count(plot.series)) return;
  std::string names;
  for (const auto& n : logged) names += (names.empty() ? "" : ", ") + n;
  throw UserError("plot '" + plot.name + "': no run logged a series '" + plot.series +
                  "'; logged: " + (names.empty() ? "none" : names));
}

bool logged(const StoredRun& r, const std::string& series) {
  return std::any_of(r.series.begin(), r.series.end(),
                     [&](const FitLog::Point& p) { return p.series == series; });
}

}  // namespace

FigureData curve_data(const PlotSpec& plot, const std::vector<std::string>& swept,
                      const std::vector<StoredRun>& runs) {
  require_series(plot, runs);
  const std::vector<std::string> line_keys = plot_line_keys(plot.line);
  // line value -> step -> seed values, and the runs of each line.
  std::vector<FigureValue> line_values;
  std::vector<std::map<int64_t, std::pair<claims_detail::SeedValues, Runs>>> steps;
  std::vector<Runs> line_runs;
  int64_t missing = 0, dropped = 0;
  for (const auto& r : runs) {
    if (r.status != "ok" || !run_matches(r, plot.where)) continue;
    const FigureValue lv = plot.line.empty() ? FigureValue{} : line_value(r, line_keys);
    size_t li = 0;
    while (li < line_values.size() && !same_value(line_values[li], lv)) ++li;
    bool used = false;
    for (const auto& p : r.series) {
      if (p.series != plot.series) continue;
      if (!std::isfinite(p.value)) {
        ++missing;
        continue;
      }
      if ((plot.logx && p.step <= 0) || (plot.logy && !(p.value > 0))) {
        ++dropped;
        continue;
      }
      if (li == line_values.size()) {
        line_values.push_back(lv);
        steps.emplace_back();
        line_runs.emplace_back();
      }
      auto& [seeds, step_runs] = steps[li][p.step];
      if (step_runs.empty() || step_runs.back() != &r) step_runs.push_back(&r);
      claims_detail::SeedValue& v = seeds[r.seed];
      v.sum += p.value;
      ++v.runs;
      v.has_se = false;
      used = true;
    }
    if (used) line_runs[li].push_back(&r);
  }
  if (missing)
    warn(plot.name,
         std::to_string(missing) + " point(s) of " + plot.series + " are not finite; left out");
  if (dropped)
    warn(plot.name, "log axis: skipped " + std::to_string(dropped) +
                        " point(s) with a non-positive " + (plot.logx ? "step or " : "") +
                        plot.series);
  FigureData d;
  if (line_values.empty()) {
    d.skipped = "no ok run with a series " + plot.series + " value matches {" +
                claims_detail::filter_text(plot.where) + "}";
    return d;
  }
  Runs all;
  for (const auto& lr : line_runs) all.insert(all.end(), lr.begin(), lr.end());
  d.title = title_of(plot.title, all, plot.series + " vs step");
  d.x_label = axis_words("step");
  d.y_label = axis_words(plot.series);
  d.legend_title = axis_words_list(plot.line);
  const std::vector<FigureValue> order = ordered(line_values);
  const MetricRange range = metric_range_of(plot.series);  // the bands' limits, one per plot
  for (const auto& lv : order) {
    size_t li = 0;
    while (!same_value(line_values[li], lv)) ++li;
    FigureLine line;
    line.label = plot.line.empty() ? plot.series : (lv.label.empty() ? "(empty)" : lv.label);
    for (const auto& [step, at] : steps[li]) {
      FigurePoint p;
      p.step = step;
      p.x = value_of(std::to_string(step));
      p.filter = filter_with(plot.where, line_keys, [&] {
        std::vector<std::string> t;
        for (const auto& k : line_keys) t.push_back(line_runs[li][0]->param(k));
        return t;
      }());
      point_fill(p, at.first, at.second, plot.logy, range);
      line.points.push_back(p);
    }
    d.lines.push_back(line);
  }
  d.notes = mean_note(line_runs, others_of(swept, line_keys, *all[0]), "line");
  d.runs_used = static_cast<int64_t>(all.size());
  return d;
}

FigureData matrix_data(const PlotSpec& plot, const std::vector<std::string>& swept,
                       const std::vector<StoredRun>& runs) {
  require_series(plot, runs);
  FigureData d;
  for (const auto& r : runs) {
    if (r.status != "ok" || !run_matches(r, plot.where) || !logged(r, plot.series)) continue;
    std::vector<const FitLog::Point*> points, mark;
    for (const auto& p : r.series) {
      if (p.series == plot.series) points.push_back(&p);
      if (!plot.mark.empty() && p.series == plot.mark) mark.push_back(&p);
    }
    const size_t n = points.size();
    const auto size = static_cast<size_t>(std::llround(std::sqrt(static_cast<double>(n))));
    if (size * size != n)
      throw UserError("plot '" + plot.name + "': series '" + plot.series + "' of run " + r.run_id +
                      " has " + std::to_string(n) + " points, not a square number; a matrix plot "
                      "needs S*S points (step k is entry (k // S, k % S))");
    std::vector<int64_t> seen;
    for (const auto* p : points) seen.push_back(p->step);
    std::sort(seen.begin(), seen.end());
    for (size_t k = 0; k < n; ++k)
      if (seen[k] != static_cast<int64_t>(k))
        throw UserError("plot '" + plot.name + "': series '" + plot.series + "' of run " +
                        r.run_id + " must have steps 0 .. " + std::to_string(n - 1) +
                        ", each once (step k is entry (k // S, k % S))");
    d.matrix.assign(size, std::vector<double>(size, NAN));
    for (const auto* p : points)
      d.matrix[p->step / size][p->step % size] = std::isfinite(p->value) ? p->value : NAN;
    if (mark.size() == n) {
      d.has_marked = true;
      std::set<std::pair<int64_t, int64_t>> cells;
      for (const auto* p : mark)
        if (p->value != 0 && p->step >= 0 && p->step < static_cast<int64_t>(n))
          cells.emplace(p->step / static_cast<int64_t>(size), p->step % static_cast<int64_t>(size));
      d.marked.assign(cells.begin(), cells.end());
    }
    std::string label;
    for (const auto& k : swept)
      if (has_param(r, k)) label += (label.empty() ? "" : ", ") + k + "=" + pretty(r.param(k));
    d.run_label = label + (label.empty() ? "" : ", ") + "seed=" + std::to_string(r.seed);
    d.run_id = r.run_id;
    d.mark = plot.mark;
    d.title = title_of(plot.title, {&r}, plot.series);
    d.x_label = "position j (column)";
    d.y_label = "position i (row)";
    d.value_label = plot.series;
    if (!plot.mark.empty() && !d.has_marked)
      d.notes.push_back(plot.mark + " not logged by this run: no entries outlined");
    d.runs_used = 1;
    return d;
  }
  d.skipped = "no ok run with a series " + plot.series + " value matches {" +
              claims_detail::filter_text(plot.where) + "}";
  return d;
}

}  // namespace attn::figure_detail
