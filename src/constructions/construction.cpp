// The construction table: model.construction names → factories.
#include "constructions/construction.h"

#include "constructions/hop_constructions.h"
#include "core/error.h"
#include "core/suggest.h"

namespace attn {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Construction> (*make)(const ConstructionSetup&);
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"qsa_random_codes", qsa_random_codes_make}, {"qsa_neighbourly", qsa_neighbourly_make},
      {"match2_trig", match2_trig_make},           {"match3_third_order", match3_third_order_make},
      {"smallm_match3", smallm_match3_make},       {"local_match3", local_match3_make},
      {"adjacent_match3", adjacent_match3_make},   {"pointer_match3", pointer_match3_make},
      {"induction_head", induction_head_make},     {"hop_doubling", hop_doubling_make},
  };
  return entries;
}

}  // namespace

void ConstructionStats::merge(const ConstructionStats& o) {
  margin_min = std::min(margin_min, o.margin_min);
  rows += o.rows;
  rows_without_margin += o.rows_without_margin;
  beta_max = std::max(beta_max, o.beta_max);
  beta_sum += o.beta_sum;
  tie_error_max = std::max(tie_error_max, o.tie_error_max);
}

std::vector<std::string> construction_names() {
  std::vector<std::string> names;
  for (const auto& e : table()) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<Construction> construction_make(const ConstructionSetup& setup) {
  const std::string name = setup.model.get_string("construction");
  for (const auto& e : table())
    if (name == e.name) return e.make(setup);
  const auto names = construction_names();
  throw UserError("unknown model.construction '" + name + "'" + did_you_mean(name, names) +
                  "; constructions: " + join_names(names));
}

}  // namespace attn
