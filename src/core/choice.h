// A string choice (a schema key such as model.temperature) parsed once into an enum.
//
// Each enum keeps one table of {value, name} rows next to its declaration; the schema row
// takes its allowed values from the same table (choice_names), the config builder parses the
// key with choice_parse, and the code below compares enums, never strings. Example:
//   enum class LrScheduleKind { constant, cosine };
//   inline constexpr Choice<LrScheduleKind> kLrScheduleKinds[] = {
//       {LrScheduleKind::constant, "constant"}, {LrScheduleKind::cosine, "cosine"}};
//   LrScheduleKind k = choice_parse(text, kLrScheduleKinds, "train.schedule");
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attn {

template <class E>
struct Choice {
  E value;
  const char* name;
};

// Throws UserError "unknown WHAT 'TEXT' (did you mean ...); choices: a, b, c".
[[noreturn]] void choice_unknown(const std::string& text, const std::vector<std::string>& names,
                                 const std::string& what);

template <class E, size_t K>
std::vector<std::string> choice_names(const Choice<E> (&table)[K]) {
  std::vector<std::string> names;
  for (const Choice<E>& c : table) names.emplace_back(c.name);
  return names;
}

// The value named `text`, or null: for parsers that word their own error (activation_parse).
template <class E, size_t K>
const E* choice_find(const std::string& text, const Choice<E> (&table)[K]) {
  for (const Choice<E>& c : table)
    if (text == c.name) return &c.value;
  return nullptr;
}

template <class E, size_t K>
E choice_parse(const std::string& text, const Choice<E> (&table)[K], const std::string& what) {
  if (const E* value = choice_find(text, table)) return *value;
  choice_unknown(text, choice_names(table), what);
}

// The name of a value; "?" for a value not in the table (a programming error).
template <class E, size_t K>
const char* choice_name(E value, const Choice<E> (&table)[K]) {
  for (const Choice<E>& c : table)
    if (c.value == value) return c.name;
  return "?";
}

}  // namespace attn
