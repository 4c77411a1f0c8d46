// Size claims (rules in claims.h): per value of `along`, the smallest swept `size` whose mean
// metric reaches the goal, bracketed by the confidence bounds of each size's mean across
// seeds: `may` is the smallest size whose bounds allow reaching the goal, `sure` the smallest
// whose bounds are past it (infinite when no size tried is). The needed size lies in
// [may, sure] at the claim's confidence (sizes assumed to help monotonically), on the grid of
// every size tried at any value of `along`: a size of that grid missing at one value leaves its
// bracket open down to it (size_brackets_on_grid).
// size_ratio_increasing brackets the ratio of two needed sizes (filters a and b) the same way:
// [a's lower end / b's upper end, a's upper end / b's lower end], a size never reached counting
// as larger than the largest tried.
// `size` names one swept key ("model.m") or a product of keys ("model.heads * model.m *
// model.bits"): a run's size is then the product of its values of those keys (the one-layer
// bound H·m·p of Sanford et al. 2024 is such a size), and the line prints the products.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "experiment/claim_kinds.h"
#include "experiment/claims_evidence.h"

namespace attn::claims_detail {
namespace {

using Bracket = SizeBracket;

// "64", "at most 16" (the grid's smallest size surely reaches the goal: smaller ones were not
// tried), "between 16 and 64", "between 64 and none up to 128", "none up to 128" (no size tried
// may reach it).
std::string bracket_text(const Bracket& b) {
  const std::string none = "none up to " + fmt_num(b.largest);
  if (b.none_may) return none;
  auto size = [&](double s) { return s == kNever ? none : fmt_num(s); };
  if (b.may == b.sure) return (b.sure == b.grid_floor ? "at most " : "") + size(b.sure);
  return "between " + size(b.may) + " and " + size(b.sure);
}

// A run's size: the product of its values of the size keys; false when one is not a number.
bool run_size(const StoredRun& r, const std::vector<std::string>& keys, double* out) {
  *out = 1;
  for (const auto& key : keys) {
    double v;
    if (!as_number(r.param(key), &v)) return false;
    *out *= v;
  }
  return true;
}

// "model.m", or "model.heads*model.m*model.bits" for a product.
std::string size_name(const ClaimSpec& c) {
  std::string name;
  for (const auto& key : claim_size_keys(c.size)) name += (name.empty() ? "" : "*") + key;
  return name;
}

std::map<double, Bracket> brackets_along(const ClaimSpec& c, const RunFilter& where,
                                         const std::vector<StoredRun>& runs) {
  // along value -> size -> seed values
  std::map<double, std::map<double, SeedValues>> cells;
  const std::vector<std::string> keys = claim_size_keys(c.size);
  double x, size;
  for (const auto& r : runs)
    if (r.status == "ok" && run_matches(r, where) && !std::isnan(r.metric(c.metric)) &&
        as_number(r.param(c.along), &x) && run_size(r, keys, &size)) {
      seed_value_add(r, c.metric, cells[x][size][r.seed]);
    }
  return size_brackets_on_grid(cells, c.goal == "above", c.threshold, c.confidence);
}

// The bracket of needed(a) / needed(b): a never-reached side is larger than its largest size.
Bracket ratio_bracket(const Bracket& a, const Bracket& b) {
  Bracket r;
  r.none_may = false;
  const double a_lo = a.may == kNever ? a.largest : a.may,
               b_lo = b.may == kNever ? b.largest : b.may;
  r.may = b.sure == kNever ? 0 : a_lo / b.sure;
  r.sure = a.sure == kNever ? kNever : a.sure / b_lo;
  return r;
}

std::string ratio_text(const Bracket& a, const Bracket& b, const Bracket& r) {
  auto end = [](double v) { return v == kNever ? std::string("inf") : fmt_num(v); };
  return "[" + end(r.may) + ", " + end(r.sure) + "] (" + bracket_text(a) + " / " + bracket_text(b) +
         ")";
}

// Brackets that grow from the first to the last value and never surely shrink. FAIL needs the
// last value surely reached: two values that both need more than the grid holds say nothing
// about which needs more.
Verdict increasing_verdict(const std::vector<Bracket>& v) {
  bool decrease = false;
  for (size_t k = 1; k < v.size(); ++k)
    for (size_t j = 0; j < k; ++j) decrease = decrease || v[k].sure < v[j].may;
  const bool pass = !decrease && v.front().sure < v.back().may;
  const bool fail = decrease || (v.back().sure < kNever && v.back().sure <= v.front().may);
  return pass ? Verdict::Pass : fail ? Verdict::Fail : Verdict::Inconclusive;
}

// The verdict of one size kind on the brackets v[k] at the values xs[k] of `along`, and what
// the claim says.
using BracketsVerdict = Verdict (*)(const ClaimSpec& c, const std::vector<Bracket>& v,
                                    const std::vector<double>& xs, std::string* claim);

// size_increasing (and size_ratio_increasing on ratio brackets): surely smaller at the first
// value than at the last, and never surely smaller at a later value than at an earlier one.
Verdict increasing_brackets(const ClaimSpec&, const std::vector<Bracket>& v,
                            const std::vector<double>&, std::string* claim) {
  const Verdict verdict = increasing_verdict(v);
  *claim = "grows from the first to the last value and never shrinks";
  if (verdict == Verdict::Inconclusive)
    *claim += " (undecided at these bounds: add seeds or sizes)";
  return verdict;
}

// size_flat: every value's needed size surely reached, largest / smallest <= factor.
Verdict flat_brackets(const ClaimSpec& c, const std::vector<Bracket>& v,
                      const std::vector<double>&, std::string* claim) {
  double min_may = kNever, max_may = 0, min_sure = kNever, max_sure = 0;
  for (const auto& b : v) {
    min_may = std::min(min_may, b.may);
    max_may = std::max(max_may, b.may);
    min_sure = std::min(min_sure, b.sure);
    max_sure = std::max(max_sure, b.sure);
  }
  const bool pass = max_sure < kNever && max_sure <= c.factor * min_may;
  const bool fail = max_may == kNever || max_may > c.factor * min_sure;
  *claim = "reached everywhere, largest / smallest <= " + fmt_num(c.factor);
  if (!pass && !fail) *claim += " (undecided at these bounds: add seeds or sizes)";
  return pass ? Verdict::Pass : fail ? Verdict::Fail : Verdict::Inconclusive;
}

// size_equals_along: every bracket is [x, x] at its value x of along; FAIL when one surely
// excludes x (its sure end below x, or its may end above x).
Verdict equals_along_brackets(const ClaimSpec&, const std::vector<Bracket>& v,
                              const std::vector<double>& xs, std::string* claim) {
  bool pass = true, fail = false;
  for (size_t k = 0; k < v.size(); ++k) {
    pass = pass && v[k].may == xs[k] && v[k].sure == xs[k];
    fail = fail || v[k].sure < xs[k] || v[k].may > xs[k];
  }
  *claim = "equals the value of the along key at every value";
  if (!pass && !fail) *claim += " (undecided at these bounds: add seeds or sizes)";
  return pass ? Verdict::Pass : fail ? Verdict::Fail : Verdict::Inconclusive;
}

// size_ratio_increasing: needed(a) / needed(b) per value of `along`, bracketed, increasing.
ClaimResult size_ratio_verdict(const ClaimSpec& c, const std::vector<StoredRun>& runs) {
  const RunFilter fa = filter_and(c.a, c.where), fb = filter_and(c.b, c.where);
  const auto na = brackets_along(c, fa, runs), nb = brackets_along(c, fb, runs);
  const std::string what = "ratio of the smallest " + size_name(c) + " with mean " + c.metric +
                           (c.goal == "above" ? " > " : " < ") + fmt_num(c.threshold) + ", {" +
                           filter_text(fa) + "} / {" + filter_text(fb) + "} (" +
                           level_text(c.confidence) + " bounds)";
  std::string seq;
  std::vector<Bracket> v;
  for (const auto& [x, a] : na) {
    const auto ib = nb.find(x);
    if (ib == nb.end()) continue;
    const Bracket r = ratio_bracket(a, ib->second);
    seq += (seq.empty() ? "" : ", ") + c.along + "=" + fmt_num(x) + ": " +
           ratio_text(a, ib->second, r);
    v.push_back(r);
  }
  if (v.size() < 2)
    return result(c, Verdict::Inconclusive,
                  "needs finished runs of both sides at two or more values of " + c.along +
                      "; found " + std::to_string(v.size()));
  std::string claim;
  const Verdict verdict = increasing_brackets(c, v, {}, &claim);
  return result(c, verdict, what + " along " + c.along + ": " + seq + "; claim: " + claim);
}

// size_increasing, size_flat and size_equals_along: the needed size's bracket per value of
// `along`, decided by `decide`.
ClaimResult needed_size_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells,
                              BracketsVerdict decide) {
  ClaimResult out;
  if (!along_values_enough(c, runs, c.where, &out) ||
      !along_values_finished(c, runs, c.where, &out))
    return out;
  const auto needed = brackets_along(c, c.where, runs);
  const std::string what = "smallest " + size_name(c) + " with mean " + c.metric +
                           (c.goal == "above" ? " > " : " < ") + fmt_num(c.threshold) + " over {" +
                           filter_text(c.where) + "} (" + level_text(c.confidence) + " bounds)";
  if (needed.size() < 2)
    return result(c, Verdict::Inconclusive,
                  "needs finished runs at two or more values of " + c.along + "; found " +
                      std::to_string(needed.size()));
  std::string seq;
  std::vector<Bracket> v;
  std::vector<double> xs;
  for (const auto& [x, b] : needed) {
    seq += (seq.empty() ? "" : ", ") + c.along + "=" + fmt_num(x) + ": " + bracket_text(b);
    v.push_back(b);
    xs.push_back(x);
    if (cells) cells->push_back(ClaimCell{filter_at(c.where, c.along, x), {}, true, b.may, b.sure});
  }
  std::string claim;
  const Verdict verdict = decide(c, v, xs, &claim);
  return result(c, verdict, what + " along " + c.along + ": " + seq + "; claim: " + claim);
}

}  // namespace

SizeBracket size_bracket(const std::map<double, SeedValues>& by_size, bool above,
                         double threshold, double confidence) {
  SizeBracket b;
  b.largest = by_size.rbegin()->first;
  for (const auto& [s, seeds] : by_size) {  // increasing size
    const Interval iv = sample_interval(sample_of(seeds), confidence);
    // Bounds that are not numbers (a seed's metric infinite) decide nothing: the size may reach
    // the goal and surely does not.
    const bool ok = iv.ok && std::isfinite(iv.lo) && std::isfinite(iv.hi);
    const bool may = !ok || (above ? iv.hi > threshold : iv.lo < threshold);
    const bool sure = ok && (above ? iv.lo > threshold : iv.hi < threshold);
    const bool by_mean = above ? iv.mean > threshold : iv.mean < threshold;
    if (may && b.may == kNever) b.may = s;
    if (sure && b.sure == kNever) b.sure = s;
    if (by_mean && b.by_mean == kNever) b.by_mean = s;
  }
  b.none_may = b.may == kNever;
  return b;
}

std::map<double, SizeBracket> size_brackets_on_grid(
    const std::map<double, std::map<double, SeedValues>>& cells, bool above, double threshold,
    double confidence) {
  std::set<double> grid;
  for (const auto& [along, by_size] : cells)
    for (const auto& [s, seeds] : by_size) grid.insert(s);
  std::map<double, SizeBracket> out;
  for (const auto& [along, by_size] : cells) {
    SizeBracket b = size_bracket(by_size, above, threshold, confidence);
    b.grid_floor = *grid.begin();
    if (b.may == kNever) {
      const auto next = grid.upper_bound(b.largest);
      b.may = next == grid.end() ? kNever : *next;
    } else {
      // Every size tried below `may` surely misses; one not tried here may be the one needed.
      for (auto it = grid.find(b.may); it != grid.begin() && !by_size.count(*std::prev(it));)
        b.may = *--it;
    }
    out[along] = b;
  }
  return out;
}

ClaimResult size_increasing_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                                  Cells* cells) {
  return needed_size_claim(c, runs, cells, increasing_brackets);
}

ClaimResult size_flat_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells* cells) {
  return needed_size_claim(c, runs, cells, flat_brackets);
}

ClaimResult size_equals_along_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs,
                                    Cells* cells) {
  return needed_size_claim(c, runs, cells, equals_along_brackets);
}

ClaimResult size_ratio_claim(const ClaimSpec& c, const std::vector<StoredRun>& runs, Cells*) {
  ClaimResult out;
  // Each side needs runs (of any status) at two values of along: a side no run matches, e.g. a
  // misspelt filter or a quick size without that model, is not evaluated here.
  for (const RunFilter& side : {filter_and(c.a, c.where), filter_and(c.b, c.where)})
    if (!along_values_enough(c, runs, side, &out) || !along_values_finished(c, runs, side, &out))
      return out;
  return size_ratio_verdict(c, runs);
}

}  // namespace attn::claims_detail
