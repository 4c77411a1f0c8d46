// Spec loading, the output sections: [[plot]] and [[claim]] entries, read by their field
// tables (spec_fields.cpp) and validated by their kind's row (plot_kinds.cpp,
// claim_kinds.cpp): the keys it needs, and no key it does not use. Names of plots and ids of
// claims are unique; a claim's `along` and `size` name a swept key with numeric values.
#include "experiment/spec_loader.h"

namespace attn::spec_detail {

namespace {

// Refuses `key`, which a kind of plot or claim does not use: "NOUN 'NAME' (KEYWORD = "KIND")
// does not use KEY; remove it, or set KEYWORD to one that does (A or B); a KIND NOUN takes
// USES". `others`: the kinds that use it.
[[noreturn]] void unused_key_fail(const Loader& L, int line, const std::string& noun,
                                  const std::string& name, const std::string& keyword,
                                  const std::string& kind, const std::string& key,
                                  const std::vector<std::string>& others,
                                  const std::vector<std::string>& uses) {
  L.fail(line, noun + " '" + name + "' (" + keyword + " = \"" + kind + "\") does not use " + key +
                   "; remove it, or set " + keyword + " to one that does (" +
                   join_names(others, " or ") + "); a " + kind + " " + noun + " takes " +
                   join_names(uses));
}

// Refuses a second plot name or claim id: each names a figure file or a report line.
void unique_name_check(const Loader& L, int line, const std::string& noun, const std::string& key,
                       const std::string& name, const std::vector<std::string>& earlier) {
  if (listed(earlier, name))
    L.fail(line, noun + " " + key + " '" + name + "' is used twice; give each " + noun +
                     " its own " + key);
}

// The claim keys that name a trend axis (`along`) or a size (`size`) must be swept keys of the
// spec whose values are all numbers: a trend over text values or over one value cannot be
// judged, and seeds are the replicates each value is judged with, not an axis.
void numeric_axis_check(const Loader& L, int line, const Spec& spec, const ClaimSpec& claim,
                        const std::string& field, const std::string& key) {
  if (key.empty()) return;
  const std::string what = "claim '" + claim.id + "': " + field + " = \"" + key + "\"";
  if (key == "seed")
    L.fail(line, what +
                     ": seeds are the replicates every value is judged with, not an axis; "
                     "name a swept key");
  std::vector<std::string> swept;
  for (const SweepAxis& axis : spec.axes)
    for (size_t k = 0; k < axis.keys.size(); ++k) {
      swept.push_back(axis.keys[k]);
      if (axis.keys[k] != key) continue;
      for (const auto& row : axis.values)
        if (!std::holds_alternative<int64_t>(row[k]) && !std::holds_alternative<double>(row[k]))
          L.fail(line, what + " takes the value " + param_value_text(row[k]) + ", not a number; " +
                           field + " must be a swept key with numeric values");
      return;
    }
  not_swept_fail(L, line, what, key, swept, "the claim compares its values");
}

}  // namespace

void plots_build(const Loader& L, const SpecTree* plots, Spec& spec) {
  if (plots == nullptr) return;
  if (plots->kind != Kind::Array) L.fail(plots->line, "plots are written [[plot]]");
  const std::vector<std::string> kind_names = plot_kinds().names();
  std::vector<std::string> names;
  for (const auto& p : plots->items) {
    if (p.kind != Kind::Table) L.fail(p.line, "each [[plot]] must be a table");
    PlotSpec plot;
    plot.name = "plot" + std::to_string(spec.plots.size() + 1);
    const KindText text = fields_read(L, p, "[[plot]]", "plot.", plot_fields(), plot);
    const SpecTree* name_line = p.find("name");
    unique_name_check(L, name_line ? name_line->line : p.line, "plot", "name", plot.name, names);
    names.push_back(plot.name);
    if (text.given) {
      const PlotKind* found = plot_kinds().find(text.text);
      if (found == nullptr)
        L.fail(text.line, "plot '" + plot.name + "': kind = '" + text.text + "' is not one of " +
                              join_names(kind_names) + did_you_mean(text.text, kind_names));
      plot.kind = *found;
    }
    const PlotKindRow& kind = plot_kinds().row(plot.kind);
    for (const auto& [key, v] : p.entries) {
      if (listed(plot_common_keys(), key) || listed(kind.required, key) ||
          listed(kind.optional, key))
        continue;
      std::vector<std::string> uses = kind.required, others;
      uses.insert(uses.end(), kind.optional.begin(), kind.optional.end());
      uses.push_back("where");
      for (const PlotKindRow& row : plot_kinds())
        if (listed(row.required, key) || listed(row.optional, key)) others.push_back(row.name);
      unused_key_fail(L, v.line, "plot", plot.name, "kind", kind.name, key, others, uses);
    }
    for (const auto& key : kind.required) {
      if (field_given(plot_fields(), key, plot, p)) continue;
      L.fail(p.line,
             kind.kind == PlotKind::line
                 ? kind.needs  // the message from before plots had kinds
                 : "[[plot]] '" + plot.name + "' (kind = \"" + kind.name + "\") " + kind.needs);
    }
    spec.plots.push_back(plot);
  }
}

void claims_build(const Loader& L, const SpecTree* claims, Spec& spec) {
  if (claims == nullptr) return;
  if (claims->kind != Kind::Array) L.fail(claims->line, "claims are written [[claim]]");
  const std::vector<std::string> types = claim_kinds().names();
  std::vector<std::string> ids;
  for (const auto& c : claims->items) {
    if (c.kind != Kind::Table) L.fail(c.line, "each [[claim]] must be a table");
    for (const auto& [key, v] : c.entries)
      if (key == "tolerance")
        L.fail(v.line, "claim.tolerance is no longer used: trend claims are decided across seeds "
                       "at claim.confidence (docs/spec-format.md, Claims); "
                       "remove it");
    ClaimSpec claim;
    claim.id = "claim" + std::to_string(spec.claims.size() + 1);
    const KindText text = fields_read(L, c, "[[claim]]", "claim.", claim_fields(), claim);
    const ClaimKind* found = claim_kinds().find(text.text);
    if (found == nullptr)
      L.fail(c.line, "claim '" + claim.id + "': type = '" + text.text + "' is not one of " +
                         join_names(types) + did_you_mean(text.text, types));
    claim.type = *found;
    if (claim.metric.empty()) L.fail(c.line, "claim '" + claim.id + "' needs metric = \"...\"");
    if (claim.text.empty())
      L.fail(c.line, "claim '" + claim.id + "' needs text = \"...\" saying what it checks");
    const ClaimKindRow& kind = claim_kinds().row(claim.type);
    std::vector<std::string> uses = {"metric"};
    for (const ClaimNeed& need : kind.needs) {
      bool ok = need.holds == nullptr || need.holds(claim);
      for (const auto& key : need.keys) {
        ok = ok && field_given(claim_fields(), key, claim, c);
        if (!listed(uses, key)) uses.push_back(key);
      }
      if (!ok) L.fail(c.line, "claim '" + claim.id + "' (" + kind.name + ") " + need.message);
    }
    uses.insert(uses.end(), kind.optional.begin(), kind.optional.end());
    for (const char* common : {"where", "confidence", "doc"}) uses.push_back(common);
    // A key the kind does not use is refused, as for plots (after the needs, whose messages
    // come first).
    for (const auto& [key, v] : c.entries) {
      if (listed(claim_common_keys(), key) || listed(uses, key)) continue;
      std::vector<std::string> others;
      for (const ClaimKindRow& row : claim_kinds()) {
        bool uses_it = listed(row.optional, key);
        for (const ClaimNeed& need : row.needs) uses_it = uses_it || listed(need.keys, key);
        if (uses_it) others.push_back(row.name);
      }
      unused_key_fail(L, v.line, "claim", claim.id, "type", kind.name, key, others, uses);
    }
    const SpecTree* id_line = c.find("id");
    unique_name_check(L, id_line ? id_line->line : c.line, "claim", "id", claim.id, ids);
    ids.push_back(claim.id);
    const SpecTree* along = c.find("along");
    numeric_axis_check(L, along ? along->line : c.line, spec, claim, "along", claim.along);
    // size: one swept key, or a product of swept keys ("model.heads * model.m * model.bits").
    const SpecTree* size = c.find("size");
    if (!claim.size.empty())
      for (const auto& k : claim_size_keys(claim.size)) {
        if (k.empty())
          L.fail(size ? size->line : c.line,
                 "claim '" + claim.id + "': size = \"" + claim.size +
                     "\" has an empty factor; write one swept key or a product such as "
                     "\"model.heads * model.m\"");
        numeric_axis_check(L, size ? size->line : c.line, spec, claim, "size", k);
      }
    spec.claims.push_back(claim);
  }
}

}  // namespace attn::spec_detail
