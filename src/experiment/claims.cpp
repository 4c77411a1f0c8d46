// Claim evaluation over stored runs.
#include "experiment/claims.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace attn {
namespace {

bool as_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return *end == '\0';
}

bool value_equal(const std::string& run_value, const ParamValue& wanted) {
  const std::string w = param_value_text(wanted);
  double a, b;
  if (as_number(run_value, &a) && as_number(w, &b)) return a == b;
  return run_value == w;
}

std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string filter_text(const RunFilter& f) {
  if (f.empty()) return "all runs";
  std::string out;
  for (const auto& [k, values] : f) {
    out += (out.empty() ? "" : ", ") + k + "=";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "|" : "") + param_value_text(values[i]);
  }
  return out;
}

struct Mean {
  double value = NAN;
  int count = 0;
};

Mean mean_over(const std::vector<StoredRun>& runs, const RunFilter& filter,
               const std::string& metric) {
  double sum = 0;
  int count = 0;
  for (const auto& r : runs) {
    if (r.status != "ok" || !run_matches(r, filter)) continue;
    const double v = r.metric(metric);
    if (std::isnan(v)) continue;
    sum += v;
    ++count;
  }
  return {count ? sum / count : NAN, count};
}

// The smallest value of the size key whose mean metric reaches the goal, per value of `along`
// (both numeric), over ok runs matching `filter`. not_reached: no size tried at that value
// reaches it; largest: the largest size tried there.
struct SizeNeeded {
  bool reached = false;
  double size = NAN, largest = NAN;
};

std::map<double, SizeNeeded> size_needed_along(const std::vector<StoredRun>& runs,
                                               const ClaimSpec& c) {
  // along value -> size -> (sum, count)
  std::map<double, std::map<double, std::pair<double, int>>> cells;
  for (const auto& run : runs) {
    if (run.status != "ok" || !run_matches(run, c.where)) continue;
    double x, size;
    const double v = run.metric(c.metric);
    if (!as_number(run.param(c.along), &x) || !as_number(run.param(c.size), &size) ||
        std::isnan(v))
      continue;
    auto& cell = cells[x][size];
    cell.first += v;
    cell.second += 1;
  }
  std::map<double, SizeNeeded> out;
  for (const auto& [x, by_size] : cells) {
    SizeNeeded n;
    n.largest = by_size.rbegin()->first;
    for (const auto& [size, sc] : by_size) {  // increasing size
      const double mean = sc.first / sc.second;
      if (c.goal == "above" ? mean > c.threshold : mean < c.threshold) {
        n.reached = true;
        n.size = size;
        break;
      }
    }
    out[x] = n;
  }
  return out;
}

std::string size_text(const SizeNeeded& n) {
  return n.reached ? fmt_num(n.size) : "none up to " + fmt_num(n.largest);
}

// size_increasing / size_flat (see claims.h).
ClaimResult size_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs) {
  ClaimResult r{c.id, c.text, false, ""};
  const auto needed = size_needed_along(runs, c);
  const std::string what = "smallest " + c.size + " with mean " + c.metric +
                           (c.goal == "above" ? " > " : " < ") + fmt_num(c.threshold) + " over {" +
                           filter_text(c.where) + "}";
  if (needed.size() < 2) {
    r.detail = "needs finished runs at two or more values of " + c.along + " (numeric " + c.size +
               ", " + c.metric + ") matching " + filter_text(c.where) + "; found " +
               std::to_string(needed.size());
    return r;
  }
  std::string seq;
  for (const auto& [x, n] : needed)
    seq += (seq.empty() ? "" : ", ") + c.along + "=" + fmt_num(x) + ": " + size_text(n);
  std::vector<SizeNeeded> v;
  for (const auto& [x, n] : needed) v.push_back(n);
  if (c.type == "size_flat") {
    // Every value reached, and largest / smallest needed size <= factor.
    bool all = true;
    double lo = INFINITY, hi = 0;
    for (const auto& n : v) {
      all = all && n.reached;
      if (n.reached) {
        lo = std::min(lo, n.size);
        hi = std::max(hi, n.size);
      }
    }
    r.pass = all && hi <= c.factor * lo;
    r.detail = what + (all ? " varies by a factor " + fmt_num(hi / lo) + (r.pass ? " <= " : " > ") +
                                 fmt_num(c.factor)
                           : " is not reached at every value") +
               " along " + c.along + ": " + seq;
    return r;
  }
  // size_increasing: never smaller than at the previous value (an unreached value counts as
  // larger than every size tried), and larger at the last value than at the first, which must
  // be reached.
  auto rank = [](const SizeNeeded& n) { return n.reached ? n.size : INFINITY; };
  bool pass = v.front().reached && rank(v.back()) > rank(v.front());
  for (size_t k = 1; k < v.size(); ++k) {
    if (!v[k - 1].reached && !v[k].reached) continue;  // both beyond the sizes tried
    if (rank(v[k]) < rank(v[k - 1])) pass = false;
  }
  r.pass = pass;
  r.detail = what + (pass ? " increases" : " does not increase") + " along " + c.along + ": " + seq;
  return r;
}

}  // namespace

bool run_matches(const StoredRun& run, const RunFilter& filter) {
  for (const auto& [key, values] : filter) {
    const std::string v = run.param(key);
    bool any = false;
    for (const auto& wanted : values) any = any || value_equal(v, wanted);
    if (!any) return false;
  }
  return true;
}

ClaimResult claim_evaluate(const ClaimSpec& c, const std::vector<StoredRun>& runs) {
  if (c.type == "size_increasing" || c.type == "size_flat") return size_claim(c, runs);
  ClaimResult r{c.id, c.text, false, ""};
  if (c.type == "less_than") {
    // `where` restricts both sides.
    RunFilter fa = c.a, fb = c.b;
    for (const auto& [k, v] : c.where) {
      fa.emplace(k, v);
      fb.emplace(k, v);
    }
    const Mean a = mean_over(runs, fa, c.metric), b = mean_over(runs, fb, c.metric);
    if (a.count == 0 || b.count == 0) {
      r.detail = "no finished runs with " + c.metric + " match " +
                 (a.count == 0 ? filter_text(fa) : filter_text(fb));
      return r;
    }
    r.pass = a.value < c.factor * b.value;
    r.detail = "mean " + c.metric + " over {" + filter_text(fa) + "} (" + std::to_string(a.count) +
               " runs) = " + fmt_num(a.value) + (r.pass ? " < " : " >= ") +
               (c.factor != 1.0 ? fmt_num(c.factor) + " x " : "") + fmt_num(b.value) + " over {" +
               filter_text(fb) + "} (" + std::to_string(b.count) + " runs)";
    return r;
  }
  if (c.type == "below" || c.type == "above") {
    const Mean m = mean_over(runs, c.where, c.metric);
    if (m.count == 0) {
      r.detail = "no finished runs with " + c.metric + " match " + filter_text(c.where);
      return r;
    }
    r.pass = c.type == "below" ? m.value < c.threshold : m.value > c.threshold;
    r.detail = "mean " + c.metric + " over {" + filter_text(c.where) + "} (" +
               std::to_string(m.count) + " runs) = " + fmt_num(m.value) +
               (c.type == "below" ? (r.pass ? " < " : " >= ") : (r.pass ? " > " : " <= ")) +
               fmt_num(c.threshold);
    return r;
  }
  // Means per value of `along` (numeric order) over runs matching `filter`.
  auto means_along = [&](const RunFilter& filter) {
    std::map<double, std::pair<double, int>> by_value;  // along value -> (sum, count)
    for (const auto& run : runs) {
      if (run.status != "ok" || !run_matches(run, filter)) continue;
      double x;
      const double v = run.metric(c.metric);
      if (!as_number(run.param(c.along), &x) || std::isnan(v)) continue;
      by_value[x].first += v;
      by_value[x].second += 1;
    }
    std::map<double, double> means;
    for (const auto& [x, sc] : by_value) means[x] = sc.first / sc.second;
    return means;
  };
  if (c.type == "ratio_increasing") {
    RunFilter fa = c.a, fb = c.b;
    for (const auto& [k, v] : c.where) {
      fa.emplace(k, v);
      fb.emplace(k, v);
    }
    const auto ma = means_along(fa), mb = means_along(fb);
    std::vector<double> ratios;
    std::string seq;
    for (const auto& [x, a] : ma) {
      const auto it = mb.find(x);
      if (it == mb.end() || it->second == 0) continue;
      ratios.push_back(a / it->second);
      seq += (seq.empty() ? "" : ", ") + c.along + "=" + fmt_num(x) + ": " + fmt_num(ratios.back());
    }
    if (ratios.size() < 2) {
      r.detail = "needs runs of both {" + filter_text(fa) + "} and {" + filter_text(fb) +
                 "} at two or more values of " + c.along;
      return r;
    }
    bool pass = ratios.back() > ratios.front();
    for (size_t k = 1; k < ratios.size(); ++k)
      if (ratios[k] < ratios[k - 1] * (1 - c.tolerance)) pass = false;
    r.pass = pass;
    r.detail = "ratio of mean " + c.metric + " {" + filter_text(fa) + "} / {" + filter_text(fb) +
               "} " + (pass ? "increases" : "does not increase") + " along " + c.along + ": " + seq;
    return r;
  }
  std::map<double, std::pair<double, int>> by_value;
  for (const auto& [x, m] : means_along(c.where)) by_value[x] = {m, 1};
  if (by_value.size() < 2) {
    r.detail = "needs finished runs at two or more values of " + c.along + " matching " +
               filter_text(c.where) + "; found " + std::to_string(by_value.size());
    return r;
  }
  const bool decreasing = c.type == "decreasing";
  std::vector<double> means;
  std::string seq;
  for (const auto& [x, sc] : by_value) {
    means.push_back(sc.first / sc.second);
    seq += (seq.empty() ? "" : ", ") + c.along + "=" + fmt_num(x) + ": " + fmt_num(means.back());
  }
  if (c.type == "flat") {
    const auto [lo, hi] = std::minmax_element(means.begin(), means.end());
    r.pass = *hi - *lo <= c.threshold;
    r.detail = "mean " + c.metric + " over {" + filter_text(c.where) + "} spreads by " +
               fmt_num(*hi - *lo) + (r.pass ? " <= " : " > ") + fmt_num(c.threshold) +
               " along " + c.along + ": " + seq;
    return r;
  }
  bool pass = decreasing ? means.back() < means.front() : means.back() > means.front();
  for (size_t k = 1; k < means.size(); ++k) {
    if (decreasing && means[k] > means[k - 1] * (1 + c.tolerance)) pass = false;
    if (!decreasing && means[k] < means[k - 1] * (1 - c.tolerance)) pass = false;
  }
  r.pass = pass;
  r.detail = "mean " + c.metric + " over {" + filter_text(c.where) + "} " +
             (pass ? "is " : "is not ") + c.type + " along " + c.along + ": " + seq;
  return r;
}

}  // namespace attn
