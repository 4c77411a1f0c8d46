// StoredRun's lookups (experiment/store.h): a run's parameter and metric by name. In a file of
// their own so that code reading runs (claims, figure data) links without the SQLite store.
#include <cmath>

#include "experiment/store.h"

namespace attn {

std::string StoredRun::param(const std::string& key) const {
  if (key == "seed") return std::to_string(seed);
  for (const auto& [k, v] : params)
    if (k == key) return v;
  return "";
}

double StoredRun::metric(const std::string& name) const {
  for (const auto& [k, v] : metrics)
    if (k == name) return v;
  return NAN;
}

}  // namespace attn
