// Learning-rate schedules: the factor multiplying train.lr at step t (1-based) of `total`.
// After a linear warm-up over `warmup` steps (factor t / warmup for t ≤ warmup; none when
// warmup = 0), with p = clamp((t − warmup) / max(1, total − warmup), 0, 1):
//   constant: 1
//   cosine:   min_factor + (1 − min_factor) · ½(1 + cos(π · p))
//   linear:   min_factor + (1 − min_factor) · (1 − p)
// so cosine and linear reach min_factor at the last step (t = total). With min_factor = 0,
// linear is lr_lambda(t) of transformers' get_linear_schedule_with_warmup(optimizer, warmup,
// total) exactly: t / max(1, warmup) for t < warmup, else
// max(0, (total − t) / max(1, total − warmup)), for every t when warmup ≠ total (at
// warmup = total attnlab's last step ends the warm-up, factor 1, where lr_lambda gives 0).
// PyTorch's LambdaLR applies lr_lambda(k − 1) to the k-th optimiser step (0 first, under a
// warm-up); attnlab's step t runs at the factor of t: one scheduler step ahead.
#pragma once

#include <cstdint>

#include "core/choice.h"

namespace attn {

enum class LrScheduleKind { constant, cosine, linear };
inline constexpr Choice<LrScheduleKind> kLrScheduleKinds[] = {
    {LrScheduleKind::constant, "constant"},
    {LrScheduleKind::cosine, "cosine"},
    {LrScheduleKind::linear, "linear"}};

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::constant;
  int64_t warmup = 0;
  double min_factor = 0;
};

double lr_schedule_factor(const LrSchedule& schedule, int64_t step, int64_t total);

}  // namespace attn
