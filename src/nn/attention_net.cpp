// AttentionNet (see attention_net.h).
#include "nn/attention_net.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "nn/temperature.h"
#include "nn/token_outputs.h"
#include "ops/attention.h"
#include "ops/blas.h"
#include "ops/linear.h"
#include "ops/third_order_attention.h"

namespace attn {
namespace {

std::vector<int64_t> mlp_dims(const std::string& kind, int64_t in, int64_t width, int64_t out) {
  if (kind == "identity") return {in};
  if (kind == "linear") return {in, out};
  return {in, width, out};
}

template <class T>
void zero(std::vector<T>& v, size_t n) {
  v.assign(n, T(0));
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
  dk_ = c_.qk_dim > 0 ? c_.qk_dim : c_.m;
  dv_ = c_.value_dim > 0 ? c_.value_dim : c_.d_out;
  ATTN_CHECK(c_.psi != "identity" || (!c_.residual && dv_ == c_.d_out),
             "model." + n + ": psi = \"identity\" passes the attention output through unchanged, so it "
             "needs residual = false and value_dim = 0 (or the task's output dimension " +
                 std::to_string(c_.d_out) + ")");
  psi_in_ = (c_.residual ? c_.m : 0) + dv_;
  auto& ps = this->params_;
  phi_.declare(ps, "phi", mlp_dims(c_.phi, c_.d_in, c_.phi_width, c_.m), c_.activation);
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
  if (c_.temperature == "learned") tau_ = ps.add("log_temperature", {1});
  psi_.declare(ps, "psi", mlp_dims(c_.psi, psi_in_, c_.psi_width, c_.d_out), c_.activation);
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
}

template <class T>
T AttentionNet<T>::scale() const {
  return temperature_scale<T>(c_.temperature, tau_ >= 0 ? this->params_.value(tau_) : nullptr,
                              c_.temperature_init, dk_);
}

template <class T>
void AttentionNet<T>::forward(const T* x, int64_t B, T* y) {
  auto& ps = this->params_;
  B_ = B;
  const int64_t N = c_.T, H = c_.heads, m = c_.m, rows = B * N;
  phi_out_.resize(rows * m);
  phi_.forward(ps, x, rows, phi_out_.data());
  auto project = [&](std::vector<T>& out, int id, int64_t width) {
    out.resize(rows * H * width);
    linear_forward(out.data(), phi_out_.data(), ps.value(id), static_cast<const T*>(nullptr), rows,
                   m, H * width);
  };
  // Finite precision: round each head's q, k, v per sequence (the backward uses the
  // rounded values, i.e. straight-through).
  const int64_t bits = c_.precision.qkv_bits(this->training());
  score_bits_ = c_.precision.score_bits(this->training());
  fused_ = !c_.third_order && dk_ == m && bits == 0;
  if (fused_) {
    // A_h = Q_h K_hᵀ into columns h·m … (h+1)·m − 1 of qk_ (m, H·m); queries Φ·A.
    qk_.resize(m * H * m);
    const T* Q = ps.value(q_);
    const T* K = ps.value(k1_);
    for (int64_t h = 0; h < H; ++h)
      gemm<T>(false, true, m, m, dk_, T(1), Q + h * dk_, H * dk_, K + h * dk_, H * dk_, T(0),
              qk_.data() + h * m, H * m);
    q_buf_.resize(rows * H * m);
    linear_forward(q_buf_.data(), phi_out_.data(), qk_.data(), static_cast<const T*>(nullptr),
                   rows, m, H * m);
  } else {
    project(q_buf_, q_, dk_);
    project(k1_buf_, k1_, dk_);
    head_quantize(q_buf_.data(), B, N, H, dk_, bits);
    head_quantize(k1_buf_.data(), B, N, H, dk_, bits);
  }
  project(v1_buf_, v1_, dv_);
  head_quantize(v1_buf_.data(), B, N, H, dv_, bits);
  heads_out_.resize(rows * H * dv_);
  if (c_.third_order) {
    project(k2_buf_, k2_, dk_);
    project(v2_buf_, v2_, dv_);
    head_quantize(k2_buf_.data(), B, N, H, dk_, bits);
    head_quantize(v2_buf_.data(), B, N, H, dv_, bits);
    probs_.resize(B * H * N * N * N);
    third_order_forward(heads_out_.data(), probs_.data(), q_buf_.data(), k1_buf_.data(),
                        k2_buf_.data(), v1_buf_.data(), v2_buf_.data(), scale(),
                        ThirdOrderShape{B, N, H, dk_, dv_, c_.exclude_self, score_bits_});
  } else {
    probs_.resize(B * H * N * N);
    attention_forward(heads_out_.data(), probs_.data(), q_buf_.data(),
                      fused_ ? phi_out_.data() : k1_buf_.data(), v1_buf_.data(), scale(),
                      AttentionShape{B, N, H, dk_, dv_, c_.exclude_self, score_bits_, fused_});
  }
  // ψ's input: [Φ, Σ_h a_h] (residual) or Σ_h a_h.
  std::vector<T>& a = d_heads_;  // scratch until backward
  zero(a, rows * dv_);
  head_sum_forward(a.data(), heads_out_.data(), rows, H, dv_);
  psi_in_buf_.resize(rows * psi_in_);
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = psi_in_buf_.data() + r * psi_in_;
    if (c_.residual) std::memcpy(dst, phi_out_.data() + r * m, sizeof(T) * m);
    std::memcpy(dst + (c_.residual ? m : 0), a.data() + r * dv_, sizeof(T) * dv_);
  }
  psi_out_.resize(rows * c_.d_out);
  psi_.forward(ps, psi_in_buf_.data(), rows, psi_out_.data());
  token_outputs_gather(y, psi_out_.data(), B, N, c_.T_out, c_.d_out);
}

template <class T>
void AttentionNet<T>::backward(const T* dy) {
  auto& ps = this->params_;
  const int64_t B = B_, N = c_.T, H = c_.heads, m = c_.m, rows = B * N;
  zero(d_psi_out_, rows * c_.d_out);
  token_outputs_scatter(d_psi_out_.data(), dy, B, N, c_.T_out, c_.d_out);
  zero(d_psi_in_, rows * psi_in_);
  psi_.backward(ps, d_psi_out_.data(), d_psi_in_.data());

  zero(d_phi_, rows * m);
  std::vector<T> d_a(rows * dv_);
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = d_psi_in_.data() + r * psi_in_;
    if (c_.residual)
      for (int64_t j = 0; j < m; ++j) d_phi_[r * m + j] += src[j];
    std::memcpy(d_a.data() + r * dv_, src + (c_.residual ? m : 0), sizeof(T) * dv_);
  }
  zero(d_heads_, rows * H * dv_);
  head_sum_backward(d_heads_.data(), d_a.data(), rows, H, dv_);

  zero(d_q_, rows * H * dk_);
  if (!fused_) zero(d_k1_, rows * H * dk_);
  zero(d_v1_, rows * H * dv_);
  T dscale = 0;
  if (c_.third_order) {
    zero(d_k2_, rows * H * dk_);
    zero(d_v2_, rows * H * dv_);
    third_order_backward(d_q_.data(), d_k1_.data(), d_k2_.data(), d_v1_.data(), d_v2_.data(),
                         &dscale, d_heads_.data(), q_buf_.data(), k1_buf_.data(), k2_buf_.data(),
                         v1_buf_.data(), v2_buf_.data(), probs_.data(), scale(),
                         ThirdOrderShape{B, N, H, dk_, dv_, c_.exclude_self, score_bits_});
  } else {
    // Fused: the shared keys are Φ itself, so their gradient accumulates into dΦ directly.
    attention_backward(d_q_.data(), fused_ ? d_phi_.data() : d_k1_.data(), d_v1_.data(), &dscale,
                       d_heads_.data(), q_buf_.data(), fused_ ? phi_out_.data() : k1_buf_.data(),
                       v1_buf_.data(), probs_.data(), scale(),
                       AttentionShape{B, N, H, dk_, dv_, c_.exclude_self, score_bits_, fused_});
  }
  auto unproject = [&](const std::vector<T>& d_out, int id, int64_t width) {
    linear_backward(d_phi_.data(), ps.grad(id), static_cast<T*>(nullptr), d_out.data(),
                    phi_out_.data(), ps.value(id), rows, m, H * width);
  };
  if (fused_) {
    // q' = ΦA: dA = Φᵀ dq', dΦ += dq' Aᵀ; then A_h = Q_h K_hᵀ gives dQ_h = dA_h K_h and
    // dK_h = dA_hᵀ Q_h.
    zero(d_qk_, m * H * m);
    linear_backward(d_phi_.data(), d_qk_.data(), static_cast<T*>(nullptr), d_q_.data(),
                    phi_out_.data(), qk_.data(), rows, m, H * m);
    const T* Q = ps.value(q_);
    const T* K = ps.value(k1_);
    for (int64_t h = 0; h < H; ++h) {
      gemm<T>(false, false, m, dk_, m, T(1), d_qk_.data() + h * m, H * m, K + h * dk_, H * dk_,
              T(1), ps.grad(q_) + h * dk_, H * dk_);
      gemm<T>(true, false, m, dk_, m, T(1), d_qk_.data() + h * m, H * m, Q + h * dk_, H * dk_,
              T(1), ps.grad(k1_) + h * dk_, H * dk_);
    }
  } else {
    unproject(d_q_, q_, dk_);
    unproject(d_k1_, k1_, dk_);
  }
  unproject(d_v1_, v1_, dv_);
  if (c_.third_order) {
    unproject(d_k2_, k2_, dk_);
    unproject(d_v2_, v2_, dv_);
  }
  if (tau_ >= 0) ps.grad(tau_)[0] += dscale * scale();
  phi_.backward(ps, d_phi_.data(), static_cast<T*>(nullptr));
}

template <class T>
std::vector<AttentionMap> AttentionNet<T>::attention_maps() const {
  const int64_t N = c_.T, H = c_.heads;
  if (!c_.third_order) {
    AttentionMap map{"layer0", {B_, H, N, N}, std::vector<double>(probs_.begin(), probs_.end())};
    return {map};
  }
  // Third order: the N × N × N pair weights are large; report their two marginals, the
  // weight on j as first and on k as second member of the pair.
  AttentionMap first{"layer0.first", {B_, H, N, N}, std::vector<double>(B_ * H * N * N, 0.0)};
  AttentionMap second{"layer0.second", {B_, H, N, N}, std::vector<double>(B_ * H * N * N, 0.0)};
  for (int64_t bhi = 0; bhi < B_ * H * N; ++bhi)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < N; ++k) {
        const double p = probs_[(bhi * N + j) * N + k];
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
