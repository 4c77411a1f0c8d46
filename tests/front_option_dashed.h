// For tests: option spellings shaped like the command line's ("--" and the library name with
// '-' for '_': query_pattern -> --query-pattern), so library messages read as the CLI words
// them where its flag is so derived (not --out, --set, --mpi), and an RAII guard that installs
// them for one test and restores the library's names after it.
#pragma once

#include <algorithm>
#include <array>
#include <string>

#include "core/front_option.h"

namespace attn::test {

inline const FrontOptionSpellings& front_option_dashed() {
  static std::array<std::string, kFrontOptionCount> text;
  static FrontOptionSpellings table{};
  if (table[0] == nullptr)
    for (size_t k = 0; k < kFrontOptionCount; ++k) {
      text[k] = "--" + std::string(front_option_library_names()[k]);
      std::replace(text[k].begin(), text[k].end(), '_', '-');
      table[k] = text[k].c_str();
    }
  return table;
}

struct DashedOptionSpellings {
  DashedOptionSpellings() { front_option_spellings_set(front_option_dashed()); }
  ~DashedOptionSpellings() { front_option_spellings_set(front_option_library_names()); }
  DashedOptionSpellings(const DashedOptionSpellings&) = delete;
  DashedOptionSpellings& operator=(const DashedOptionSpellings&) = delete;
};

}  // namespace attn::test
