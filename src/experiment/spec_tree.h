// A small mutable tree of TOML values, used while loading a spec: parsed from the file,
// merged with [quick], edited by --set, then turned into a Spec. Keeps file line numbers
// for error messages. Private to src/experiment.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/params.h"

namespace attn {

struct SpecTree {
  enum class Kind { Value, Array, Table };
  Kind kind = Kind::Table;
  ParamValue value;                                   // Kind::Value (never a list)
  std::vector<SpecTree> items;                        // Kind::Array
  std::vector<std::pair<std::string, SpecTree>> entries;  // Kind::Table, in file order
  int line = 0;

  // Declared, defined in spec_tree.cpp: clang cannot define it inside the class, where
  // pair<string, SpecTree> is still incomplete.
  SpecTree();
  SpecTree* find(const std::string& key);
  const SpecTree* find(const std::string& key) const;
  // The entry `key`, created as an empty table if missing.
  SpecTree& at(const std::string& key, int line = 0);
  void erase(const std::string& key);
};

// Parses a TOML file (UserError "FILE:LINE: ..." on a syntax error).
SpecTree spec_tree_parse_file(const std::string& path);
// Parses "VALUE" written in TOML syntax; a bare word that is not TOML becomes a string.
SpecTree spec_tree_parse_value(const std::string& text, const std::string& where);

}  // namespace attn
