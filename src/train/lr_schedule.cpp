// Learning-rate schedules (see lr_schedule.h).
#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attn {

double lr_schedule_factor(const LrSchedule& s, int64_t step, int64_t total) {
  if (s.warmup > 0 && step <= s.warmup) {
    return static_cast<double>(step) / static_cast<double>(s.warmup);
  }
  const double span = static_cast<double>(std::max<int64_t>(1, total - s.warmup));
  const double progress = std::clamp(static_cast<double>(step - s.warmup) / span, 0.0, 1.0);
  switch (s.kind) {
    case LrScheduleKind::constant: return 1.0;
    case LrScheduleKind::cosine:
      return s.min_factor + (1 - s.min_factor) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
    case LrScheduleKind::linear: return s.min_factor + (1 - s.min_factor) * (1 - progress);
  }
  return 1.0;  // not reached: every kind returns above
}

}  // namespace attn
