// The stored run arguments (see run_args.h).
#include "experiment/run_args.h"

#include <nlohmann/json.hpp>

namespace attn {

std::string run_args_json(const RunArgs& args) {
  return nlohmann::json{{"quick", args.quick},
                        {"set", args.overrides},
                        {"shard", {args.shard_index, args.shard_count}}}
      .dump();
}

bool run_args_parse(const std::string& text, RunArgs* out) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return false;
  *out = RunArgs{};
  if (j.contains("quick") && j["quick"].is_boolean()) out->quick = j["quick"].get<bool>();
  if (j.contains("set") && j["set"].is_array())
    for (const auto& v : j["set"])
      if (v.is_string()) out->overrides.push_back(v.get<std::string>());
  const auto shard = j.value("shard", nlohmann::json::array());
  if (shard.is_array() && shard.size() == 2 && shard[0].is_number_integer() &&
      shard[1].is_number_integer()) {
    out->shard_index = shard[0].get<int>();
    out->shard_count = shard[1].get<int>();
  }
  return true;
}

}  // namespace attn
