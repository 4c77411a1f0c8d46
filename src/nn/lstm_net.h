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

#include "core/huge_page_allocator.h"
#include "nn/mlp_block.h"
#include "nn/net.h"
#include "ops/sparse_rows.h"

namespace attn {

enum class LstmReadout { final, per_position };
inline constexpr Choice<LstmReadout> kLstmReadouts[] = {
    {LstmReadout::final, "final"}, {LstmReadout::per_position, "per_position"}};

struct LstmNetConfig {
  int64_t hidden = 64, layers = 1;
  bool bidirectional = false;
  LstmReadout readout = LstmReadout::final;
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
  // One direction of one layer: its parameter ids, and what forward() keeps for backward()
  // (B sequences of N = T tokens, hidden Hd): h (B, N, Hd); c and tanh(c) (N, B, Hd) and the gates
  // (N, B, 4·Hd), time-major as ops/lstm.h keeps them. On transparent huge pages: the backward
  // reads them back from L3 (12 MiB at B = 256, N = 16, Hd = 128), with 4 KiB pages through TLB
  // misses (docs/performance.md#lstm-huge-pages).
  struct Direction {
    int wx = -1, wh = -1, b = -1;
    std::vector<T, HugePageAllocator<T>> h, c, tanh_c, gates;
  };
  int64_t dirs() const { return c_.bidirectional ? 2 : 1; }
  int64_t features() const { return dirs() * c_.hidden; }
  // Layer l's output (B, T, features): its h when it has one direction (no copy), else both
  // directions' h side by side in acts_.layer_out[l].
  const T* layer_output(int64_t l) const {
    return dirs() == 1 ? layer_[l][0].h.data() : acts_.layer_out[l].data();
  }
  const SparseRows<T>* x_sparse() const {
    return acts_.x_is_sparse ? &acts_.x_sparse : nullptr;
  }
  void final_head_forward(const T* last);
  void final_state_backward(const T* d_head_out);
  // Whether the "final" head runs fused: one hidden relu layer, at most kLinearReluTiledMaxOut
  // outputs, x mostly zeros.
  bool final_head_fusable() const;

  LstmNetConfig c_;
  std::vector<std::vector<Direction>> layer_;  // [layer][direction]
  MlpBlock<T> head_;
  int64_t head_in_ = 0;  // the head's input width: features (+ d_in with the "final" read-out)
  // The rest of forward()'s cache, for the last batch (F = features()):
  struct Activations {
    int64_t B = 0;
    const T* x = nullptr;                  // the input (B, N, d_in), the caller's
    std::vector<std::vector<T>> layer_out;  // [layer] (B, N, F); bidirectional only
    std::vector<T> head_out;                // (B·N, d_out)
    // "final" read-out: the head's first layer on [s; x_i] without forming the rows
    // (nn/state_concat_linear.h): the states s (B, F) and the layer's per-sequence part
    // (B, o1); its output goes straight into the head's buffer (MlpBlock::first_output).
    std::vector<T> state, first_state_part;
    // Whether the head ran fused (final_head_fusable(); ops/sparse_relu_head.h), keeping only
    // first_state_part.
    bool head_fused = false;
    // x's non-zeros when it is mostly zeros (layer 0's forward and backward, the head).
    SparseRows<T> x_sparse;
    bool x_is_sparse = false;
  };
  // Backward scratch, reused across steps: gradients w.r.t. the head's output, the last
  // layer's output (B, N, F), one direction's h (B, N, Hd), the layer below's output (two
  // buffers, alternating), and the final state's (B, o1) and (B, F). out and dh, read a row at a
  // time by the backward's steps, on huge pages as the caches are.
  struct ActivationGrads {
    std::vector<T> head_out;
    std::vector<T, HugePageAllocator<T>> out, dh;
    std::vector<T> below[2], state_sum, state;
  };
  Activations acts_;
  ActivationGrads grad_acts_;
};

}  // namespace attn
