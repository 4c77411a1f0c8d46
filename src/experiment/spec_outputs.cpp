// Spec loading, the output sections: [[plot]] and [[claim]] entries, read by their field
// tables (spec_fields.cpp) and validated by their kind's row (plot_kinds.cpp,
// claim_kinds.cpp): the keys it needs, and no key it does not use.
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

}  // namespace

void plots_build(const Loader& L, const SpecTree* plots, Spec& spec) {
  if (plots == nullptr) return;
  if (plots->kind != Kind::Array) L.fail(plots->line, "plots are written [[plot]]");
  const std::vector<std::string> kind_names = plot_kinds().names();
  for (const auto& p : plots->items) {
    if (p.kind != Kind::Table) L.fail(p.line, "each [[plot]] must be a table");
    PlotSpec plot;
    plot.name = "plot" + std::to_string(spec.plots.size() + 1);
    const KindText text = fields_read(L, p, "[[plot]]", "plot.", plot_fields(), plot);
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
    spec.claims.push_back(claim);
  }
}

}  // namespace attn::spec_detail
