// LstmNet (see lstm_net.h).
#include "nn/lstm_net.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "nn/state_concat_linear.h"
#include "nn/token_outputs.h"
#include "ops/blas.h"
#include "ops/linear_relu_backward.h"
#include "ops/lstm.h"

namespace attn {

template <class T>
LstmNet<T>::LstmNet(const LstmNetConfig& config) : c_(config) {
  const std::string& n = c_.name;
  token_outputs_check(n, c_.T, c_.T_out);
  auto& ps = this->params_;
  const int64_t Hd = c_.hidden;
  layer_.resize(c_.layers);
  for (int64_t l = 0; l < c_.layers; ++l) {
    const int64_t C = l == 0 ? c_.d_in : features();
    layer_[l].resize(dirs());
    for (int64_t d = 0; d < dirs(); ++d) {
      const std::string p = "lstm" + std::to_string(l) + (d == 1 ? ".reverse" : "");
      layer_[l][d].wx = ps.add(p + ".wx", {C, 4 * Hd});
      layer_[l][d].wh = ps.add(p + ".wh", {Hd, 4 * Hd});
      layer_[l][d].b = ps.add(p + ".b", {4 * Hd});
    }
  }
  head_in_ = features() + (c_.readout == LstmReadout::final ? c_.d_in : 0);
  std::vector<int64_t> dims{head_in_};
  if (c_.head_width > 0) dims.push_back(c_.head_width);
  dims.push_back(c_.d_out);
  head_.declare(ps, "head", dims, c_.activation);
  ps.allocate();
}

template <class T>
void LstmNet<T>::init(uint64_t seed) {
  auto& ps = this->params_;
  const std::string stream = c_.name + ".init";
  const double bound = 1.0 / std::sqrt(static_cast<double>(c_.hidden));  // PyTorch's LSTM init
  for (auto& dirs_of_layer : layer_)
    for (auto& d : dirs_of_layer)
      for (int id : {d.wx, d.wh, d.b})
        param_init_uniform(ps.value(id), ps.entry(id).size, bound, seed,
                           stream + "." + ps.entry(id).name);
  head_.init(ps, seed, stream);
}

template <class T>
void LstmNet<T>::forward(const T* x, int64_t B, T* y) {
  auto& ps = this->params_;
  acts_.x = x;
  acts_.B = B;
  const int64_t N = c_.T, Hd = c_.hidden, F = features();
  acts_.layer_out.resize(c_.layers);
  const T* inp = x;
  int64_t C = c_.d_in;
  // x's non-zeros, once for layer 0's forward and backward and the "final" head.
  acts_.x_is_sparse = sparse_rows_build(acts_.x_sparse, x, B * N, c_.d_in);
  for (int64_t l = 0; l < c_.layers; ++l) {
    const SparseRows<T>* inp_sparse = l == 0 ? x_sparse() : nullptr;
    if (dirs() == 2) acts_.layer_out[l].resize(B * N * F);
    for (int64_t d = 0; d < dirs(); ++d) {
      Direction& dir = layer_[l][d];
      dir.h.resize(B * N * Hd);
      dir.c.resize(B * N * Hd);
      dir.tanh_c.resize(B * N * Hd);
      dir.gates.resize(B * N * 4 * Hd);
      lstm_forward(dir.h.data(), dir.c.data(), dir.tanh_c.data(), dir.gates.data(), inp,
                   ps.value(dir.wx), ps.value(dir.wh), ps.value(dir.b),
                   LstmShape{B, N, C, Hd, d == 1}, inp_sparse);
      if (dirs() == 2) {
        for (int64_t r = 0; r < B * N; ++r)
          std::memcpy(acts_.layer_out[l].data() + r * F + d * Hd, dir.h.data() + r * Hd,
                      sizeof(T) * Hd);
      }
    }
    inp = layer_output(l);
    C = F;
  }
  acts_.head_out.resize(B * N * c_.d_out);
  const T* last = layer_output(c_.layers - 1);
  if (c_.readout == LstmReadout::final) {
    final_head_forward(last);
  } else {
    head_.forward(ps, last, B * N, acts_.head_out.data());
  }
  token_outputs_gather(y, acts_.head_out.data(), B, N, c_.T_out, c_.d_out);
}

// Readout "final": the head's input row (b, i) is [s_b; x_{b,i}], s_b the state after the whole
// sequence (F values: the last layer's h at position N − 1, and the backward direction's at 0).
// Its first layer runs on s and x apart (nn/state_concat_linear.h), the rest of the head on
// that layer's output; with one hidden relu layer, at most kLinearReluTiledMaxOut outputs and x
// mostly zeros, the whole head runs as state_concat_relu_head_* (all but the states' part fused a
// row at a time, ops/sparse_relu_head.h: the output and W1's gradient are then summed in another
// order than the unfused path's, so a training step's results differ from it by rounding).
template <class T>
void LstmNet<T>::final_head_forward(const T* last) {
  auto& ps = this->params_;
  const int64_t B = acts_.B, N = c_.T, Hd = c_.hidden, F = features(), o1 = head_.dims()[1];
  acts_.state.resize(B * F);
  for (int64_t b = 0; b < B; ++b) {
    T* s = acts_.state.data() + b * F;
    std::memcpy(s, last + (b * N + N - 1) * F, sizeof(T) * Hd);
    if (dirs() == 2) std::memcpy(s + Hd, last + (b * N) * F + Hd, sizeof(T) * Hd);
  }
  acts_.first_state_part.resize(B * o1);
  acts_.head_fused = final_head_fusable();
  if (acts_.head_fused) {
    state_concat_relu_head_forward(acts_.head_out.data(), acts_.first_state_part.data(),
                                   acts_.state.data(), *x_sparse(), ps.value(head_.weight_id(0)),
                                   ps.value(head_.bias_id(0)), ps.value(head_.weight_id(1)),
                                   ps.value(head_.bias_id(1)),
                                   StateConcatShape{B, N, F, c_.d_in, o1}, c_.d_out);
    return;
  }
  state_concat_linear_forward(head_.first_output(B * N), acts_.first_state_part.data(),
                              acts_.state.data(), acts_.x, x_sparse(),
                              ps.value(head_.weight_id(0)), ps.value(head_.bias_id(0)),
                              StateConcatShape{B, N, F, c_.d_in, o1});
  head_.forward_after_first(ps, B * N, acts_.head_out.data());
}

template <class T>
void LstmNet<T>::backward(const T* dy) {
  auto& ps = this->params_;
  const int64_t B = acts_.B, N = c_.T, Hd = c_.hidden, F = features();
  std::vector<T>& d_head_out = grad_acts_.head_out;
  d_head_out.assign(B * N * c_.d_out, T(0));
  token_outputs_scatter(d_head_out.data(), dy, B, N, c_.T_out, c_.d_out);
  if (c_.readout == LstmReadout::final) {
    final_state_backward(d_head_out.data());
  } else {
    grad_acts_.out.assign(B * N * F, T(0));  // the head's input is the last layer's output
    head_.backward(ps, d_head_out.data(), grad_acts_.out.data());
  }

  const T* d_cur = grad_acts_.out.data();  // ∂L/∂(layer l's output), (B, N, F)
  auto& dh = grad_acts_.dh;
  if (dirs() == 2) dh.resize(B * N * Hd);  // every row lstm_backward reads is copied in below
  for (int64_t l = c_.layers - 1; l >= 0; --l) {
    // The "final" read-out sees the last layer's state after the whole sequence only: its dh is
    // zero but at each direction's last step.
    const LstmDh dh_steps = l == c_.layers - 1 && c_.readout == LstmReadout::final
                                ? LstmDh::last_step_only
                                : LstmDh::every_step;
    const T* inp = l == 0 ? acts_.x : layer_output(l - 1);
    const int64_t C = l == 0 ? c_.d_in : F;
    T* d_below = nullptr;  // ∂L/∂(layer l − 1's output), accumulated by both directions
    if (l > 0) {
      std::vector<T>& buf = grad_acts_.below[l % 2];  // never the buffer d_cur points into
      buf.assign(B * N * C, T(0));
      d_below = buf.data();
    }
    for (int64_t d = 0; d < dirs(); ++d) {
      Direction& dir = layer_[l][d];
      const T* dh_dir = d_cur;  // one direction: its features are the whole row
      if (dirs() == 2) {
        // The direction's half of every row, or only of the rows lstm_backward reads: its last
        // step in reading order (t = N − 1, or 0 for the backward direction).
        const bool last_only = dh_steps == LstmDh::last_step_only;
        for (int64_t r = 0; r < B * N; ++r)
          if (!last_only || r % N == (d == 0 ? N - 1 : 0))
            std::memcpy(dh.data() + r * Hd, d_cur + r * F + d * Hd, sizeof(T) * Hd);
        dh_dir = dh.data();
      }
      lstm_backward(d_below, ps.grad(dir.wx), ps.grad(dir.wh), ps.grad(dir.b), dh_dir, inp,
                    ps.value(dir.wx), ps.value(dir.wh), dir.h.data(), dir.c.data(),
                    dir.tanh_c.data(), dir.gates.data(), LstmShape{B, N, C, Hd, d == 1},
                    l == 0 ? x_sparse() : nullptr, dh_steps);
    }
    d_cur = d_below;
  }
}

// Readout "final": the head sees [s_b; x_i] with the same state s_b (F values) for every i, so
// ∂L/∂s_b = Σ_i ∂L/∂(head input)[b, i, 0:F] = (Σ_i g0[b, i]) · W0[0:F, :]ᵀ, where g0 is the
// gradient at the head's first linear layer's output and W0 its weight (head_in × o1): a
// (B × o1)·(o1 × F) product instead of the input gradient of all B·N rows; W0's gradient uses
// the same sums (nn/state_concat_linear.h). grad_acts_.out holds ∂L/∂(last layer's output): zero
// but in the rows of s (position N − 1, and position 0 for the backward direction), which are
// the only rows ever written, so it is zeroed only when its size changes.
template <class T>
void LstmNet<T>::final_state_backward(const T* d_head_out) {
  auto& ps = this->params_;
  const int64_t B = acts_.B, N = c_.T, Hd = c_.hidden, F = features();
  const int64_t o1 = head_.dims()[1];
  grad_acts_.state_sum.resize(B * o1);
  if (acts_.head_fused) {
    state_concat_relu_head_backward(
        grad_acts_.state_sum.data(), ps.grad(head_.weight_id(0)), ps.grad(head_.bias_id(0)),
        ps.grad(head_.weight_id(1)), ps.grad(head_.bias_id(1)), d_head_out,
        acts_.first_state_part.data(), acts_.state.data(), *x_sparse(),
        ps.value(head_.weight_id(0)), ps.value(head_.weight_id(1)),
        StateConcatShape{B, N, F, c_.d_in, o1}, c_.d_out);
  } else {
    head_.backward(ps, d_head_out, nullptr);  // parameter gradients but W0's
    const T* g0 = head_.first_layer_dout();
    const StateConcatShape sh{B, N, F, c_.d_in, o1};
    state_concat_sequence_sums(grad_acts_.state_sum.data(), g0, sh);
    // The first layer's weight gradient, on s and x apart (its bias's is the head's).
    state_concat_linear_backward(ps.grad(head_.weight_id(0)), g0, grad_acts_.state_sum.data(),
                                 acts_.state.data(), acts_.x, x_sparse(), sh);
  }
  grad_acts_.state.resize(B * F);
  gemm<T>(false, true, B, F, o1, T(1), grad_acts_.state_sum.data(), o1,
          ps.value(head_.weight_id(0)), o1, T(0), grad_acts_.state.data(), F);
  if (static_cast<int64_t>(grad_acts_.out.size()) != B * N * F)
    grad_acts_.out.assign(B * N * F, T(0));
  for (int64_t b = 0; b < B; ++b) {
    const T* ds = grad_acts_.state.data() + b * F;
    std::memcpy(grad_acts_.out.data() + (b * N + N - 1) * F, ds, sizeof(T) * Hd);
    if (dirs() == 2) std::memcpy(grad_acts_.out.data() + (b * N) * F + Hd, ds + Hd, sizeof(T) * Hd);
  }
}

// Above kLinearReluTiledMaxOut outputs the unfused path's hidden-layer gradient is a product on
// the FMA tiles or OpenBLAS's GEMM (ops/linear_relu_backward.h), which the register tiles the
// fused head uses trail at wide outputs;
// the fused head was measured at 4 outputs only.
template <class T>
bool LstmNet<T>::final_head_fusable() const {
  return head_.layers() == 2 && c_.activation == Activation::relu &&
         c_.d_out <= kLinearReluTiledMaxOut && x_sparse() != nullptr;
}

template <class T>
std::vector<std::pair<std::string, double>> LstmNet<T>::sizes() const {
  return {{"hidden", double(c_.hidden)},
          {"layers", double(c_.layers)},
          {"state_size", double(2 * c_.hidden * c_.layers * dirs())}};
}

template class LstmNet<float>;
template class LstmNet<double>;

}  // namespace attn
