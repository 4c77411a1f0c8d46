// Internal to the figure data (figure_data*.cpp): axis values, titles, footnotes and the
// per-point statistics shared by the plot kinds.
#pragma once

#include <string>
#include <vector>

#include "experiment/axis_words.h"
#include "experiment/claims_evidence.h"
#include "experiment/figure_data.h"

namespace attn::figure_detail {

using Runs = std::vector<const StoredRun*>;

// A run's value text as an axis value (numeric when it is a finite number).
FigureValue value_of(const std::string& text);
bool same_value(const FigureValue& a, const FigureValue& b);
// Distinct values in first-seen order, sorted by number when all are numeric.
std::vector<FigureValue> ordered(const std::vector<FigureValue>& seen);
// A number with 6 significant digits ("%g"); text unchanged ("(empty)" for "").
std::string pretty(const std::string& text);
std::string fmt_g(double v);

bool has_param(const StoredRun& run, const std::string& key);
// A run's line value: its one line key's value, or several keys' values joined by ", ".
FigureValue line_value(const StoredRun& run, const std::vector<std::string>& keys);
// The filter of one point: where, and each key = the value's text.
RunFilter filter_with(RunFilter where, const std::vector<std::string>& keys,
                      const std::vector<std::string>& texts);

// The plot's title (or `fallback`) with each {key} replaced by the distinct values of that key
// among `runs` (ordered), joined by ", "; a key no run has stays as written.
std::string title_of(const std::string& title, const Runs& runs, const std::string& fallback);
// "each WHAT: mean over seeds and K, ..." for the swept keys among `others` (present in the
// runs) whose value differs between the runs of some group; nothing when none does.
std::vector<std::string> mean_note(const std::vector<Runs>& groups,
                                   const std::vector<std::string>& others, const std::string& what);
// The swept keys not in `used` that the runs have.
std::vector<std::string> others_of(const std::vector<std::string>& swept,
                                   const std::vector<std::string>& used, const StoredRun& first);
// "only X = V ran: one point per line" for a single x value; "" otherwise.
std::string one_x_note(const std::string& x_key, const std::vector<FigureValue>& xs);
// The footnote line of a plot whose bands are the claims' bounds.
std::string band_note(MetricRange range);

// Fills a point's mean, bounds, sd, band and run ids from its runs' seed values.
void point_fill(FigurePoint& p, const claims_detail::SeedValues& v, const Runs& runs, bool logy,
                MetricRange range);
// A warning "attnlab: plot 'NAME': TEXT".
void warn(const std::string& plot, const std::string& text);

// figure_data_series.cpp: curve and matrix plots (the runs' series).
FigureData curve_data(const PlotSpec& plot, const std::vector<std::string>& swept,
                      const std::vector<StoredRun>& runs);
FigureData matrix_data(const PlotSpec& plot, const std::vector<std::string>& swept,
                       const std::vector<StoredRun>& runs);

}  // namespace attn::figure_detail
