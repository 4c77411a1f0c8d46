// TargetKind: what a task's targets Y (n × T_out × d_out) are. It selects the training loss
// (ops/loss.h: loss_of_target) and the metrics (train/metrics.h).
//
//   real         any finite values                                      loss mse
//   binary       every entry 0 or 1 (one label per entry)               loss bce (with logits)
//   categorical  one label per output position over C = d_out classes, one-hot in that
//                position's d_out entries; an all-zero row marks an ignored position
//                (excluded from the loss and the token metrics)        loss cross_entropy
//
// A task declares its kind in TaskShape::target. Data that no task produced (arrays from
// Python, a dataset file, hand-made batches) leaves it unset, and target_kind_of infers it
// the way the previous release chose the loss: binary when every target is 0 or 1, else
// real (never categorical).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/choice.h"

namespace attn {

enum class TargetKind { real, binary, categorical };
inline constexpr Choice<TargetKind> kTargetKinds[] = {{TargetKind::real, "real"},
                                                      {TargetKind::binary, "binary"},
                                                      {TargetKind::categorical, "categorical"}};
inline constexpr int kTargetKindCount = 3;
static_assert(sizeof(kTargetKinds) / sizeof(kTargetKinds[0]) == kTargetKindCount,
              "every TargetKind needs a row in kTargetKinds");

// The declared kind, else binary when every value of y is 0 or 1, else real.
TargetKind target_kind_of(const std::optional<TargetKind>& declared, const std::vector<double>& y);

// Whether the d_out values of one output position are an ignored position (all zero).
bool target_row_ignored(const double* row, int64_t d_out);

}  // namespace attn
