// Claim verdicts over stored runs: evidence collection, wording, the point claims (below,
// above, less_than), and claim_evaluate (the kind's row in claim_kinds.cpp names its
// function). Trend claims in claims_trend.cpp, size claims in claims_size.cpp; the rules in
// claims.h.
#include "experiment/claims.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "experiment/claim_kinds.h"
#include "experiment/claims_evidence.h"
#include "train/metrics.h"

namespace attn {
namespace claims_detail {

bool as_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return *end == '\0';
}

std::string fmt_num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string fmt_near(double v, double bar) {
  char buf[40], bar_buf[40];
  for (int digits = 4; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    std::snprintf(bar_buf, sizeof bar_buf, "%.*g", digits, bar);
    if (v == bar || std::string(buf) != bar_buf) break;
  }
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

std::string level_text(double confidence) { return fmt_num(100 * confidence) + "%"; }

RunFilter filter_and(const RunFilter& side, const RunFilter& where) {
  RunFilter out = side;
  for (const auto& [k, v] : where) out.emplace(k, v);
  return out;
}

RunFilter filter_at(const RunFilter& filter, const std::string& key, double x) {
  RunFilter out = filter;
  out[key] = {ParamValue(x)};
  return out;
}

Matches runs_matching(const std::vector<StoredRun>& runs, const RunFilter& filter) {
  Matches m;
  for (const auto& r : runs) {
    if (!run_matches(r, filter)) continue;
    ++m.any;
    m.ok += r.status == "ok";
  }
  return m;
}

void seed_value_add(const StoredRun& r, const std::string& metric, SeedValue& v) {
  const double value = r.metric(metric);
  v.sum += value;
  ++v.runs;
  double se = r.metric(metric + "_se");
  const double samples = r.metric("test_samples");
  // A fraction of 0/1 outcomes whose test samples all agree is not certain (claim_stats.h).
  const bool fraction =
      metric.rfind("test_", 0) == 0 && metric_is_sample_fraction(metric.substr(5));
  if (fraction && std::isfinite(se) && std::isfinite(value) && std::isfinite(samples) &&
      samples >= 2)
    se = fraction_standard_error(value, samples, se);
  if (std::isfinite(se) && std::isfinite(samples) && samples >= 2) {
    v.se_sq += se * se;
    v.df = v.runs == 1 ? samples - 1 : std::min(v.df, samples - 1);
  } else {
    v.has_se = false;
  }
}

SeedValues seed_values(const std::vector<StoredRun>& runs, const RunFilter& filter,
                       const std::string& metric, const std::function<bool(double)>& keep) {
  SeedValues out;
  for (const auto& r : runs) {
    const double v = r.metric(metric);
    if (r.status == "ok" && run_matches(r, filter) && !std::isnan(v) && (!keep || keep(v)))
      seed_value_add(r, metric, out[r.seed]);
  }
  return out;
}

std::map<double, SeedValues> seed_values_along(const std::vector<StoredRun>& runs,
                                               const RunFilter& filter, const std::string& metric,
                                               const std::string& along) {
  std::map<double, SeedValues> out;
  double x;
  for (const auto& r : runs)
    if (r.status == "ok" && run_matches(r, filter) && !std::isnan(r.metric(metric)) &&
        as_number(r.param(along), &x))
      seed_value_add(r, metric, out[x][r.seed]);
  return out;
}

std::vector<double> along_values(const std::vector<StoredRun>& runs, const RunFilter& filter,
                                 const std::string& along) {
  std::set<double> xs;
  double x;
  for (const auto& r : runs)
    if (run_matches(r, filter) && as_number(r.param(along), &x)) xs.insert(x);
  return {xs.begin(), xs.end()};
}

bool along_values_enough(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                         const RunFilter& scope, ClaimResult* out) {
  const std::vector<double> xs = along_values(runs, scope, c.along);
  if (xs.size() >= 2) return true;
  *out = result(c, Verdict::NotEvaluated,
                "not evaluated at this size: the runs matching {" + filter_text(scope) + "} hold " +
                    (xs.empty() ? "no value" : "one value (" + fmt_num(xs[0]) + ")") + " of " +
                    c.along + "; the claim needs two or more");
  return false;
}

bool along_values_finished(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                           const RunFilter& scope, ClaimResult* out) {
  std::map<double, bool> finished;  // along value -> some matching run finished
  double x;
  for (const auto& r : runs)
    if (run_matches(r, scope) && as_number(r.param(c.along), &x))
      finished[x] = finished[x] || r.status == "ok";
  std::string failed;
  for (const auto& [value, ok] : finished)
    if (!ok) failed += (failed.empty() ? "" : ", ") + fmt_num(value);
  if (failed.empty()) return true;
  *out = result(c, Verdict::Inconclusive,
                "every run matching {" + filter_text(scope) + "} at " + c.along + " = " + failed +
                    " failed; the claim needs a finished run at each value of " + c.along);
  return false;
}

Sample sample_of(const SeedValues& v) {
  Sample s;
  for (const auto& [seed, sv] : v) s.values.push_back(sv.value());
  if (v.size() == 1) {
    const SeedValue& only = v.begin()->second;
    if (only.has_se) {
      s.se_hint = std::sqrt(only.se_sq) / only.runs;  // the mean of `runs` independent means
      s.df_hint = only.df;
    }
  }
  return s;
}

std::string interval_text(const Interval& iv, double bar, double confidence) {
  const std::string seeds = std::to_string(iv.seeds) + (iv.seeds == 1 ? " seed" : " seeds");
  if (!iv.ok)
    return "= " + fmt_near(iv.mean, bar) + " (" + seeds + ": no spread to judge it by)";
  return "= " + fmt_near(iv.mean, bar) + ", " + level_text(confidence) + " bounds [" +
         fmt_near(iv.lo, bar) + ", " + fmt_near(iv.hi, bar) + "] over " + seeds +
         (iv.seeds == 1 ? " (its test samples' spread)" : "");
}

Verdict verdict_vs(const Interval& iv, double bar, bool above, double confidence,
                   std::string* words) {
  const double margin = above ? iv.mean - bar : bar - iv.mean;
  *words = "margin " + fmt_num(margin);
  if (!iv.ok) {
    *words += "; one seed without a standard error decides nothing (add seeds)";
    return Verdict::Inconclusive;
  }
  const bool holds = above ? iv.lo > bar : iv.hi < bar;
  const bool fails = above ? iv.hi <= bar : iv.lo >= bar;
  if (holds) return Verdict::Pass;
  if (fails) return Verdict::Fail;
  const int need = seeds_to_decide(iv, bar, confidence);
  if (iv.seeds == 1)
    *words += "; more seeds or test samples would decide it";
  else if (need > 0)
    *words += "; about " + std::to_string(need) + " seeds would decide it at this spread";
  else
    *words += "; the mean sits on the bar: no number of seeds would decide it";
  return Verdict::Inconclusive;
}

ClaimResult result(const ClaimSpec& c, Verdict v, std::string detail) {
  return ClaimResult{c.id, c.text, v, std::move(detail)};
}

namespace {

// Why a filter's evidence is missing: NOT EVALUATED when no run of this size matches at all,
// INCONCLUSIVE when runs match but none finished.
ClaimResult missing(const ClaimSpec& c, const RunFilter& filter, const Matches& m) {
  if (m.any == 0)
    return result(c, Verdict::NotEvaluated,
                  "not evaluated at this size: no run matches {" + filter_text(filter) + "}");
  return result(c, Verdict::Inconclusive,
                "all " + std::to_string(m.any) + " runs matching {" + filter_text(filter) +
                    "} failed or lack " + c.metric);
}

}  // namespace

// below / above.
ClaimResult level_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells) {
  const SeedValues v = seed_values(runs, c.where, c.metric);
  if (v.empty()) return missing(c, c.where, runs_matching(runs, c.where));
  const bool above = c.type == ClaimKind::above;
  const Interval iv = sample_interval(sample_of(v), c.confidence);
  if (cells) cells->push_back(ClaimCell{c.where, iv, false, 0, 0});
  std::string words;
  const Verdict verdict = verdict_vs(iv, c.threshold, above, c.confidence, &words);
  return result(c, verdict,
                "mean " + c.metric + " over {" + filter_text(c.where) + "} " +
                    interval_text(iv, c.threshold, c.confidence) + "; claim: " +
                    (above ? "> " : "< ") + fmt_num(c.threshold) + ", " + words);
}

namespace {

// Welch's interval for mean(a) − factor · mean(b) from unpaired seeds.
Interval welch(const Interval& a, const Interval& b, double factor, double confidence) {
  Interval d;
  d.seeds = std::min(a.seeds, b.seeds);
  d.mean = a.mean - factor * b.mean;
  if (!a.ok || !b.ok) return d;
  const double va = a.se * a.se, vb = factor * factor * b.se * b.se;
  d.se = std::sqrt(va + vb);
  if (!(d.se > 0)) {
    d.ok = true;
    d.lo = d.hi = d.mean;
    return d;
  }
  d.df = (va + vb) * (va + vb) / (va * va / a.df + vb * vb / b.df);
  const double half = student_t_quantile(confidence, d.df) * d.se;
  d.ok = true;
  d.lo = d.mean - half;
  d.hi = d.mean + half;
  return d;
}

}  // namespace

// less_than: mean(a) < factor · mean(b).
ClaimResult less_than_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells) {
  const RunFilter fa = filter_and(c.a, c.where), fb = filter_and(c.b, c.where);
  const SeedValues va = seed_values(runs, fa, c.metric), vb = seed_values(runs, fb, c.metric);
  if (va.empty()) return missing(c, fa, runs_matching(runs, fa));
  if (vb.empty()) return missing(c, fb, runs_matching(runs, fb));
  // Paired by seed when the two sides share two or more seeds (or are one shared seed).
  SeedValues diff;
  for (const auto& [seed, a] : va) {
    const auto it = vb.find(seed);
    if (it == vb.end()) continue;
    SeedValue d;
    d.sum = a.value() - c.factor * it->second.value();
    d.runs = 1;
    d.has_se = a.has_se && it->second.has_se;
    d.se_sq = a.se_sq / (a.runs * a.runs) +
              c.factor * c.factor * it->second.se_sq / (it->second.runs * it->second.runs);
    d.df = std::min(a.df, it->second.df);
    diff[seed] = d;
  }
  const Interval ia = sample_interval(sample_of(va), c.confidence);
  const Interval ib = sample_interval(sample_of(vb), c.confidence);
  if (cells) {
    cells->push_back(ClaimCell{fa, ia, false, 0, 0});
    cells->push_back(ClaimCell{fb, ib, false, 0, 0});
  }
  const bool paired = diff.size() >= 2 || (va.size() == 1 && vb.size() == 1 && diff.size() == 1);
  const Interval d = paired ? sample_interval(sample_of(diff), c.confidence)
                            : welch(ia, ib, c.factor, c.confidence);
  std::string words;
  const Verdict verdict = verdict_vs(d, 0, false, c.confidence, &words);
  const std::string scaled = c.factor != 1.0 ? fmt_num(c.factor) + " x " : "";
  return result(
      c, verdict,
      "mean " + c.metric + " over {" + filter_text(fa) + "} = " + fmt_num(ia.mean) + " (" +
          std::to_string(ia.seeds) + " seeds) vs " + scaled + fmt_num(ib.mean) + " over {" +
          filter_text(fb) + "} (" + std::to_string(ib.seeds) + " seeds); difference a − " +
          scaled + "b " + (paired ? "paired by seed " : "(Welch, unpaired) ") +
          interval_text(d, 0, c.confidence) + "; claim: < 0, " + words);
}

}  // namespace claims_detail

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "PASS";
    case Verdict::Fail: return "FAIL";
    case Verdict::Inconclusive: return "INCONCLUSIVE";
    case Verdict::NotEvaluated: return "NOT EVALUATED";
  }
  return "?";
}

bool run_matches(const StoredRun& run, const RunFilter& filter) {
  for (const auto& [key, values] : filter) {
    const std::string v = run.param(key);
    bool any = false;
    for (const auto& wanted : values) {
      const std::string w = param_value_text(wanted);
      double a, b;
      any = any || (claims_detail::as_number(v, &a) && claims_detail::as_number(w, &b) ? a == b
                                                                                        : v == w);
    }
    if (!any) return false;
  }
  return true;
}

ClaimResult claim_evaluate(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                           std::vector<ClaimCell>* cells) {
  return claim_kinds().row(c.type).evaluate(c, runs, cells);
}

std::vector<ClaimResult> claims_evaluate(const std::vector<ClaimSpec>& claims,
                                         const std::vector<StoredRun>& runs) {
  std::vector<ClaimResult> out;
  for (const ClaimSpec& claim : claims) out.push_back(claim_evaluate(claim, runs));
  return out;
}

}  // namespace attn
