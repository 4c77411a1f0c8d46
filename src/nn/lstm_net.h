// LstmNet: the recurrent comparator (spec sanford2023 §1.5, §7 A13).
//
// `layers` stacked LSTM layers of `hidden` units read x_1 … x_T (a bidirectional layer also
// reads them backwards and concatenates both directions, 2·hidden features).
// Read-out (per output position i, then a head: linear, or MLP of head_width):
//   "final" (default): [s; x_i] where s is the state after the whole sequence (the last
//     layer's h at t = T−1; bidirectional: with the backward direction's h at t = 0), so
//     every output is emitted after reading everything (the strongest streaming model the
//     bound still covers);
//   "per_position": the last layer's features at position i (causal when unidirectional).
// With T_out = 1 the output is position 0's. Sizes: hidden, layers, and state_size = the
// floats carried between tokens (h and c of every layer and direction).
// Parameter tensors: lstm<l>[.reverse].{wx, wh, b}, head.*.
#pragma once

#include <string>
#include <vector>

#include "nn/mlp_block.h"
#include "nn/net.h"

namespace attn {

struct LstmNetConfig {
  int64_t hidden = 64, layers = 1;
  bool bidirectional = false;
  std::string readout = "final";  // "final" | "per_position"
  int64_t head_width = 0;         // 0: linear head
  Activation activation = Activation::relu;  // the head MLP's
  int64_t T = 1, d_in = 1, T_out = 1, d_out = 1;
  std::string name = "lstm";
};

template <class T>
class LstmNet : public Net<T> {
 public:
  explicit LstmNet(const LstmNetConfig& config);
  void forward(const T* x, int64_t B, T* y) override;
  void backward(const T* dy) override;
  void init(uint64_t seed) override;
  std::vector<std::pair<std::string, double>> sizes() const override;

 private:
  struct Direction {
    int wx = -1, wh = -1, b = -1;
    std::vector<T> h, c, tanh_c, gates;
  };
  int64_t dirs() const { return c_.bidirectional ? 2 : 1; }
  int64_t features() const { return dirs() * c_.hidden; }
  // Layer l's output (B, T, features): its h when it has one direction (no copy), else both
  // directions' h side by side in layer_out_[l].
  const T* layer_output(int64_t l) const {
    return dirs() == 1 ? layer_[l][0].h.data() : layer_out_[l].data();
  }
  LstmNetConfig c_;
  std::vector<std::vector<Direction>> layer_;  // [layer][direction]
  std::vector<std::vector<T>> layer_out_;      // [layer] (B, T, features); bidirectional only
  MlpBlock<T> head_;
  int64_t head_in_ = 0, B_ = 0;
  const T* x_ = nullptr;
  std::vector<T> head_in_buf_, head_out_;
  void final_state_backward(const T* d_head_out);
  // Backward scratch, reused across steps.
  std::vector<T> d_head_out_, d_head_in_, d_out_, dh_, d_below_[2], d_state_sum_, d_state_;
};

}  // namespace attn
