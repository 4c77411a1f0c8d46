// StoredRun's lookups (experiment/store.h): a run's parameter and metric by name. In a file of
// their own so that code reading runs (claims, figure data) links without the SQLite store.
#include <cmath>

#include "experiment/store.h"

namespace attn {

std::string StoredRun::param(const std::string& key) const {
  if (key == "seed") return std::to_string(seed);
  for (const auto& [k, v] : params)
    if (k == key) return v;
  // A scoped sweep key "model.<model>.<key>" (plan.h): the run's own key when its model (or
  // task) is that one, else "" (not a key of this run).
  const size_t first = key.find('.'), second = key.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) return "";
  const std::string section = key.substr(0, first);
  if (section != "model" && section != "task") return "";
  if (param(section + ".name") != key.substr(first + 1, second - first - 1)) return "";
  return param(section + "." + key.substr(second + 1));
}

double StoredRun::metric(const std::string& name) const {
  for (const auto& [k, v] : metrics)
    if (k == name) return v;
  return NAN;
}

}  // namespace attn
