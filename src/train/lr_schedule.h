// Learning-rate schedules: the factor multiplying train.lr at step t (1-based) of `total`.
//   constant: 1
//   cosine:   min_factor + (1 − min_factor) · ½(1 + cos(π · (t − warmup) / (total − warmup)))
// Either starts with a linear warm-up over `warmup` steps: factor · t / warmup for t ≤ warmup.
#pragma once

#include <cstdint>
#include "core/choice.h"

namespace attn {

enum class LrScheduleKind { constant, cosine };
inline constexpr Choice<LrScheduleKind> kLrScheduleKinds[] = {
    {LrScheduleKind::constant, "constant"}, {LrScheduleKind::cosine, "cosine"}};

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::constant;
  int64_t warmup = 0;
  double min_factor = 0;
};

double lr_schedule_factor(const LrSchedule& schedule, int64_t step, int64_t total);

}  // namespace attn
