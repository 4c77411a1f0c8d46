// LstmNet (see lstm_net.h).
#include "nn/lstm_net.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "nn/token_outputs.h"
#include "ops/lstm.h"

namespace attn {

template <class T>
LstmNet<T>::LstmNet(const LstmNetConfig& config) : c_(config) {
  const std::string& n = c_.name;
  token_outputs_check(n, c_.T, c_.T_out);
  ATTN_CHECK(c_.readout == "final" || c_.readout == "per_position",
             "model." + n + ".readout must be \"final\" or \"per_position\"");
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
  head_in_ = features() + (c_.readout == "final" ? c_.d_in : 0);
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
  x_ = x;
  B_ = B;
  const int64_t N = c_.T, Hd = c_.hidden, F = features();
  layer_out_.resize(c_.layers);
  const T* inp = x;
  int64_t C = c_.d_in;
  for (int64_t l = 0; l < c_.layers; ++l) {
    layer_out_[l].resize(B * N * F);
    for (int64_t d = 0; d < dirs(); ++d) {
      Direction& dir = layer_[l][d];
      dir.h.resize(B * N * Hd);
      dir.c.resize(B * N * Hd);
      dir.gates.resize(B * N * 4 * Hd);
      lstm_forward(dir.h.data(), dir.c.data(), dir.gates.data(), inp, ps.value(dir.wx),
                   ps.value(dir.wh), ps.value(dir.b), LstmShape{B, N, C, Hd, d == 1});
      for (int64_t r = 0; r < B * N; ++r)
        std::memcpy(layer_out_[l].data() + r * F + d * Hd, dir.h.data() + r * Hd, sizeof(T) * Hd);
    }
    inp = layer_out_[l].data();
    C = F;
  }
  // Head inputs, one row per (sequence, position).
  const std::vector<T>& last = layer_out_.back();
  head_in_buf_.resize(B * N * head_in_);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i) {
      T* row = head_in_buf_.data() + (b * N + i) * head_in_;
      if (c_.readout == "final") {
        std::memcpy(row, last.data() + (b * N + N - 1) * F, sizeof(T) * Hd);
        if (dirs() == 2) std::memcpy(row + Hd, last.data() + (b * N) * F + Hd, sizeof(T) * Hd);
        std::memcpy(row + F, x + (b * N + i) * c_.d_in, sizeof(T) * c_.d_in);
      } else {
        std::memcpy(row, last.data() + (b * N + i) * F, sizeof(T) * F);
      }
    }
  head_out_.resize(B * N * c_.d_out);
  head_.forward(ps, head_in_buf_.data(), B * N, head_out_.data());
  token_outputs_gather(y, head_out_.data(), B, N, c_.T_out, c_.d_out);
}

template <class T>
void LstmNet<T>::backward(const T* dy) {
  auto& ps = this->params_;
  const int64_t B = B_, N = c_.T, Hd = c_.hidden, F = features();
  std::vector<T>& d_head_out = d_head_out_;
  d_head_out.assign(B * N * c_.d_out, T(0));
  token_outputs_scatter(d_head_out.data(), dy, B, N, c_.T_out, c_.d_out);
  std::vector<T>& d_head_in = d_head_in_;
  d_head_in.assign(B * N * head_in_, T(0));
  head_.backward(ps, d_head_out.data(), d_head_in.data());

  std::vector<T>& d_out = d_out_;  // ∂L/∂(last layer's output)
  d_out.assign(B * N * F, T(0));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i) {
      const T* g = d_head_in.data() + (b * N + i) * head_in_;
      if (c_.readout == "final") {
        T* fwd = d_out.data() + (b * N + N - 1) * F;
        for (int64_t j = 0; j < Hd; ++j) fwd[j] += g[j];
        if (dirs() == 2) {
          T* bwd = d_out.data() + (b * N) * F + Hd;
          for (int64_t j = 0; j < Hd; ++j) bwd[j] += g[Hd + j];
        }
      } else {
        T* dst = d_out.data() + (b * N + i) * F;
        for (int64_t j = 0; j < F; ++j) dst[j] += g[j];
      }
    }
  std::vector<T>& dh = dh_;
  std::vector<T>& d_inp = d_inp_;
  dh.resize(B * N * Hd);  // every row is copied in below
  for (int64_t l = c_.layers - 1; l >= 0; --l) {
    const T* inp = l == 0 ? x_ : layer_out_[l - 1].data();
    const int64_t C = l == 0 ? c_.d_in : F;
    if (l > 0) d_inp.assign(B * N * C, T(0));
    for (int64_t d = 0; d < dirs(); ++d) {
      Direction& dir = layer_[l][d];
      for (int64_t r = 0; r < B * N; ++r)
        std::memcpy(dh.data() + r * Hd, d_out.data() + r * F + d * Hd, sizeof(T) * Hd);
      lstm_backward(l > 0 ? d_inp.data() : static_cast<T*>(nullptr), ps.grad(dir.wx),
                    ps.grad(dir.wh), ps.grad(dir.b), dh.data(), inp, ps.value(dir.wx),
                    ps.value(dir.wh), dir.h.data(), dir.c.data(), dir.gates.data(),
                    LstmShape{B, N, C, Hd, d == 1});
    }
    if (l > 0) d_out.swap(d_inp);
  }
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
