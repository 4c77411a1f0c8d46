// An experiment directory's runs against its plan (experiment_status.h).
#include "experiment/experiment_status.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "experiment/run_args.h"
#include "experiment/store.h"
#include "experiment/store_dir.h"

namespace attn {
ExperimentStatus experiment_status(const std::string& dir) {
  const ResultsStore store(store_path_existing(dir), StoreAccess::kRead);
  ExperimentStatus st;
  st.dir = dir;
  st.experiment = store.meta("experiment");
  st.spec_path = store.meta("spec_path");
  RunArgs args;
  if (run_args_parse(store.meta("run_args"), &args)) {
    st.args_known = true;
    st.quick = args.quick;
    st.overrides = args.overrides;
    if (args.shard_count >= 1) {
      st.shard_index = args.shard_index;
      st.shard_count = args.shard_count;
    }
  }
  const std::string merged = store.meta("merged_shards");
  if (!merged.empty()) {
    st.merged = true;
    st.shard_index = 0;
    st.shard_count = std::max(1, std::stoi(merged));
  }
  // Each stored run's status by id; the plan (every stored run when no plan is recorded).
  std::map<std::string, bool> stored_ok;
  for (const auto& r : store.load_runs()) stored_ok[r.run_id] = r.status == "ok";
  const auto ids_json = nlohmann::json::parse(store.meta("plan_ids"), nullptr, false);
  std::vector<std::string> plan;
  if (ids_json.is_array())
    for (const auto& id : ids_json) plan.push_back(id.get<std::string>());
  if (plan.empty())
    for (const auto& [id, ok] : stored_ok) plan.push_back(id);
  st.plan_total = static_cast<int64_t>(plan.size());
  const int k = st.shard_count;
  if (k > 1)
    for (int i = 0; i < k; ++i)
      if (st.merged || i == st.shard_index) st.shards.push_back(ShardStatus{i});
  int64_t in_plan = 0;
  for (size_t index = 0; index < plan.size(); ++index) {
    const int shard = static_cast<int>(index % static_cast<size_t>(k));
    if (!st.merged && shard != st.shard_index) continue;
    ShardStatus* s = nullptr;
    for (auto& candidate : st.shards)
      if (candidate.index == shard) s = &candidate;
    const auto it = stored_ok.find(plan[index]);
    const int64_t ok = it != stored_ok.end() && it->second;
    const int64_t failed = it != stored_ok.end() && !it->second;
    st.planned += 1;
    st.ok += ok;
    st.failed += failed;
    st.missing += 1 - ok - failed;
    if (s != nullptr) {
      s->planned += 1;
      s->ok += ok;
      s->failed += failed;
      s->missing += 1 - ok - failed;
    }
  }
  for (const auto& id : plan) in_plan += stored_ok.count(id) > 0;
  st.stale = static_cast<int64_t>(stored_ok.size()) - in_plan;
  return st;
}

std::string experiment_missing_text(const ExperimentStatus& st) {
  if (st.missing == 0) return "";
  std::string text = std::to_string(st.missing) + " of " + std::to_string(st.planned) +
                     " planned runs are missing";
  std::string shards;
  for (const auto& s : st.shards) {
    if (s.missing == 0) continue;
    shards +=
        (shards.empty() ? ": " : ", ") + std::string("shard ") + std::to_string(s.index) + "/" +
        std::to_string(st.shard_count) + " (" +
        (s.missing == s.planned ? "all " + std::to_string(s.planned)
                                : std::to_string(s.missing) + " of " + std::to_string(s.planned)) +
        ")";
  }
  return text + shards;
}

}  // namespace attn
