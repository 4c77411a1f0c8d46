// Run groups: the key of a point and the split of pending points into groups.
#include "experiment/run_groups.h"

#include <algorithm>
#include <map>

#include "models/model.h"
#include "tasks/task.h"

namespace attn {
namespace {

// p with every key that `reset` selects set back to its schema default.
template <class Select>
Params params_reset(const Params& p, Select reset) {
  Params out = p;
  for (const ParamSpec& spec : p.schema())
    if (reset(spec) && out.has(spec.name)) out.set(spec.name, spec.default_value);
  return out;
}

}  // namespace

std::string run_group_key(const RunPoint& point) {
  const RunConfig& c = point.config;
  if (!model_find(c.model).ridge_fitted || c.train_params.get_int("n") <= 0) return "";
  RunConfig k = c;
  k.task_params = params_reset(c.task_params, [](const ParamSpec& s) { return s.label_only; });
  k.train_params = params_reset(c.train_params, [](const ParamSpec& s) {
    return s.name == "n" || s.name == "lambdas";
  });
  // The test set's task parameters follow the task's (eval_task_params), so they match too.
  return run_config_json(k, point.seed);
}

std::vector<std::vector<const RunPoint*>> run_groups_make(const std::vector<const RunPoint*>& points) {
  std::vector<std::vector<const RunPoint*>> groups;
  std::map<std::string, size_t> at;
  for (const RunPoint* p : points) {
    const std::string key = run_group_key(*p);
    if (key.empty()) {
      groups.push_back({p});
      continue;
    }
    auto [it, inserted] = at.emplace(key, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(p);
  }
  for (auto& g : groups)
    std::stable_sort(g.begin(), g.end(), [](const RunPoint* a, const RunPoint* b) {
      return a->config.train_params.get_int("n") > b->config.train_params.get_int("n");
    });
  return groups;
}

}  // namespace attn
