// Comparing a spec with the one a store's runs were made with (spec_change.h), on their
// spec_runs_json texts: {"seeds", "base": {key: value}, "scoped": {scope: {key: value}},
// "axes": [{"keys": [...], "values": [[...], ...]}]}.
#include "experiment/spec_change.h"

#include <tuple>

#include <nlohmann/json.hpp>

namespace attn {
namespace {

using Json = nlohmann::json;

std::string value_text(const Json& v) {
  if (v.is_null()) return "(not set)";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// "KEY: stored A, now B" for the first key of two {key: value} objects that differs.
std::string first_difference(const Json& stored, const Json& now, const std::string& prefix) {
  auto value = [](const Json& obj, const std::string& key) {
    return obj.is_object() && obj.contains(key) ? obj.at(key) : Json();
  };
  Json keys = Json::object();
  for (const Json* obj : {&stored, &now})
    if (obj->is_object())
      for (const auto& [k, v] : obj->items()) keys[k] = true;
  for (const auto& [k, unused] : keys.items()) {
    const Json a = value(stored, k), b = value(now, k);
    if (a != b) return prefix + k + ": stored " + value_text(a) + ", now " + value_text(b);
  }
  return "";
}

// The values of a one-key axis as a list; a zip axis's rows as they are.
Json axis_values(const Json& axis) {
  if (axis.at("keys").size() != 1) return axis.at("values");
  Json out = Json::array();
  for (const auto& row : axis.at("values")) out.push_back(row.at(0));
  return out;
}

std::string keys_text(const Json& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k.get<std::string>();
  return out;
}

// A key swept in one spec and fixed in the other, as "KEY: stored swept over [...], now 3"
// (or the reverse); the axes' layout when only their grouping or order differs.
std::string swept_keys_change(const Json& stored, const Json& now) {
  const auto swept_values = [](const Json& spec, const std::string& key) {
    for (const auto& axis : spec.at("axes"))
      for (size_t k = 0; k < axis.at("keys").size(); ++k)
        if (axis.at("keys")[k] == key) {
          Json values = Json::array();
          for (const auto& row : axis.at("values")) values.push_back(row.at(k));
          return values;
        }
    return Json();
  };
  const auto fixed_value = [](const Json& spec, const std::string& key) {
    const Json base = spec.value("base", Json::object());
    return value_text(base.contains(key) ? base.at(key) : Json());
  };
  for (const auto& [from, to, stored_side] :
       {std::tuple{&stored, &now, true}, std::tuple{&now, &stored, false}})
    for (const auto& axis : from->at("axes"))
      for (const auto& key_json : axis.at("keys")) {
        const std::string key = key_json.get<std::string>();
        if (!swept_values(*to, key).is_null()) continue;
        const std::string swept = "swept over " + swept_values(*from, key).dump();
        const std::string fixed = fixed_value(*to, key);
        return key + ": stored " + (stored_side ? swept : fixed) + ", now " +
               (stored_side ? fixed : swept);
      }
  std::string before, after;
  for (const auto& a : stored.at("axes")) before += "(" + keys_text(a.at("keys")) + ")";
  for (const auto& a : now.at("axes")) after += "(" + keys_text(a.at("keys")) + ")";
  return "the sweep's axes: stored " + before + ", now " + after;
}

}  // namespace

SpecChange spec_change(const std::string& stored_text, const std::string& now_text) {
  SpecChange change;
  const Json stored = Json::parse(stored_text, nullptr, false);
  const Json now = Json::parse(now_text, nullptr, false);
  if (!stored.is_object() || !stored.contains("axes") || !now.is_object()) {
    change.key = "the stored runs' spec is not recorded";
    return change;
  }
  // Which keys are swept, axis by axis (a key fixed before and swept now, or the reverse,
  // changes what the stored runs are).
  Json stored_keys = Json::array(), now_keys = Json::array();
  for (const auto& a : stored.at("axes")) stored_keys.push_back(a.at("keys"));
  for (const auto& a : now.at("axes")) now_keys.push_back(a.at("keys"));
  if (stored_keys != now_keys) {
    change.key = swept_keys_change(stored, now);
    return change;
  }
  change.key =
      first_difference(stored.value("base", Json::object()), now.value("base", Json::object()), "");
  if (!change.key.empty()) return change;
  const Json stored_scoped = stored.value("scoped", Json::object());
  const Json now_scoped = now.value("scoped", Json::object());
  Json scopes = Json::object();
  for (const Json* obj : {&stored_scoped, &now_scoped})
    for (const auto& [scope, unused] : obj->items()) scopes[scope] = true;
  for (const auto& [scope, unused] : scopes.items()) {
    change.key = first_difference(stored_scoped.value(scope, Json::object()),
                                  now_scoped.value(scope, Json::object()), scope + ".");
    if (!change.key.empty()) return change;
  }
  for (size_t i = 0; i < now.at("axes").size(); ++i) {
    const Json before = axis_values(stored.at("axes")[i]);
    const Json after = axis_values(now.at("axes")[i]);
    if (before != after)
      change.grid += (change.grid.empty() ? "" : "; ") + keys_text(now_keys[i]) + ": " +
                     before.dump() + " -> " + after.dump();
  }
  if (stored.value("seeds", Json()) != now.value("seeds", Json()))
    change.grid += (change.grid.empty() ? "" : "; ") + std::string("seeds: ") +
                   stored.value("seeds", Json()).dump() + " -> " +
                   now.value("seeds", Json()).dump();
  return change;
}

}  // namespace attn
