// Parameter schema, parsing and validation.
#include "core/params.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/error.h"
#include "core/front_option.h"
#include "core/suggest.h"

namespace attn {

namespace {

ParamSpec param_row(std::string name, ParamType type, ParamValue def, std::string help,
                    std::vector<std::string> choices = {},
                    double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity()) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.default_value = std::move(def);
  spec.help = std::move(help);
  spec.choices = std::move(choices);
  spec.min = min;
  spec.max = max;
  return spec;
}

// A name list written as text: "a,b", "[a, b]" or "[\"a\", \"b\"]" ("" and "[]": empty). Names are
// trimmed and unquoted; an empty one is kept, for check_value to refuse.
std::vector<std::string> name_list_parse(std::string text) {
  auto trim = [](std::string t) {
    t.erase(0, t.find_first_not_of(" \t"));
    t.erase(t.find_last_not_of(" \t") + 1);
    return t;
  };
  text = trim(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
    text = trim(text.substr(1, text.size() - 2));
  std::vector<std::string> names;
  if (text.empty()) return names;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    std::string name = trim(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
      name = name.substr(1, name.size() - 2);
    names.push_back(name);
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

}  // namespace

ParamSpec param_int(std::string name, int64_t def, std::string help, double min, double max) {
  return param_row(std::move(name), ParamType::Int, def, std::move(help), {}, min, max);
}
ParamSpec param_real(std::string name, double def, std::string help, double min, double max) {
  return param_row(std::move(name), ParamType::Real, def, std::move(help), {}, min, max);
}
ParamSpec param_bool(std::string name, bool def, std::string help) {
  return param_row(std::move(name), ParamType::Bool, def, std::move(help));
}
ParamSpec param_choice(std::string name, std::string def, std::vector<std::string> choices,
                       std::string help) {
  return param_row(std::move(name), ParamType::String, std::move(def), std::move(help),
                   std::move(choices));
}

ParamSpec param_real_list(std::string name, std::vector<double> def, std::string help, double min,
                          double max) {
  return param_row(std::move(name), ParamType::RealList, std::move(def), std::move(help), {}, min,
                   max);
}

ParamSpec param_name_list(std::string name, std::vector<std::string> def, std::string help,
                          std::vector<std::string> choices) {
  return param_row(std::move(name), ParamType::NameList, std::move(def), std::move(help),
                   std::move(choices));
}

ParamSpec param_id_omit_default(ParamSpec spec) {
  spec.id_omit_default = true;
  return spec;
}

ParamSpec param_label_only(ParamSpec spec) {
  spec.label_only = true;
  return spec;
}

ParamSpec param_renamed(ParamSpec spec, std::string stored_as) {
  spec.stored_as = std::move(stored_as);
  return spec;
}

const std::string& param_stored_name(const ParamSpec& spec) {
  return spec.stored_as.empty() ? spec.name : spec.stored_as;
}

ParamItem param_item_parse(const std::string& item, const std::string& form) {
  const auto eq = item.find('=');
  const auto dot = item.substr(0, eq == std::string::npos ? 0 : eq).find('.');
  ParamItem out;
  if (eq != std::string::npos && dot != std::string::npos) {
    out.section = item.substr(0, dot);
    out.key = item.substr(dot + 1, eq - dot - 1);
  } else if (eq != std::string::npos) {
    out.key = item.substr(0, eq);
  }
  ATTN_CHECK(
      eq != std::string::npos && !out.key.empty() &&
          (dot == std::string::npos || !out.section.empty()),
      std::string(front_option(FrontOption::kSet)) + " '" + item + "' must look like " + form);
  out.value = item.substr(eq + 1);
  return out;
}

const char* param_type_name(ParamType type) {
  switch (type) {
    case ParamType::Bool: return "a boolean (true/false)";
    case ParamType::Int: return "an integer";
    case ParamType::Real: return "a number";
    case ParamType::String: return "a string";
    case ParamType::RealList: return "a list of numbers";
    case ParamType::NameList: return "a list of names";
  }
  return "?";
}

std::string param_value_text(const ParamValue& value) {
  if (auto* list = std::get_if<std::vector<double>>(&value)) {
    std::string out = "[";
    for (size_t k = 0; k < list->size(); ++k)
      out += (k ? ", " : "") + param_value_text(ParamValue((*list)[k]));
    return out + "]";
  }
  if (auto* names = std::get_if<std::vector<std::string>>(&value)) {
    std::string out = "[";
    for (size_t k = 0; k < names->size(); ++k) out += (k ? ", " : "") + json_quote((*names)[k]);
    return out + "]";
  }
  if (auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&value)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  return std::get<std::string>(value);
}

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

Params::Params(std::string section, std::vector<ParamSpec> schema)
    : section_(std::move(section)), schema_(std::move(schema)) {
  for (const auto& spec : schema_) values_.push_back(spec.default_value);
}

size_t Params::index_of(const std::string& key) const {
  std::vector<std::string> names;
  for (size_t k = 0; k < schema_.size(); ++k) {
    if (schema_[k].name == key || (!key.empty() && schema_[k].stored_as == key)) return k;
    names.push_back(schema_[k].name);
  }
  const std::string known = join_names(names);
  throw UserError(
      "unknown parameter '" + section_ + "." + key + "'" + did_you_mean(key, names) +
      (known.empty() ? "; this " + section_ + " takes no parameters" : "; known: " + known));
}

bool Params::has(const std::string& key) const {
  for (const auto& spec : schema_)
    if (spec.name == key || (!key.empty() && spec.stored_as == key)) return true;
  return false;
}

std::string Params::stored_key(const std::string& key) const {
  for (const auto& spec : schema_)
    if (spec.name == key || (!key.empty() && spec.stored_as == key)) return param_stored_name(spec);
  return key;
}

void Params::check_value(const ParamSpec& spec, const ParamValue& value) const {
  const std::string where = section_ + "." + spec.name;
  if (spec.type == ParamType::RealList) {
    for (double x : std::get<std::vector<double>>(value)) {
      ATTN_CHECK(std::isfinite(x) && x >= spec.min && x <= spec.max,
                 where + " = " + param_value_text(value) + ": every element must be finite and " +
                     (spec.min > -1e299 ? ">= " + param_value_text(ParamValue(spec.min)) : "") +
                     (spec.min > -1e299 && spec.max < 1e299 ? " and " : "") +
                     (spec.max < 1e299 ? "<= " + param_value_text(ParamValue(spec.max)) : ""));
    }
  }
  if (spec.type == ParamType::Int || spec.type == ParamType::Real) {
    const double x = spec.type == ParamType::Int ? static_cast<double>(std::get<int64_t>(value))
                                                 : std::get<double>(value);
    ATTN_CHECK(std::isfinite(x), where + " must be finite, got " + param_value_text(value));
    if (x < spec.min || x > spec.max) {
      auto bound = [&](double b) {
        return spec.type == ParamType::Int ? std::to_string(static_cast<int64_t>(b))
                                           : param_value_text(ParamValue(b));
      };
      const bool has_min = spec.min > -1e299, has_max = spec.max < 1e299;
      const std::string range = has_min && has_max
                                    ? "between " + bound(spec.min) + " and " + bound(spec.max)
                                    : has_min ? ">= " + bound(spec.min) : "<= " + bound(spec.max);
      throw UserError(where + " = " + param_value_text(value) + " is out of range: use a value " +
                      range);
    }
  }
  if (spec.type == ParamType::NameList) {
    for (const std::string& name : std::get<std::vector<std::string>>(value)) {
      ATTN_CHECK(!name.empty(),
                 where + " = " + param_value_text(value) +
                     ": a name is empty; write a list of names, e.g. [\"a\", \"b\"]");
      if (spec.choices.empty()) continue;
      bool known = false;
      for (const auto& c : spec.choices) known = known || c == name;
      ATTN_CHECK(known, where + ": '" + name + "' is not allowed" +
                            did_you_mean(name, spec.choices) +
                            "; choose among: " + join_names(spec.choices));
    }
  }
  if (spec.type == ParamType::String && !spec.choices.empty()) {
    const auto& s = std::get<std::string>(value);
    for (const auto& c : spec.choices)
      if (c == s) return;
    const std::string list = join_names(spec.choices);
    throw UserError(where + " = '" + s + "' is not allowed" + did_you_mean(s, spec.choices) +
                    "; choose one of: " + list);
  }
}

void Params::set(const std::string& key, const ParamValue& value) {
  const size_t k = index_of(key);
  const ParamSpec& spec = schema_[k];
  ParamValue v = value;
  if (spec.type == ParamType::Real && std::holds_alternative<int64_t>(v))
    v = static_cast<double>(std::get<int64_t>(v));
  if (spec.type == ParamType::RealList && std::holds_alternative<double>(v))
    v = std::vector<double>{std::get<double>(v)};
  if (spec.type == ParamType::RealList && std::holds_alternative<int64_t>(v))
    v = std::vector<double>{static_cast<double>(std::get<int64_t>(v))};
  if (spec.type == ParamType::NameList) {
    if (const auto* text = std::get_if<std::string>(&v)) {
      v = name_list_parse(*text);
    } else if (const auto* list = std::get_if<std::vector<double>>(&v); list && list->empty()) {
      v = std::vector<std::string>{};  // [] reads as an empty list of numbers
    }
  }
  const bool type_ok =
      (spec.type == ParamType::Bool && std::holds_alternative<bool>(v)) ||
      (spec.type == ParamType::Int && std::holds_alternative<int64_t>(v)) ||
      (spec.type == ParamType::Real && std::holds_alternative<double>(v)) ||
      (spec.type == ParamType::String && std::holds_alternative<std::string>(v)) ||
      (spec.type == ParamType::RealList && std::holds_alternative<std::vector<double>>(v)) ||
      (spec.type == ParamType::NameList && std::holds_alternative<std::vector<std::string>>(v));
  const std::string got = std::holds_alternative<std::string>(value)
                              ? "the string \"" + std::get<std::string>(value) + "\""
                              : param_value_text(value);
  ATTN_CHECK(type_ok, section_ + "." + spec.name + " must be " + param_type_name(spec.type) +
                          ", got " + got);
  check_value(spec, v);
  values_[k] = std::move(v);
}

void Params::set_text(const std::string& key, const std::string& text) {
  const ParamSpec& spec = schema_[index_of(key)];
  const std::string where = section_ + "." + spec.name;
  const std::string bad = where + " must be " + param_type_name(spec.type) + ", got '" + text + "'";
  switch (spec.type) {
    case ParamType::Bool:
      if (text == "true" || text == "1") return set(key, true);
      if (text == "false" || text == "0") return set(key, false);
      throw UserError(bad);
    case ParamType::Int: {
      errno = 0;
      char* end = nullptr;
      const long long x = std::strtoll(text.c_str(), &end, 10);
      ATTN_CHECK(!text.empty() && *end == '\0' && errno == 0, bad);
      return set(key, static_cast<int64_t>(x));
    }
    case ParamType::Real: {
      errno = 0;
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      ATTN_CHECK(!text.empty() && *end == '\0' && errno == 0, bad);
      return set(key, x);
    }
    case ParamType::String:
    case ParamType::NameList: return set(key, text);  // set() splits a name list's text
    case ParamType::RealList: {
      std::string body = text;
      if (!body.empty() && body.front() == '[') {
        ATTN_CHECK(body.back() == ']', bad);
        body = body.substr(1, body.size() - 2);
      }
      std::vector<double> list;
      size_t start = 0;
      while (start <= body.size()) {
        const size_t comma = body.find(',', start);
        std::string item = body.substr(start, comma == std::string::npos ? std::string::npos
                                                                          : comma - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty() || comma != std::string::npos) {
          errno = 0;
          char* end = nullptr;
          const double x = std::strtod(item.c_str(), &end);
          ATTN_CHECK(!item.empty() && *end == '\0' && errno == 0, bad);
          list.push_back(x);
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return set(key, list);
    }
  }
}

const ParamValue& Params::value_of(const std::string& key, ParamType type) const {
  const size_t k = index_of(key);
  ATTN_ASSERT(schema_[k].type == type, "parameter " + key + " read with the wrong type");
  return values_[k];
}

int64_t Params::get_int(const std::string& key) const {
  return std::get<int64_t>(value_of(key, ParamType::Int));
}
double Params::get_real(const std::string& key) const {
  return std::get<double>(value_of(key, ParamType::Real));
}
bool Params::get_bool(const std::string& key) const {
  return std::get<bool>(value_of(key, ParamType::Bool));
}
const std::string& Params::get_string(const std::string& key) const {
  return std::get<std::string>(value_of(key, ParamType::String));
}
const std::vector<double>& Params::get_real_list(const std::string& key) const {
  return std::get<std::vector<double>>(value_of(key, ParamType::RealList));
}
const std::vector<std::string>& Params::get_name_list(const std::string& key) const {
  return std::get<std::vector<std::string>>(value_of(key, ParamType::NameList));
}

std::string Params::to_json() const {
  std::string out = "{";
  bool first = true;
  for (size_t k = 0; k < schema_.size(); ++k) {
    if (schema_[k].execution_only) continue;
    if (schema_[k].id_omit_default && values_[k] == schema_[k].default_value) continue;
    if (!first) out += ", ";
    first = false;
    out += json_quote(param_stored_name(schema_[k])) + ": ";
    const ParamValue& v = values_[k];
    if (std::holds_alternative<std::string>(v)) {
      out += json_quote(std::get<std::string>(v));
    } else if (std::holds_alternative<std::vector<std::string>>(v)) {
      out += param_value_text(v);  // ["a", "b"]: JSON already
    } else if (auto* list = std::get_if<std::vector<double>>(&v)) {
      out += "[";
      for (size_t i = 0; i < list->size(); ++i)
        out += (i ? ", " : "") + param_value_text(ParamValue((*list)[i]));
      out += "]";
    } else if (std::holds_alternative<double>(v)) {
      // Keep reals recognisable as reals in JSON: 1 -> 1.0.
      std::string text = param_value_text(v);
      if (text.find_first_of(".eEni") == std::string::npos) text += ".0";
      out += text;
    } else {
      out += param_value_text(v);
    }
  }
  return out + "}";
}

}  // namespace attn
