// Parameter values to and from JSON (params_json.h).
#include "core/params_json.h"

#include "core/error.h"

namespace attn {

nlohmann::json param_value_json(const ParamValue& value) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, value);
}

ParamValue param_value_from_json(const nlohmann::json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array() && !v.empty() && v[0].is_string()) {  // a list of names
    std::vector<std::string> names;
    for (const auto& x : v) {
      ATTN_CHECK(x.is_string(), where + " must be a list of names (strings) or of numbers");
      names.push_back(x.get<std::string>());
    }
    return names;
  }
  if (v.is_array()) {
    std::vector<double> list;
    for (const auto& x : v) {
      ATTN_CHECK(x.is_number(), where + " must be a list of numbers");
      list.push_back(x.get<double>());
    }
    return list;
  }
  throw UserError(where + " has an unsupported JSON value " + v.dump());
}

void params_set_json(Params& params, const nlohmann::json& object, const std::string& where) {
  ATTN_CHECK(object.is_object(), where + ": section " + params.section() + " is not a JSON object");
  for (const auto& [name, v] : object.items()) {
    const std::string key = params.section() + "." + name;
    try {
      params.set(name, param_value_from_json(v, key));
    } catch (const UserError& e) {
      throw UserError(where + ": " + e.what());
    }
  }
}

}  // namespace attn
