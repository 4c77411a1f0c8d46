// A tensor shape as messages print it, in Python's tuple spelling: (3, 4), (5,), ().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

inline std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

}  // namespace attn
