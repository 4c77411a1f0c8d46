// AttentionNet (see attention_net.h).
#include "nn/attention_net.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/error.h"
#include "nn/temperature.h"
#include "nn/token_outputs.h"
#include "ops/attention.h"
#include "ops/blas.h"
#include "ops/linear.h"
#include "ops/third_order_attention.h"

namespace attn {
namespace {

// v as n zeros, by memset rather than vector::assign's element loop (all-zero bytes are +0 in float
// and double). In config e's profile on an Intel Xeon (2026-12-06) the zeroing took 3.6 % (the
// loop) + 3.7 % (memset) of the step before, 5.7 % (memset) after.
template <class T>
void zero(std::vector<T>& v, size_t n) {
  static_assert(std::is_floating_point_v<T>);
  v.resize(n);
  if (n > 0) std::memset(v.data(), 0, n * sizeof(T));
}

}  // namespace

template <class T>
AttentionNet<T>::AttentionNet(const AttentionNetConfig& config) : c_(config) {
  const std::string& n = c_.name;
  token_outputs_check(n, c_.T, c_.T_out);
  quantize_check_bits(c_.precision.bits, "model.bits");
  ATTN_CHECK(!c_.exclude_self || c_.T >= (c_.third_order ? 3 : 2),
             "model." + n + ": exclude_self needs at least " + (c_.third_order ? "3" : "2") +
                 " tokens");
  ATTN_CHECK(!(c_.causal && c_.exclude_self),
             "model." + n + ": causal = true and exclude_self = true leave the first token no " +
                 (c_.third_order ? "pair" : "key") + " to attend to; set one of them to false");
  dk_ = c_.qk_dim > 0 ? c_.qk_dim : c_.m;
  dv_ = c_.value_dim > 0 ? c_.value_dim : c_.d_out;
  ATTN_CHECK(c_.psi != TokenMap::identity || (!c_.residual && dv_ == c_.d_out),
             "model." + n +
                 ": psi = \"identity\" passes the attention output through unchanged, so it "
                 "needs residual = false and value_dim = 0 (or the task's output dimension " +
                 std::to_string(c_.d_out) + ")");
  psi_in_ = (c_.residual ? c_.m : 0) + dv_;
  auto& ps = this->params_;
  phi_.declare(ps, "phi", token_map_dims(c_.phi, c_.d_in, c_.phi_width, c_.m), c_.activation);
  pos_.declare(ps, c_.positions, c_.T, c_.m, n);
  q_ = ps.add("q", {c_.m, c_.heads * dk_});
  if (c_.third_order) {
    k1_ = ps.add("k1", {c_.m, c_.heads * dk_});
    k2_ = ps.add("k2", {c_.m, c_.heads * dk_});
    v1_ = ps.add("v1", {c_.m, c_.heads * dv_});
    v2_ = ps.add("v2", {c_.m, c_.heads * dv_});
  } else {
    k1_ = ps.add("k", {c_.m, c_.heads * dk_});
    v1_ = ps.add("v", {c_.m, c_.heads * dv_});
  }
  if (c_.temperature == Temperature::learned) tau_ = ps.add("log_temperature", {1});
  psi_.declare(ps, "psi", token_map_dims(c_.psi, psi_in_, c_.psi_width, c_.d_out), c_.activation);
  ps.allocate();
}

template <class T>
void AttentionNet<T>::init(uint64_t seed) {
  auto& ps = this->params_;
  const std::string stream = c_.name + ".init";
  phi_.init(ps, seed, stream);
  psi_.init(ps, seed, stream);
  const double bound = 1.0 / std::sqrt(static_cast<double>(c_.m));
  for (int id : {q_, k1_, k2_, v1_, v2_})
    if (id >= 0)
      param_init_uniform(ps.value(id), ps.entry(id).size, bound, seed,
                         stream + "." + ps.entry(id).name);
  if (tau_ >= 0) ps.value(tau_)[0] = static_cast<T>(std::log(c_.temperature_init));
  pos_.init(ps, seed);
}

template <class T>
T AttentionNet<T>::scale() const {
  return temperature_scale<T>(c_.temperature, tau_ >= 0 ? this->params_.value(tau_) : nullptr,
                              c_.temperature_init, dk_);
}

template <class T>
void AttentionNet<T>::forward(const T* x, int64_t B, T* y) {
  auto& ps = this->params_;
  acts_.B = B;
  const int64_t N = c_.T, H = c_.heads, m = c_.m, rows = B * N;
  acts_.phi_out.resize(rows * m);
  phi_.forward(ps, x, rows, acts_.phi_out.data());
  pos_.forward(ps, acts_.phi_out.data(), x, B, c_.d_in);
  auto project = [&](std::vector<T>& out, int id, int64_t width) {
    out.resize(rows * H * width);
    linear_forward(out.data(), acts_.phi_out.data(), ps.value(id), static_cast<const T*>(nullptr),
                   rows, m, H * width);
  };
  // Finite precision: round each head's q, k, v per sequence (the backward uses the
  // rounded values, i.e. straight-through).
  const int64_t bits = c_.precision.qkv_bits(this->training());
  acts_.score_bits = c_.precision.score_bits(this->training());
  acts_.fused = !c_.third_order && dk_ == m && bits == 0;
  if (acts_.fused) {
    // A_h = Q_h K_hᵀ into columns h·m … (h+1)·m − 1 of acts_.qk (m, H·m); queries Φ·A.
    acts_.qk.resize(m * H * m);
    const T* Q = ps.value(q_);
    const T* K = ps.value(k1_);
    for (int64_t h = 0; h < H; ++h)
      gemm<T>(false, true, m, m, dk_, T(1), Q + h * dk_, H * dk_, K + h * dk_, H * dk_, T(0),
              acts_.qk.data() + h * m, H * m);
    acts_.q.resize(rows * H * m);
    linear_forward(acts_.q.data(), acts_.phi_out.data(), acts_.qk.data(),
                   static_cast<const T*>(nullptr), rows, m, H * m);
  } else {
    project(acts_.q, q_, dk_);
    project(acts_.k1, k1_, dk_);
    head_quantize(acts_.q.data(), B, N, H, dk_, bits);
    head_quantize(acts_.k1.data(), B, N, H, dk_, bits);
  }
  project(acts_.v1, v1_, dv_);
  head_quantize(acts_.v1.data(), B, N, H, dv_, bits);
  acts_.heads.resize(rows * H * dv_);
  if (c_.third_order) {
    project(acts_.k2, k2_, dk_);
    project(acts_.v2, v2_, dv_);
    head_quantize(acts_.k2.data(), B, N, H, dk_, bits);
    head_quantize(acts_.v2.data(), B, N, H, dv_, bits);
    acts_.probs.resize(B * H * N * N * N);
    third_order_forward(
        acts_.heads.data(), acts_.probs.data(), acts_.q.data(), acts_.k1.data(), acts_.k2.data(),
        acts_.v1.data(), acts_.v2.data(), scale(),
        ThirdOrderShape{B, N, H, dk_, dv_, c_.exclude_self, acts_.score_bits, c_.causal});
  } else {
    acts_.probs.resize(B * H * N * N);
    attention_forward(acts_.heads.data(), acts_.probs.data(), acts_.q.data(),
                      acts_.fused ? acts_.phi_out.data() : acts_.k1.data(), acts_.v1.data(),
                      scale(),
                      AttentionShape{B, N, H, dk_, dv_, c_.exclude_self, acts_.score_bits,
                                     acts_.fused, c_.causal});
  }
  // ψ's input: [Φ, Σ_h a_h] (residual) or Σ_h a_h.
  std::vector<T>& a = grad_acts_.heads;  // scratch until backward
  zero(a, rows * dv_);
  head_sum_forward(a.data(), acts_.heads.data(), rows, H, dv_);
  acts_.psi_in.resize(rows * psi_in_);
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = acts_.psi_in.data() + r * psi_in_;
    if (c_.residual) std::memcpy(dst, acts_.phi_out.data() + r * m, sizeof(T) * m);
    std::memcpy(dst + (c_.residual ? m : 0), a.data() + r * dv_, sizeof(T) * dv_);
  }
  acts_.psi_out.resize(rows * c_.d_out);
  psi_.forward(ps, acts_.psi_in.data(), rows, acts_.psi_out.data());
  token_outputs_gather(y, acts_.psi_out.data(), B, N, c_.T_out, c_.d_out);
}

template <class T>
void AttentionNet<T>::backward(const T* dy) {
  auto& ps = this->params_;
  const int64_t B = acts_.B, N = c_.T, H = c_.heads, m = c_.m, rows = B * N;
  zero(grad_acts_.psi_out, rows * c_.d_out);
  token_outputs_scatter(grad_acts_.psi_out.data(), dy, B, N, c_.T_out, c_.d_out);
  zero(grad_acts_.psi_in, rows * psi_in_);
  psi_.backward(ps, grad_acts_.psi_out.data(), grad_acts_.psi_in.data());

  zero(grad_acts_.phi, rows * m);
  std::vector<T> d_a(rows * dv_);
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = grad_acts_.psi_in.data() + r * psi_in_;
    if (c_.residual)
      for (int64_t j = 0; j < m; ++j) grad_acts_.phi[r * m + j] += src[j];
    std::memcpy(d_a.data() + r * dv_, src + (c_.residual ? m : 0), sizeof(T) * dv_);
  }
  zero(grad_acts_.heads, rows * H * dv_);
  head_sum_backward(grad_acts_.heads.data(), d_a.data(), rows, H, dv_);

  zero(grad_acts_.q, rows * H * dk_);
  if (!acts_.fused) zero(grad_acts_.k1, rows * H * dk_);
  zero(grad_acts_.v1, rows * H * dv_);
  T dscale = 0;
  if (c_.third_order) {
    zero(grad_acts_.k2, rows * H * dk_);
    zero(grad_acts_.v2, rows * H * dv_);
    third_order_backward(
        grad_acts_.q.data(), grad_acts_.k1.data(), grad_acts_.k2.data(), grad_acts_.v1.data(),
        grad_acts_.v2.data(), &dscale, grad_acts_.heads.data(), acts_.q.data(), acts_.k1.data(),
        acts_.k2.data(), acts_.v1.data(), acts_.v2.data(), acts_.probs.data(), scale(),
        ThirdOrderShape{B, N, H, dk_, dv_, c_.exclude_self, acts_.score_bits, c_.causal});
  } else {
    // Fused: the shared keys are Φ itself, so their gradient accumulates into dΦ directly.
    attention_backward(grad_acts_.q.data(),
                       acts_.fused ? grad_acts_.phi.data() : grad_acts_.k1.data(),
                       grad_acts_.v1.data(), &dscale, grad_acts_.heads.data(), acts_.q.data(),
                       acts_.fused ? acts_.phi_out.data() : acts_.k1.data(), acts_.v1.data(),
                       acts_.probs.data(), scale(),
                       AttentionShape{B, N, H, dk_, dv_, c_.exclude_self, acts_.score_bits,
                                      acts_.fused, c_.causal});
  }
  auto unproject = [&](const std::vector<T>& d_out, int id, int64_t width) {
    linear_backward(grad_acts_.phi.data(), ps.grad(id), static_cast<T*>(nullptr), d_out.data(),
                    acts_.phi_out.data(), ps.value(id), rows, m, H * width);
  };
  if (acts_.fused) {
    // q' = ΦA: dA = Φᵀ dq', dΦ += dq' Aᵀ; then A_h = Q_h K_hᵀ gives dQ_h = dA_h K_h and
    // dK_h = dA_hᵀ Q_h.
    zero(grad_acts_.qk, m * H * m);
    linear_backward(grad_acts_.phi.data(), grad_acts_.qk.data(), static_cast<T*>(nullptr),
                    grad_acts_.q.data(), acts_.phi_out.data(), acts_.qk.data(), rows, m, H * m);
    const T* Q = ps.value(q_);
    const T* K = ps.value(k1_);
    for (int64_t h = 0; h < H; ++h) {
      gemm<T>(false, false, m, dk_, m, T(1), grad_acts_.qk.data() + h * m, H * m, K + h * dk_,
              H * dk_, T(1), ps.grad(q_) + h * dk_, H * dk_);
      gemm<T>(true, false, m, dk_, m, T(1), grad_acts_.qk.data() + h * m, H * m, Q + h * dk_,
              H * dk_, T(1), ps.grad(k1_) + h * dk_, H * dk_);
    }
  } else {
    unproject(grad_acts_.q, q_, dk_);
    unproject(grad_acts_.k1, k1_, dk_);
  }
  unproject(grad_acts_.v1, v1_, dv_);
  if (c_.third_order) {
    unproject(grad_acts_.k2, k2_, dk_);
    unproject(grad_acts_.v2, v2_, dv_);
  }
  if (tau_ >= 0) ps.grad(tau_)[0] += dscale * scale();
  pos_.backward(ps, grad_acts_.phi.data(), B);
  phi_.backward(ps, grad_acts_.phi.data(), static_cast<T*>(nullptr));
}

template <class T>
std::vector<AttentionMap> AttentionNet<T>::attention_maps() const {
  const int64_t N = c_.T, H = c_.heads;
  if (!c_.third_order) {
    AttentionMap map{
        "layer0", {acts_.B, H, N, N}, std::vector<double>(acts_.probs.begin(), acts_.probs.end())};
    return {map};
  }
  // Third order: the N × N × N pair weights are large; report their two marginals, the
  // weight on j as first and on k as second member of the pair.
  AttentionMap first{
      "layer0.first", {acts_.B, H, N, N}, std::vector<double>(acts_.B * H * N * N, 0.0)};
  AttentionMap second{
      "layer0.second", {acts_.B, H, N, N}, std::vector<double>(acts_.B * H * N * N, 0.0)};
  for (int64_t bhi = 0; bhi < acts_.B * H * N; ++bhi)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < N; ++k) {
        const double p = acts_.probs[(bhi * N + j) * N + k];
        first.data[bhi * N + j] += p;
        second.data[bhi * N + k] += p;
      }
  return {first, second};
}

template <class T>
std::vector<std::pair<std::string, double>> AttentionNet<T>::sizes() const {
  return {{"m", double(c_.m)}, {"heads", double(c_.heads)}, {"qk_dim", double(dk_)},
          {"value_dim", double(dv_)}};
}

template class AttentionNet<float>;
template class AttentionNet<double>;

}  // namespace attn
