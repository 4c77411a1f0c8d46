// JSON form of a run point, and its re-resolution on the receiving side.
#include "experiment/point_codec.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/params_json.h"
#include "models/model_registry.h"
#include "tasks/task.h"

namespace attn {

std::string run_point_encode(const RunPoint& point) {
  nlohmann::json j;
  j["index"] = point.index;
  j["seed"] = point.seed;
  j["run_id"] = point.run_id;
  j["config_json"] = point.config_json;
  nlohmann::json execution = nlohmann::json::object();
  for (const char* section : {"task", "model", "train", "eval"}) {
    const Params* p = run_config_section(point.config, section);
    for (size_t k = 0; k < p->schema().size(); ++k)
      if (p->schema()[k].execution_only)
        execution[std::string(section) + "." + p->schema()[k].name] =
            param_value_json(p->values()[k]);
  }
  j["execution"] = execution;
  j["probes"] = probes_text(point.config.probes);  // not part of config_json (plan.h)
  return j.dump();
}

RunPoint run_point_decode(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  ATTN_CHECK(!j.is_discarded() && j.is_object(), "run point: not a JSON object");
  RunPoint p;
  p.index = j.at("index").get<int64_t>();
  p.seed = j.at("seed").get<uint64_t>();
  p.run_id = j.at("run_id").get<std::string>();
  const auto c = nlohmann::json::parse(j.at("config_json").get<std::string>(), nullptr, false);
  ATTN_CHECK(!c.is_discarded() && c.is_object(), "run point: config_json is not a JSON object");
  p.config = run_config_defaults(c.at("task").get<std::string>(), c.at("model").get<std::string>());
  RunConfig& config = p.config;
  params_set_json(config.task_params, c.at("task_params"), "run point");
  params_set_json(config.model_params, c.at("model_params"), "run point");
  params_set_json(config.train_params, c.at("train"), "run point");
  params_set_json(config.eval_params, c.at("eval"), "run point");
  ATTN_CHECK(c.at("seed").get<uint64_t>() == p.seed,
             "run point: the seed differs from config_json's");
  p.config_json = run_config_json(config, p.seed);
  ATTN_CHECK(hash_hex(p.config_json) == p.run_id,
             "run " + p.run_id + " resolves to a different configuration on this rank; run the "
             "same attnlab build on every rank");
  config.probes = probes_parse(j.at("probes").get<std::string>());
  for (const auto& [dotted, v] : j.at("execution").items()) {
    const auto dot = dotted.find('.');
    Params* section = run_config_section(config, dotted.substr(0, dot));
    ATTN_CHECK(section != nullptr, "run point: unknown section in " + dotted);
    section->set(dotted.substr(dot + 1), param_value_from_json(v, "run point: " + dotted));
  }
  return p;
}

}  // namespace attn
