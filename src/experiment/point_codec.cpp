// JSON form of a run point, and its re-resolution on the receiving side.
#include "experiment/point_codec.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "models/model_registry.h"
#include "tasks/task.h"

namespace attn {
namespace {

const Params* section_of(const RunConfig& c, const std::string& section) {
  if (section == "task") return &c.task_params;
  if (section == "model") return &c.model_params;
  if (section == "train") return &c.train_params;
  if (section == "eval") return &c.eval_params;
  return nullptr;
}

ParamValue value_from_json(const nlohmann::json& v, const std::string& key) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::vector<double> list;
    for (const auto& x : v) {
      ATTN_CHECK(x.is_number(), "run point: " + key + " must be a list of numbers");
      list.push_back(x.get<double>());
    }
    return list;
  }
  throw UserError("run point: " + key + " has an unsupported JSON value " + v.dump());
}

nlohmann::json value_to_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

void params_set_json(Params& p, const nlohmann::json& object) {
  ATTN_CHECK(object.is_object(), "run point: section " + p.section() + " is not a JSON object");
  for (const auto& [name, v] : object.items()) p.set(name, value_from_json(v, p.section() + "." + name));
}

}  // namespace

std::string run_point_encode(const RunPoint& point) {
  nlohmann::json j;
  j["index"] = point.index;
  j["seed"] = point.seed;
  j["run_id"] = point.run_id;
  j["config_json"] = point.config_json;
  nlohmann::json execution = nlohmann::json::object();
  for (const char* section : {"task", "model", "train", "eval"}) {
    const Params* p = section_of(point.config, section);
    for (size_t k = 0; k < p->schema().size(); ++k)
      if (p->schema()[k].execution_only)
        execution[std::string(section) + "." + p->schema()[k].name] = value_to_json(p->values()[k]);
  }
  j["execution"] = execution;
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
  RunConfig& config = p.config;
  config.task = c.at("task").get<std::string>();
  config.model = c.at("model").get<std::string>();
  const ModelInfo& model = model_find(config.model);
  config.task_params = task_default_params(config.task);
  config.model_params = Params("model", model.schema());
  std::vector<ParamSpec> train = train_common_schema();
  for (auto& spec : model.train_schema()) train.push_back(spec);
  config.train_params = Params("train", train);
  config.eval_params = Params("eval", eval_schema());
  params_set_json(config.task_params, c.at("task_params"));
  params_set_json(config.model_params, c.at("model_params"));
  params_set_json(config.train_params, c.at("train"));
  params_set_json(config.eval_params, c.at("eval"));
  ATTN_CHECK(c.at("seed").get<uint64_t>() == p.seed, "run point: the seed differs from config_json's");
  p.config_json = run_config_json(config, p.seed);
  ATTN_CHECK(hash_hex(p.config_json) == p.run_id,
             "run " + p.run_id + " resolves to a different configuration on this rank; run the "
             "same attnlab build on every rank");
  for (const auto& [dotted, v] : j.at("execution").items()) {
    const auto dot = dotted.find('.');
    Params* section = const_cast<Params*>(section_of(config, dotted.substr(0, dot)));
    ATTN_CHECK(section != nullptr, "run point: unknown section in " + dotted);
    section->set(dotted.substr(dot + 1), value_from_json(v, dotted));
  }
  return p;
}

}  // namespace attn
