// Run groups: the key of a point and the split of pending points into groups.
#include "experiment/run_groups.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "experiment/fork_server.h"
#include "experiment/point_codec.h"
#include "models/model_registry.h"
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

bool run_group_lockstep(const RunPoint& point) {
  const RunConfig& c = point.config;
  const ModelInfo& info = model_find(c.model);
  return info.fresh_samples && !info.no_training && c.train_params.get_int("n") == 0 &&
         c.train_params.has("lrs") && c.train_params.get_real_list("lrs").empty();
}

std::string run_group_key(const RunPoint& point) {
  const RunConfig& c = point.config;
  if (run_group_lockstep(point)) {
    // Any model: the configuration without its model part.
    RunConfig k = c;
    k.model.clear();
    k.model_params = Params();
    return "lockstep " + run_config_json(k, point.seed);
  }
  if (!model_find(c.model).ridge_fitted || c.train_params.get_int("n") <= 0) return "";
  RunConfig k = c;
  k.task_params = params_reset(c.task_params, [](const ParamSpec& s) { return s.label_only; });
  k.train_params = params_reset(c.train_params, [](const ParamSpec& s) {
    return s.name == "n" || s.name == "lambdas";
  });
  // The test set's task parameters follow the task's (eval_task_params), so they match too.
  return run_config_json(k, point.seed);
}

std::vector<std::vector<const RunPoint*>> run_groups_make(
    const std::vector<const RunPoint*>& points) {
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
  // A lockstep group holds all its networks at once: at most kLockstepGroupMax runs each.
  std::vector<std::vector<const RunPoint*>> out;
  for (auto& g : groups) {
    const size_t most = run_group_lockstep(*g.front()) ? kLockstepGroupMax : g.size();
    for (size_t at = 0; at < g.size(); at += most)
      out.emplace_back(g.begin() + static_cast<std::ptrdiff_t>(at),
                       g.begin() + static_cast<std::ptrdiff_t>(std::min(g.size(), at + most)));
  }
  return out;
}

std::vector<std::vector<const RunPoint*>> run_units_make(const std::vector<const RunPoint*>& points,
                                                         bool groups) {
  // A point's text, and its size as an item of a group's request (a JSON array of texts).
  const auto text_sizes = [](const RunPoint& p) {
    const std::string text = run_point_encode(p);
    ATTN_CHECK(text.size() <= kForkServerRequestMax,
               "run point " + std::to_string(p.index) + " (seed " + std::to_string(p.seed) +
                   ") has " + std::to_string(text.size()) + " bytes of settings, more than the " +
                   std::to_string(kForkServerRequestMax) +
                   " a worker takes; shorten its lists (e.g. train.lambdas)");
    return std::pair<size_t, size_t>{text.size(), nlohmann::json(text).dump().size() + 1};
  };
  std::vector<std::vector<const RunPoint*>> units;
  if (!groups) {
    for (const RunPoint* p : points) {
      text_sizes(*p);
      units.push_back({p});
    }
    return units;
  }
  for (auto& g : run_groups_make(points)) {
    std::vector<const RunPoint*> unit;
    size_t bytes = 2;  // the request's brackets
    for (const RunPoint* p : g) {
      const size_t item = text_sizes(*p).second;
      if (!unit.empty() && (unit.size() == kRunUnitMax || bytes + item > kForkServerRequestMax)) {
        units.push_back(std::move(unit));
        unit.clear();
        bytes = 2;
      }
      unit.push_back(p);
      bytes += item;
    }
    if (!unit.empty()) units.push_back(std::move(unit));
  }
  return units;
}

}  // namespace attn
