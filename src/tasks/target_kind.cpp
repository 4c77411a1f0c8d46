// Target kinds: the inference for undeclared data (target_kind.h).
#include "tasks/target_kind.h"

#include <algorithm>

namespace attn {

TargetKind target_kind_of(const std::optional<TargetKind>& declared, const std::vector<double>& y) {
  if (declared) return *declared;
  const bool binary =
      std::all_of(y.begin(), y.end(), [](double v) { return v == 0.0 || v == 1.0; });
  return binary ? TargetKind::binary : TargetKind::real;
}

bool target_row_ignored(const double* row, int64_t d_out) {
  return std::all_of(row, row + d_out, [](double v) { return v == 0.0; });
}

}  // namespace attn
