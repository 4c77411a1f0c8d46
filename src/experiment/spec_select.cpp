// Spec loading, the [select] section (SelectSpec, spec.h): selection on validation.
//
//   [select]
//   axes = ["model.m", "train.lr"]  # swept keys chosen on validation (a string: one key)
//   by = "val_loss"                 # a validation metric (val_*), minimised
//   max_params = 120000             # optional: only runs with at most this many parameters
//
// Checked here: the keys of the section, each axis a swept key named once (not `seed`, not a key
// that changes the validation data or the loss, and every key of a [[sweep.zip]] group
// together), `by` a validation metric (a test_* or train_* metric is refused: selection never
// looks at test data), max_params > 0; and, once
// the claims are read, that no claim filters on or runs along a selected axis (its values are
// chosen per seed, so a claim cannot hold one fixed), by either spelling of a model or task key
// (SelectSpec::axis_named_by, also used by the figures and the selection's groups).
#include "experiment/spec_loader.h"

#include <cmath>

#include "experiment/claim_kinds.h"

namespace attn {
namespace {

// "model.attention.m" -> {"model", "attention", "m"}; "model.m" -> {"model", "", "m"}; keys of
// other sections (or without a second dot) -> {"", "", key}: they have one spelling only.
struct KeyParts {
  std::string section, scope, rest;
};
KeyParts key_parts(const std::string& key) {
  const size_t first = key.find('.');
  if (first == std::string::npos) return {"", "", key};
  const std::string section = key.substr(0, first);
  if (section != "model" && section != "task") return {"", "", key};
  const size_t second = key.find('.', first + 1);
  if (second == std::string::npos) return {section, "", key.substr(first + 1)};
  return {section, key.substr(first + 1, second - first - 1), key.substr(second + 1)};
}

}  // namespace

std::string SelectSpec::axis_named_by(const std::string& key) const {
  const KeyParts k = key_parts(key);
  for (const auto& axis : axes) {
    if (axis == key) return axis;
    const KeyParts a = key_parts(axis);
    // One scoped and one plain spelling of the same section's key (StoredRun::param resolves
    // the scoped one to the plain one at runs of that model or task).
    if (!k.section.empty() && k.section == a.section && k.rest == a.rest &&
        (k.scope.empty() != a.scope.empty()))
      return axis;
  }
  return "";
}

}  // namespace attn

namespace attn::spec_detail {

namespace {

const std::vector<std::string>& select_keys() {
  static const std::vector<std::string> keys = {"axes", "by", "max_params"};
  return keys;
}

// Keys whose values give each run other validation data (the task, the training set's size and
// its held-out part, the fresh validation set's size) or another loss: choosing among them by a
// validation metric would compare numbers measured on different things. [eval] is the test set,
// which selection never looks at.
bool changes_what_validation_measures(const std::string& key) {
  static const std::vector<std::string> train_keys = {"train.n", "train.val_fraction",
                                                      "train.val_n", "train.loss"};
  return key.rfind("task.", 0) == 0 || key.rfind("eval.", 0) == 0 || listed(train_keys, key);
}

void select_axis_check(const Loader& L, int line, const Spec& spec, const std::string& key) {
  const std::string what = "select.axes: \"" + key + "\"";
  if (key == "seed")
    L.fail(line, what +
                     ": seeds are selected independently, never chosen among; name a swept "
                     "key such as \"model.m\" or \"train.lr\"");
  const std::vector<std::string> swept = spec_swept_keys(spec);
  if (!listed(swept, key))
    not_swept_fail(L, line, what, key, swept, "selection chooses among a swept key's values");
  if (changes_what_validation_measures(key))
    L.fail(line, what +
                     " changes the data or the loss the validation metric is measured on, so "
                     "its values' validation metrics are not comparable; keep it a reported "
                     "axis and select among model sizes or training settings (\"model.m\", "
                     "\"train.lr\", ...)");
}

}  // namespace

void select_build(const Loader& L, const SpecTree* select, Spec& spec) {
  if (select == nullptr) return;
  if (select->kind != Kind::Table) L.fail(select->line, "'select' must be a table: write [select]");
  L.check_keys(*select, "[select]", select_keys());
  SelectSpec out;
  const SpecTree* axes = select->find("axes");
  if (axes == nullptr)
    L.fail(select->line,
           "[select] needs axes = [\"...\"]: the swept keys chosen on validation, "
           "e.g. axes = [\"model.m\"]");
  std::vector<const SpecTree*> items;
  if (axes->kind == Kind::Array)
    for (const auto& item : axes->items) items.push_back(&item);
  else
    items.push_back(axes);
  if (items.empty())
    L.fail(axes->line,
           "select.axes is an empty list; name the swept keys chosen on validation, "
           "or remove [select]");
  for (const SpecTree* item : items) {
    const std::string key = L.string_of(*item, "select.axes: each axis");
    if (listed(out.axes, key))
      L.fail(item->line, "select.axes names \"" + key + "\" twice; name it once");
    select_axis_check(L, item->line, spec, key);
    out.axes.push_back(key);
  }
  // A zip group's keys vary together: choosing one chooses them all.
  for (const SweepAxis& axis : spec.axes) {
    if (axis.keys.size() < 2) continue;
    size_t chosen = 0;
    for (const auto& k : axis.keys) chosen += listed(out.axes, k) ? 1 : 0;
    const bool any = chosen > 0, all = chosen == axis.keys.size();
    if (any && !all)
      L.fail(axes->line, "select.axes: the keys " + join_names(axis.keys) +
                             " vary together in a [[sweep.zip]] group; select all of them or "
                             "none");
  }
  if (const SpecTree* by = select->find("by")) {
    out.by = L.string_of(*by, "select.by");
    const bool test = out.by.rfind("test_", 0) == 0, train = out.by.rfind("train_", 0) == 0;
    if (test)
      L.fail(by->line,
             "select.by = \"" + out.by +
                 "\" is a test metric: selection never looks "
                 "at test data; name a validation metric such as \"val_loss\" "
                 "(gradient-trained models) or \"val_mse\" (ridge models with several λ)");
    if (train)
      L.fail(by->line,
             "select.by = \"" + out.by +
                 "\" is a training metric, which favours the "
                 "model that fits its training set best; name a validation metric such as "
                 "\"val_loss\" or \"val_mse\"");
    if (out.by.rfind("val_", 0) != 0 || out.by.size() <= 4)
      L.fail(by->line, "select.by = \"" + out.by +
                           "\" is not a validation metric; name one "
                           "whose name starts with val_, such as \"val_loss\" (gradient-trained "
                           "models) or \"val_mse\" (ridge models with several λ)");
  }
  if (const SpecTree* budget = select->find("max_params")) {
    const ParamValue v = L.value_of(*budget, "select.max_params");
    double x = NAN;
    if (auto* i = std::get_if<int64_t>(&v)) x = static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&v)) x = *d;
    if (!(x > 0) || !std::isfinite(x))
      L.fail(budget->line,
             "select.max_params must be a number of parameters > 0, e.g. "
             "max_params = 120000 (or leave it out: no budget)");
    out.max_params = x;
    out.has_max_params = true;
  }
  spec.select = std::move(out);
}

void select_claims_check(const Loader& L, const SpecTree* claims, const Spec& spec) {
  if (!spec.select.active() || claims == nullptr) return;
  for (size_t i = 0; i < spec.claims.size() && i < claims->items.size(); ++i) {
    const ClaimSpec& c = spec.claims[i];
    const int line = claims->items[i].line;
    auto refuse = [&](const std::string& field, const std::string& key) {
      const std::string axis = spec.select.axis_named_by(key);
      if (axis.empty()) return;
      L.fail(line, "claim '" + c.id + "': " + field + " names \"" + key + "\"" +
                       (axis == key ? "" : " (the selected axis \"" + axis + "\")") +
                       ", which [select] chooses on validation per seed; a claim reads the "
                       "chosen runs, so remove \"" +
                       key + "\" from " + field + " (or \"" + axis +
                       "\" from select.axes to compare its values)");
    };
    refuse("along", c.along);
    for (const auto& key : claim_size_keys(c.size)) refuse("size", key);
    for (const auto& [name, filter] :
         {std::pair{"a", &c.a}, std::pair{"b", &c.b}, std::pair{"where", &c.where}})
      for (const auto& [key, values] : *filter) refuse(name, key);
  }
}

}  // namespace attn::spec_detail
