// Figure data helpers shared by the plot kinds (figure_data_detail.h): axis values, titles,
// footnotes, per-point statistics.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/log.h"
#include "experiment/figure_data_detail.h"

namespace attn::figure_detail {

FigureValue value_of(const std::string& text) {
  FigureValue v;
  v.text = text;
  v.label = text;
  double x;
  v.numeric = claims_detail::as_number(text, &x) && std::isfinite(x);
  if (v.numeric) v.number = x;
  return v;
}

bool same_value(const FigureValue& a, const FigureValue& b) {
  return a.numeric == b.numeric && (a.numeric ? a.number == b.number : a.text == b.text);
}

std::vector<FigureValue> ordered(const std::vector<FigureValue>& seen) {
  std::vector<FigureValue> out;
  for (const auto& v : seen)
    if (std::none_of(out.begin(), out.end(),
                     [&](const FigureValue& o) { return same_value(o, v); }))
      out.push_back(v);
  if (std::all_of(out.begin(), out.end(), [](const FigureValue& v) { return v.numeric; }))
    std::stable_sort(out.begin(), out.end(), [](const FigureValue& a, const FigureValue& b) {
      return a.number < b.number;
    });
  return out;
}

std::string fmt_g(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string pretty(const std::string& text) {
  const FigureValue v = value_of(text);
  if (v.numeric) return fmt_g(v.number);
  return text.empty() ? "(empty)" : text;
}

bool has_param(const StoredRun& run, const std::string& key) {
  if (key == "seed") return true;
  return std::any_of(run.params.begin(), run.params.end(),
                     [&](const auto& kv) { return kv.first == key; });
}

FigureValue line_value(const StoredRun& run, const std::vector<std::string>& keys) {
  if (keys.size() == 1) return value_of(run.param(keys[0]));
  std::string joined;
  for (const auto& k : keys) joined += (joined.empty() ? "" : ", ") + pretty(run.param(k));
  FigureValue v;
  v.text = v.label = joined;
  return v;
}

RunFilter filter_with(RunFilter where, const std::vector<std::string>& keys,
                      const std::vector<std::string>& texts) {
  for (size_t i = 0; i < keys.size(); ++i) where[keys[i]] = {ParamValue(texts[i])};
  return where;
}

std::string title_of(const std::string& title, const Runs& runs, const std::string& fallback) {
  const std::string t = title.empty() ? fallback : title;
  std::string out;
  size_t at = 0;
  while (at < t.size()) {
    const size_t open = t.find('{', at);
    const size_t close = open == std::string::npos ? open : t.find_first_of("{}", open + 1);
    if (close == std::string::npos || t[close] != '}' || close == open + 1) {
      const size_t next = open == std::string::npos ? t.size() : open + 1;
      out += t.substr(at, next - at);
      at = next;
      continue;
    }
    const std::string key = t.substr(open + 1, close - open - 1);
    out += t.substr(at, open - at);
    if (runs.empty() || !has_param(*runs[0], key)) {
      out += "{" + key + "}";
    } else {
      std::vector<FigureValue> seen;
      for (const auto* r : runs) seen.push_back(value_of(r->param(key)));
      std::string values;
      for (const auto& v : ordered(seen)) values += (values.empty() ? "" : ", ") + pretty(v.text);
      out += values;
    }
    at = close + 1;
  }
  return out;
}

std::vector<std::string> mean_note(const std::vector<Runs>& groups,
                                   const std::vector<std::string>& others,
                                   const std::string& what) {
  std::set<std::string> varying;
  for (const auto& group : groups)
    for (const auto& key : others) {
      std::set<std::string> values;
      for (const auto* r : group) values.insert(r->param(key));
      if (values.size() > 1) varying.insert(key);
    }
  if (varying.empty()) return {};
  std::string keys;
  for (const auto& k : varying) keys += (keys.empty() ? "" : ", ") + k;
  return {"each " + what + ": mean over seeds and " + keys};
}

std::vector<std::string> others_of(const std::vector<std::string>& swept,
                                   const std::vector<std::string>& used, const StoredRun& first) {
  std::vector<std::string> out;
  for (const auto& k : swept)
    if (std::find(used.begin(), used.end(), k) == used.end() && has_param(first, k))
      out.push_back(k);
  return out;
}

std::string one_x_note(const std::string& x_key, const std::vector<FigureValue>& xs) {
  if (xs.size() != 1) return "";
  return "only " + x_key + " = " + pretty(xs[0].label) + " ran: one point per line";
}

std::string band_note(MetricRange range) {
  std::string cut;
  switch (range) {
    case MetricRange::any: break;
    case MetricRange::nonnegative: cut = "; cut at 0, the metric's least value"; break;
    case MetricRange::unit_interval: cut = "; cut to [0, 1], the metric's range"; break;
  }
  return "band: the claims' bounds on the mean over seeds (each one-sided at " +
         fmt_g(100 * kFigureConfidence) + "%; one seed: its test samples' spread" + cut + ")";
}

void point_fill(FigurePoint& p, const claims_detail::SeedValues& v, const Runs& runs, bool logy,
                MetricRange range) {
  const Sample s = claims_detail::sample_of(v);
  p.interval = sample_interval(s, kFigureConfidence);
  if (s.values.size() >= 2) {
    double ss = 0;
    for (double x : s.values) ss += (x - p.interval.mean) * (x - p.interval.mean);
    p.sd = std::sqrt(ss / static_cast<double>(s.values.size() - 1));
  }
  p.banded = p.interval.ok;
  p.band_lo = p.interval.lo;
  p.band_hi = p.interval.hi;
  switch (range) {
    case MetricRange::any: break;
    case MetricRange::unit_interval: p.band_hi = std::min(p.band_hi, 1.0); [[fallthrough]];
    case MetricRange::nonnegative: p.band_lo = std::max(p.band_lo, 0.0); break;
  }
  if (logy && p.band_lo <= 0) p.band_lo = *std::min_element(s.values.begin(), s.values.end());
  for (const auto* r : runs) p.run_ids.push_back(r->run_id);
}

void warn(const std::string& plot, const std::string& text) {
  log_warn("attnlab: plot '%s': %s\n", plot.c_str(), text.c_str());
}

}  // namespace attn::figure_detail
