// TOML (toml++) -> SpecTree.
#include "experiment/spec_tree.h"

#include <toml++/toml.h>

#include <sstream>

#include "core/error.h"

namespace attn {
namespace {

SpecTree from_toml(const toml::node& node, const std::string& path) {
  SpecTree t;
  t.line = static_cast<int>(node.source().begin.line);
  if (const auto* table = node.as_table()) {
    t.kind = SpecTree::Kind::Table;
    for (auto&& [key, value] : *table)
      t.entries.emplace_back(std::string(key.str()), from_toml(value, path));
  } else if (const auto* array = node.as_array()) {
    t.kind = SpecTree::Kind::Array;
    for (auto&& value : *array) t.items.push_back(from_toml(value, path));
  } else {
    t.kind = SpecTree::Kind::Value;
    if (auto b = node.value_exact<bool>())
      t.value = *b;
    else if (auto i = node.value_exact<int64_t>())
      t.value = *i;
    else if (auto d = node.value_exact<double>())
      t.value = *d;
    else if (auto s = node.value_exact<std::string>())
      t.value = *s;
    else
      throw UserError(path + ":" + std::to_string(t.line) +
                      ": dates and times are not supported in specs; use a number or a string");
  }
  return t;
}

}  // namespace

SpecTree::SpecTree() = default;

SpecTree* SpecTree::find(const std::string& key) {
  for (auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

const SpecTree* SpecTree::find(const std::string& key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

SpecTree& SpecTree::at(const std::string& key, int line) {
  if (SpecTree* found = find(key)) return *found;
  SpecTree table;
  table.line = line;
  entries.emplace_back(key, std::move(table));
  return entries.back().second;
}

void SpecTree::erase(const std::string& key) {
  for (auto it = entries.begin(); it != entries.end(); ++it)
    if (it->first == key) {
      entries.erase(it);
      return;
    }
}

SpecTree spec_tree_parse_file(const std::string& path) {
  try {
    const toml::table table = toml::parse_file(path);
    return from_toml(table, path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source();
    if (where.begin.line == 0)
      throw IoError(path + ": cannot read the spec (" + std::string(e.description()) +
                    "); check the path");
    throw UserError(path + ":" + std::to_string(where.begin.line) + ": TOML syntax error: " +
                    std::string(e.description()));
  }
}

SpecTree spec_tree_parse_value(const std::string& text, const std::string& where) {
  try {
    const toml::table table = toml::parse("v = " + text);
    return from_toml(*table.get("v"), where);
  } catch (const toml::parse_error&) {
    ATTN_CHECK(!text.empty() && text.find_first_of("[]{}\"'=") == std::string::npos,
               where + ": cannot read the value '" + text +
                   "'; write it in TOML syntax, e.g. 16, 0.5, true, \"text\" or [1, 2]");
    SpecTree t;
    t.kind = SpecTree::Kind::Value;
    t.value = text;  // a bare word: a string
    return t;
  }
}

}  // namespace attn
