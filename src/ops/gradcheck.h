// The gradient-check harness: one table of rows, one per op or model configuration, each
// checked against central finite differences in double precision.
//
// A row builds a problem: named input tensors (data, parameters), a forward function
// inputs → outputs, and the analytic backward (dout → ∂<dout, forward>/∂input for each
// input). The harness draws a random dout, and for up to `max_probes` entries of every
// differentiable input compares the analytic gradient with
//   (f(x + h) − f(x − h)) / 2h  of  L = <dout, forward(x)>.
// Error of a probe: |analytic − numeric| / max(|analytic|, |numeric|, 1e-3 · the largest
// |analytic| entry of that tensor, 1e-12). Each differentiable tensor gets its own result,
// which passes when its largest probe error is ≤ the row's tolerance (1e-6 unless the row
// says otherwise).
// Non-smooth points (relu at 0, ties): rows draw inputs away from them; as a guard, a probe
// whose difference quotients at h and h/2 disagree by more than the tolerance straddles a
// kink and is skipped and counted; more than 5 % of a tensor's probes skipped fails it.
// A new op or model is not done until it has rows in the table: an op's rows next to its
// code (gradcheck_rows_<group>.cpp, declared below), a model's in
// models/gradcheck_rows_models.cpp; models/gradcheck_table.h assembles them. This file and
// gradcheck.cpp hold only the harness.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn {

struct GradTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> data;
  bool differentiable = true;  // false: data such as indices or targets, not probed
};

using GradInputs = std::vector<GradTensor>;

struct GradcheckProblem {
  GradInputs inputs;
  std::function<std::vector<double>(const GradInputs& inputs)> forward;
  // One gradient per input, same order and size (empty for non-differentiable inputs).
  std::function<std::vector<std::vector<double>>(const GradInputs& inputs,
                                                  const std::vector<double>& dout)>
      backward;
};

struct GradcheckRow {
  std::string name;   // e.g. "linear", "attention/exclude_self", "model/attention"
  std::string group;  // "op" or "model"
  std::function<GradcheckProblem(uint64_t seed)> make;
  double tolerance = 1e-6;
  int64_t max_probes = 200;  // per tensor; larger tensors are probed at random entries
  double step = 1e-6;        // h, relative to max(1, |x|)
};

struct GradcheckResult {
  std::string row, tensor;
  int64_t probes = 0, skipped = 0;
  double max_error = 0;
  bool pass = false;
};

// Checks one row; one result per differentiable input tensor.
std::vector<GradcheckResult> gradcheck_run(const GradcheckRow& row, uint64_t seed);

// The op row groups, each defined next to the code it checks. The whole table (these and the
// models' rows) is assembled above the models: models/gradcheck_table.h.
void gradcheck_rows_basic(
    std::vector<GradcheckRow>& table);  // linear, activations, layernorm, losses, embedding
void gradcheck_rows_attention(
    std::vector<GradcheckRow>& table);  // attention, head_sum, third-order
void gradcheck_rows_lstm(std::vector<GradcheckRow>& table);       // lstm layer

// Helpers for rows: a tensor of the given shape with entries uniform in [lo, hi], or with
// magnitudes in [away, hi] and random signs (to stay clear of a kink at 0).
GradTensor gradcheck_uniform(const std::string& name, std::vector<int64_t> shape, uint64_t seed,
                             double lo, double hi);
GradTensor gradcheck_away_from_zero(const std::string& name, std::vector<int64_t> shape,
                                    uint64_t seed, double away, double hi);

}  // namespace attn
