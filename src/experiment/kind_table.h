// A table of kinds (claim kinds, plot kinds): rows indexed by an enum class whose last
// enumerator is kCount, each row holding `kind` (its enumerator) and `name` (its spelling in a
// spec and in spec.json), with the lookups every such table needs. The table's .cpp keeps the
// rows in enum order and static_asserts their count; a test checks the order.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/error.h"

namespace attn {

// The number of kinds of an enum class E (its kCount).
template <class E>
inline constexpr size_t kind_count = static_cast<size_t>(E::kCount);

template <class Row>
struct KindTable {
  using Kind = decltype(Row::kind);
  const Row* rows;
  size_t count;

  const Row* begin() const { return rows; }
  const Row* end() const { return rows + count; }
  const Row& row(Kind kind) const {
    const size_t k = static_cast<size_t>(kind);
    ATTN_ASSERT(k < count && rows[k].kind == kind, "kind table: a row missing or out of order");
    return rows[k];
  }
  const char* name(Kind kind) const { return row(kind).name; }
  // The kind spelt `text`, or null.
  const Kind* find(const std::string& text) const {
    for (const Row& r : *this)
      if (text == r.name) return &r.kind;
    return nullptr;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Row& r : *this) out.emplace_back(r.name);
    return out;
  }
};

}  // namespace attn
