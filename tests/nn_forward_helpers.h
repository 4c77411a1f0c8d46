// Test helpers for the attention models' options (test_nn_causal.cpp, test_nn_positions.cpp):
// a sequence task's shapes with one output row per token, and the forward of a freshly
// initialised network built from a model's defaults plus `set` (double precision).
// Shapes: x (B, T, d_in) → y (B, T, d_out).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/neural_models.h"
#include "tasks/task.h"

namespace attn::test_nn {

using Sets = std::vector<std::pair<std::string, std::string>>;

inline TaskShape per_token_shape(int64_t T, int64_t d_in, int64_t d_out) {
  TaskShape s;
  s.T = s.T_out = T;
  s.d_in = d_in, s.d_out = d_out;
  return s;
}

inline std::vector<double> net_forward(const std::string& model, const Sets& set,
                                       const TaskShape& shape, const std::vector<double>& x) {
  Params p = neural_default_params(model);
  for (const auto& [k, v] : set) p.set_text(k, v);
  auto net = neural_net_make<double>(model, p, shape);
  net->init(5);
  const int64_t B = static_cast<int64_t>(x.size()) / (shape.T * shape.d_in);
  std::vector<double> y(static_cast<size_t>(B * shape.T_out * shape.d_out));
  net->forward(x.data(), B, y.data());
  return y;
}

}  // namespace attn::test_nn
