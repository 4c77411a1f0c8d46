// The validation split's size (val_split.h).
#include "train/val_split.h"

#include <algorithm>
#include <cmath>

namespace attn {

int64_t val_split_count(double fraction, int64_t n) {
  if (!(fraction > 0)) return 0;
  return std::max<int64_t>(1, std::llround(fraction * static_cast<double>(n)));
}

}  // namespace attn
