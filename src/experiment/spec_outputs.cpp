// Spec loading, the output sections: [[plot]] and [[claim]] entries, validated.
#include "experiment/spec_loader.h"

namespace attn::spec_detail {

namespace {

// Which [[plot]] keys each kind uses: `required` must be set, `optional` may be; any other
// plot key (besides name, title, kind, where) is refused for that kind.
struct PlotKind {
  std::string name;
  std::vector<std::string> required, optional;
  std::string needs;  // the message when a required key is missing
};

const std::vector<PlotKind>& plot_kinds() {
  static const std::vector<PlotKind> kinds = {
      {"line", {"metric", "x"}, {"line", "logx", "logy", "none"},
       "[[plot]] needs metric = \"...\" and x = \"dotted.key\""},
      {"heatmap", {"metric", "x", "y"}, {"logx", "logy", "product_boundary"},
       "needs metric = \"...\" (the cell colour), x = \"dotted.key\" and y = \"dotted.key\""},
      {"curve", {"series"}, {"line", "logx", "logy"},
       "needs series = \"...\" (a series name such as \"val_loss\"; the x axis is its step)"},
      {"matrix", {"series"}, {"mark"},
       "needs series = \"...\" (a series of S*S points, such as \"attention_sample0\")"},
      {"size_needed", {"metric", "x", "size", "threshold"}, {"line", "goal", "logx", "logy"},
       "needs metric = \"...\", x = \"dotted.key\", size = \"dotted.key\" (the swept model "
       "size) and threshold = NUMBER (the goal's level)"},
  };
  return kinds;
}

// A number (integer or float) at v, or a user error naming `what`.
double number_of(const Loader& L, const SpecTree& v, const std::string& what) {
  const ParamValue x = L.value_of(v, what);
  if (auto* i = std::get_if<int64_t>(&x)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&x)) return *d;
  L.fail(v.line, what + " must be a number");
  return 0;
}

std::string goal_of(const Loader& L, const SpecTree& v, const std::string& s,
                    const std::string& what) {
  if (s != "below" && s != "above")
    L.fail(v.line, what + " must be \"below\" or \"above\" (got \"" + s + "\")");
  return s;
}

// claim.doc: "docs/NAME.md#anchor", a paragraph of the repository's docs (tests/
// test_claim_docs.cpp checks that the shipped specs' files and anchors exist).
std::string doc_of(const Loader& L, const SpecTree& v, const std::string& s) {
  const size_t hash = s.find('#');
  const std::string file = s.substr(0, hash);
  if (file.rfind("docs/", 0) != 0 || file.size() <= 8 || file.substr(file.size() - 3) != ".md" ||
      hash == std::string::npos || hash + 1 == s.size() || file.find("..") != std::string::npos)
    L.fail(v.line, "claim.doc = \"" + s + "\" must be \"docs/NAME.md#anchor\" (the paragraph "
                   "of the docs that explains the claim)");
  return s;
}

}  // namespace

void plots_build(const Loader& L, const SpecTree* plots, Spec& spec) {
  if (plots == nullptr) return;
  if (plots->kind != Kind::Array) L.fail(plots->line, "plots are written [[plot]]");
  std::vector<std::string> kind_names;
  for (const auto& k : plot_kinds()) kind_names.push_back(k.name);
  for (const auto& p : plots->items) {
    if (p.kind != Kind::Table) L.fail(p.line, "each [[plot]] must be a table");
    L.check_keys(p, "[[plot]]", {"name", "title", "kind", "metric", "x", "y", "series", "line",
                                 "logx", "logy", "where", "product_boundary", "size",
                                 "threshold", "goal", "none", "mark"});
    PlotSpec plot;
    plot.name = "plot" + std::to_string(spec.plots.size() + 1);
    bool has_threshold = false;
    for (const auto& [key, v] : p.entries) {
      if (key == "logx" || key == "logy") {
        if (v.kind != Kind::Value || !std::holds_alternative<bool>(v.value))
          L.fail(v.line, "plot." + key + " must be true or false");
        (key == "logx" ? plot.logx : plot.logy) = std::get<bool>(v.value);
      } else if (key == "where") {
        plot.where = L.filter_of(v, "plot.where");
      } else if (key == "product_boundary") {
        const double number = number_of(L, v, "plot.product_boundary");
        if (!(number > 0)) L.fail(v.line, "plot.product_boundary must be > 0 (the success level)");
        plot.product_boundary = number;
      } else if (key == "threshold") {
        plot.threshold = number_of(L, v, "plot.threshold");
        has_threshold = true;
      } else if (key == "none") {
        plot.none = number_of(L, v, "plot.none");
        plot.has_none = true;
      } else {
        const std::string s = L.string_of(v, "plot." + key);
        if (key == "name") plot.name = s;
        if (key == "title") plot.title = s;
        if (key == "kind") plot.kind = s;
        if (key == "metric") plot.metric = s;
        if (key == "x") plot.x = s;
        if (key == "y") plot.y = s;
        if (key == "series") plot.series = s;
        if (key == "line") plot.line = s;
        if (key == "size") plot.size = s;
        if (key == "goal") plot.goal = goal_of(L, v, s, "plot.goal");
        if (key == "mark") plot.mark = s;
      }
    }
    const PlotKind* kind = nullptr;
    for (const auto& k : plot_kinds())
      if (k.name == plot.kind) kind = &k;
    if (kind == nullptr) {
      const SpecTree* v = p.find("kind");
      L.fail(v ? v->line : p.line, "plot '" + plot.name + "': kind = '" + plot.kind +
                                       "' is not one of " + join_names(kind_names) +
                                       did_you_mean(plot.kind, kind_names));
    }
    for (const auto& [key, v] : p.entries) {
      if (key == "name" || key == "title" || key == "kind" || key == "where") continue;
      bool used = false;
      for (const auto* list : {&kind->required, &kind->optional})
        for (const auto& k : *list) used = used || k == key;
      if (!used) {
        std::vector<std::string> uses = kind->required, others;
        uses.insert(uses.end(), kind->optional.begin(), kind->optional.end());
        uses.push_back("where");
        for (const auto& k : plot_kinds())
          for (const auto* list : {&k.required, &k.optional})
            for (const auto& name : *list)
              if (name == key) others.push_back(k.name);
        L.fail(v.line, "plot '" + plot.name + "' (kind = \"" + kind->name + "\") does not use " +
                           key + "; remove it, or set kind to one that does (" +
                           join_names(others, " or ") + "); a " + kind->name + " plot takes " +
                           join_names(uses));
      }
    }
    for (const auto& key : kind->required) {
      if (key == "threshold") {
        if (!has_threshold) L.fail(p.line, "[[plot]] '" + plot.name + "' (kind = \"" + kind->name + "\") " + kind->needs);
        continue;
      }
      const std::string& value = key == "metric" ? plot.metric
                                 : key == "x"    ? plot.x
                                 : key == "y"    ? plot.y
                                 : key == "size" ? plot.size
                                                 : plot.series;
      if (!value.empty()) continue;
      L.fail(p.line, kind->name == "line"
                         ? kind->needs  // the message from before plots had kinds
                         : "[[plot]] '" + plot.name + "' (kind = \"" + kind->name + "\") " + kind->needs);
    }
    spec.plots.push_back(plot);
  }
}

void claims_build(const Loader& L, const SpecTree* claims, Spec& spec) {
  if (claims == nullptr) return;
  if (claims->kind != Kind::Array) L.fail(claims->line, "claims are written [[claim]]");
  const std::vector<std::string> types = {"less_than",  "below",           "above",
                                          "decreasing", "increasing",      "ratio_increasing",
                                          "flat",       "size_increasing", "size_flat",
                                          "size_ratio_increasing", "power_law"};
  for (const auto& c : claims->items) {
    if (c.kind != Kind::Table) L.fail(c.line, "each [[claim]] must be a table");
    for (const auto& [key, v] : c.entries)
      if (key == "tolerance")
        L.fail(v.line, "claim.tolerance is no longer used: trend claims are decided across seeds "
                       "at claim.confidence (docs/spec-format.md, Claims); "
                       "remove it");
    L.check_keys(c, "[[claim]]", {"id", "text", "type", "metric", "a", "b", "where", "factor",
                                  "threshold", "along", "size", "goal", "confidence",
                                  "exponent", "margin", "compare", "doc"});
    ClaimSpec claim;
    claim.id = "claim" + std::to_string(spec.claims.size() + 1);
    bool has_threshold = false, has_factor = false, has_exponent = false;
    for (const auto& [key, v] : c.entries) {
      if (key == "a" || key == "b" || key == "where") {
        (key == "a" ? claim.a : key == "b" ? claim.b : claim.where) = L.filter_of(v, "claim." + key);
      } else if (key == "factor" || key == "threshold" || key == "confidence" ||
                 key == "exponent" || key == "margin") {
        const double number = number_of(L, v, "claim." + key);
        if (key == "factor") { claim.factor = number; has_factor = true; }
        if (key == "threshold") { claim.threshold = number; has_threshold = true; }
        if (key == "exponent") { claim.exponent = number; has_exponent = true; }
        if (key == "margin") {
          if (!(number >= 0)) L.fail(v.line, "claim.margin = " + std::to_string(number) + " must be >= 0");
          claim.margin = number;
        }
        if (key == "confidence") {
          if (!(number >= 0.5 && number < 1))
            L.fail(v.line, "claim.confidence = " + std::to_string(number) +
                               " must be in [0.5, 1), e.g. 0.95 (the level of each one-sided bound)");
          claim.confidence = number;
        }
      } else if (key == "compare") {
        claim.compare = L.string_of(v, "claim.compare");
        if (claim.compare != "equal" && claim.compare != "at_most" && claim.compare != "at_least")
          L.fail(v.line, "claim.compare = '" + claim.compare + "' is not one of equal, at_most, at_least");
      } else {
        const std::string s = L.string_of(v, "claim." + key);
        if (key == "id") claim.id = s;
        if (key == "text") claim.text = s;
        if (key == "type") claim.type = s;
        if (key == "metric") claim.metric = s;
        if (key == "along") claim.along = s;
        if (key == "size") claim.size = s;
        if (key == "goal") claim.goal = goal_of(L, v, s, "claim.goal");
        if (key == "doc") claim.doc = doc_of(L, v, s);
      }
    }
    bool known = false;
    for (const auto& t : types) known = known || t == claim.type;
    if (!known)
      L.fail(c.line, "claim '" + claim.id + "': type = '" + claim.type + "' is not one of " +
                         join_names(types) + did_you_mean(claim.type, types));
    if (claim.metric.empty()) L.fail(c.line, "claim '" + claim.id + "' needs metric = \"...\"");
    if (claim.text.empty()) L.fail(c.line, "claim '" + claim.id + "' needs text = \"...\" saying what it checks");
    if ((claim.type == "less_than" || claim.type == "ratio_increasing" ||
         claim.type == "size_ratio_increasing") &&
        (claim.a.empty() || claim.b.empty()))
      L.fail(c.line, "claim '" + claim.id + "' (" + claim.type +
                         ") needs filters a = {...} and b = {...}");
    if (claim.type == "flat" && !has_threshold)
      L.fail(c.line, "claim '" + claim.id + "' (flat) needs threshold = the largest allowed "
                     "spread (max - min) of the means");
    if ((claim.type == "below" || claim.type == "above") && !has_threshold)
      L.fail(c.line, "claim '" + claim.id + "' (" + claim.type + ") needs threshold = NUMBER");
    const bool size_type = claim.type == "size_increasing" || claim.type == "size_flat" ||
                           claim.type == "size_ratio_increasing";
    if (claim.type == "power_law" && !has_exponent)
      L.fail(c.line, "claim '" + claim.id + "' (power_law) needs exponent = NUMBER, the theory's "
                     "rate (e.g. -0.5 for an error falling like n^-1/2), and a margin");
    if ((claim.type == "decreasing" || claim.type == "increasing" ||
         claim.type == "ratio_increasing" || claim.type == "flat" || size_type ||
         claim.type == "power_law") &&
        claim.along.empty())
      L.fail(c.line, "claim '" + claim.id + "' (" + claim.type + ") needs along = \"dotted.key\"");
    if (size_type && (claim.size.empty() || !has_threshold))
      L.fail(c.line, "claim '" + claim.id + "' (" + claim.type + ") needs size = \"dotted.key\" "
                     "(the swept model size) and threshold = NUMBER (the goal's level)");
    if (claim.type == "size_flat" && !(has_factor && claim.factor >= 1))
      L.fail(c.line, "claim '" + claim.id + "' (size_flat) needs factor = NUMBER >= 1, the largest "
                     "allowed ratio of the largest to the smallest needed size");
    spec.claims.push_back(claim);
  }
}

}  // namespace attn::spec_detail
