// TransformerNet (see transformer_net.h).
#include "nn/transformer_net.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "nn/temperature.h"
#include "nn/token_outputs.h"
#include "ops/attention.h"
#include "ops/layernorm.h"
#include "ops/linear.h"

namespace attn {

template <class T>
TransformerNet<T>::TransformerNet(const TransformerNetConfig& config) : c_(config) {
  const std::string& n = c_.name;
  token_outputs_check(n, c_.T, c_.T_out);
  quantize_check_bits(c_.precision.bits, "model.bits");
  ATTN_CHECK(!c_.exclude_self || c_.T >= 2,
             "model." + n + ": exclude_self needs at least 2 tokens");
  ATTN_CHECK(!(c_.causal && c_.exclude_self),
             "model." + n +
                 ": causal = true and exclude_self = true leave the first token no "
                 "key to attend to; set one of them to false");
  if (c_.mlp_width == 0) c_.mlp_width = 4 * c_.m;
  auto& ps = this->params_;
  const int64_t m = c_.m, H = c_.heads;
  phi_.declare(ps, "phi",
               c_.phi == TokenMap::mlp ? std::vector<int64_t>{c_.d_in, c_.phi_width, m}
                               : std::vector<int64_t>{c_.d_in, m},
               c_.activation);
  pos_.declare(ps, c_.positions, c_.T, m, n);
  for (int64_t l = 0; l < c_.layers; ++l) {
    auto layer = std::make_unique<Layer>();
    const std::string p = "layer" + std::to_string(l);
    layer->q = ps.add(p + ".q", {m, H * m});
    layer->k = ps.add(p + ".k", {m, H * m});
    layer->v = ps.add(p + ".v", {m, H * m});
    if (c_.temperature == Temperature::learned) layer->tau = ps.add(p + ".log_temperature", {1});
    if (c_.layernorm) {
      layer->g1 = ps.add(p + ".ln1.gamma", {m});
      layer->b1 = ps.add(p + ".ln1.beta", {m});
      layer->g2 = ps.add(p + ".ln2.gamma", {m});
      layer->b2 = ps.add(p + ".ln2.beta", {m});
    }
    layer->mlp.declare(ps, p + ".mlp", {m, c_.mlp_width, m}, c_.activation);
    layers_.push_back(std::move(layer));
  }
  psi_.declare(ps, "psi",
               c_.psi == TokenMap::mlp ? std::vector<int64_t>{m, c_.psi_width, c_.d_out}
                               : std::vector<int64_t>{m, c_.d_out},
               c_.activation);
  ps.allocate();
}

template <class T>
void TransformerNet<T>::init(uint64_t seed) {
  auto& ps = this->params_;
  const std::string stream = c_.name + ".init";
  phi_.init(ps, seed, stream);
  psi_.init(ps, seed, stream);
  const double bound = 1.0 / std::sqrt(static_cast<double>(c_.m));
  for (auto& layer : layers_) {
    for (int id : {layer->q, layer->k, layer->v})
      param_init_uniform(ps.value(id), ps.entry(id).size, bound, seed,
                         stream + "." + ps.entry(id).name);
    if (layer->tau >= 0) ps.value(layer->tau)[0] = static_cast<T>(std::log(c_.temperature_init));
    if (c_.layernorm)
      for (int64_t j = 0; j < c_.m; ++j) {
        ps.value(layer->g1)[j] = ps.value(layer->g2)[j] = T(1);
        ps.value(layer->b1)[j] = ps.value(layer->b2)[j] = T(0);
      }
    layer->mlp.init(ps, seed, stream);
  }
  pos_.init(ps, seed);
}

template <class T>
T TransformerNet<T>::scale(const Layer& layer) const {
  return temperature_scale<T>(c_.temperature,
                              layer.tau >= 0 ? this->params_.value(layer.tau) : nullptr,
                              c_.temperature_init, c_.m);
}

template <class T>
void TransformerNet<T>::forward(const T* x, int64_t B, T* y) {
  auto& ps = this->params_;
  B_ = B;
  const int64_t N = c_.T, H = c_.heads, m = c_.m, rows = B * N;
  const T eps = static_cast<T>(1e-5);
  const int64_t bits = c_.precision.qkv_bits(this->training());
  score_bits_ = c_.precision.score_bits(this->training());
  std::vector<T> h(rows * m);
  phi_.forward(ps, x, rows, h.data());
  pos_.forward(ps, h.data(), x, B, c_.d_in);
  for (auto& lp : layers_) {
    Layer& L = *lp;
    L.h_in = h;
    const T* u = L.h_in.data();
    if (c_.layernorm) {
      L.u.resize(rows * m);
      L.mean1.resize(rows);
      L.rstd1.resize(rows);
      layernorm_forward(L.u.data(), L.mean1.data(), L.rstd1.data(), L.h_in.data(),
                        ps.value(L.g1), ps.value(L.b1), rows, m, eps);
      u = L.u.data();
    }
    using Slot = std::pair<std::vector<T>*, int>;
    for (auto [buf, id] : {Slot{&L.q_buf, L.q}, Slot{&L.k_buf, L.k}, Slot{&L.v_buf, L.v}}) {
      buf->resize(rows * H * m);
      linear_forward(buf->data(), u, ps.value(id), static_cast<const T*>(nullptr), rows, m, H * m);
      head_quantize(buf->data(), B, N, H, m, bits);  // finite precision (straight-through)
    }
    L.probs.resize(B * H * N * N);
    L.heads.resize(rows * H * m);
    attention_forward(
        L.heads.data(), L.probs.data(), L.q_buf.data(), L.k_buf.data(), L.v_buf.data(), scale(L),
        AttentionShape{B, N, H, m, m, c_.exclude_self, score_bits_, false, c_.causal});
    std::vector<T> a(rows * m, T(0));
    head_sum_forward(a.data(), L.heads.data(), rows, H, m);
    L.h_mid.resize(rows * m);
    for (int64_t i = 0; i < rows * m; ++i) L.h_mid[i] = L.h_in[i] + a[i];
    const T* w = L.h_mid.data();
    if (c_.layernorm) {
      L.w.resize(rows * m);
      L.mean2.resize(rows);
      L.rstd2.resize(rows);
      layernorm_forward(L.w.data(), L.mean2.data(), L.rstd2.data(), L.h_mid.data(),
                        ps.value(L.g2), ps.value(L.b2), rows, m, eps);
      w = L.w.data();
    }
    L.f.resize(rows * m);
    L.mlp.forward(ps, w, rows, L.f.data());
    for (int64_t i = 0; i < rows * m; ++i) h[i] = L.h_mid[i] + L.f[i];
  }
  h_out_ = h;
  psi_out_.resize(rows * c_.d_out);
  psi_.forward(ps, h_out_.data(), rows, psi_out_.data());
  token_outputs_gather(y, psi_out_.data(), B, N, c_.T_out, c_.d_out);
}

template <class T>
void TransformerNet<T>::backward(const T* dy) {
  auto& ps = this->params_;
  const int64_t B = B_, N = c_.T, H = c_.heads, m = c_.m, rows = B * N;
  std::vector<T> d_psi_out(rows * c_.d_out, T(0));
  token_outputs_scatter(d_psi_out.data(), dy, B, N, c_.T_out, c_.d_out);
  std::vector<T> dh(rows * m, T(0));  // ∂L/∂h after the current layer
  psi_.backward(ps, d_psi_out.data(), dh.data());
  for (int64_t l = c_.layers - 1; l >= 0; --l) {
    Layer& L = *layers_[l];
    // h = h_mid + MLP(w): dh_mid = dh + (∂w/∂h_mid)ᵀ dMLP.
    std::vector<T> dw(rows * m, T(0)), dh_mid = dh;
    L.mlp.backward(ps, dh.data(), dw.data());
    if (c_.layernorm) {
      layernorm_backward(dh_mid.data(), ps.grad(L.g2), ps.grad(L.b2), dw.data(), L.h_mid.data(),
                         ps.value(L.g2), L.mean2.data(), L.rstd2.data(), rows, m);
    } else {
      for (int64_t i = 0; i < rows * m; ++i) dh_mid[i] += dw[i];
    }
    // h_mid = h_in + Σ_h attention(u): dh_in = dh_mid + (∂u/∂h_in)ᵀ du.
    std::vector<T> d_heads(rows * H * m, T(0));
    head_sum_backward(d_heads.data(), dh_mid.data(), rows, H, m);
    std::vector<T> dq(rows * H * m, T(0)), dk(rows * H * m, T(0)), dv(rows * H * m, T(0));
    T dscale = 0;
    attention_backward(
        dq.data(), dk.data(), dv.data(), &dscale, d_heads.data(), L.q_buf.data(), L.k_buf.data(),
        L.v_buf.data(), L.probs.data(), scale(L),
        AttentionShape{B, N, H, m, m, c_.exclude_self, score_bits_, false, c_.causal});
    if (L.tau >= 0) ps.grad(L.tau)[0] += dscale * scale(L);
    const T* u = c_.layernorm ? L.u.data() : L.h_in.data();
    std::vector<T> du(rows * m, T(0));
    using Slot = std::pair<std::vector<T>*, int>;
    for (auto [d, id] : {Slot{&dq, L.q}, Slot{&dk, L.k}, Slot{&dv, L.v}})
      linear_backward(du.data(), ps.grad(id), static_cast<T*>(nullptr), d->data(), u,
                      ps.value(id), rows, m, H * m);
    dh = dh_mid;
    if (c_.layernorm) {
      layernorm_backward(dh.data(), ps.grad(L.g1), ps.grad(L.b1), du.data(), L.h_in.data(),
                         ps.value(L.g1), L.mean1.data(), L.rstd1.data(), rows, m);
    } else {
      for (int64_t i = 0; i < rows * m; ++i) dh[i] += du[i];
    }
  }
  pos_.backward(ps, dh.data(), B);
  phi_.backward(ps, dh.data(), static_cast<T*>(nullptr));
}

template <class T>
std::vector<AttentionMap> layer_attention_maps(const std::vector<const std::vector<T>*>& probs,
                                               int64_t B, int64_t H, int64_t N) {
  std::vector<AttentionMap> maps;
  for (size_t l = 0; l < probs.size(); ++l)
    maps.push_back(
        {"layer" + std::to_string(l), {B, H, N, N}, {probs[l]->begin(), probs[l]->end()}});
  return maps;
}

template <class T>
std::vector<AttentionMap> TransformerNet<T>::attention_maps() const {
  std::vector<const std::vector<T>*> probs;
  for (const auto& layer : layers_) probs.push_back(&layer->probs);
  return layer_attention_maps(probs, B_, c_.heads, c_.T);
}

template <class T>
std::vector<std::pair<std::string, double>> TransformerNet<T>::sizes() const {
  return {{"m", double(c_.m)}, {"heads", double(c_.heads)}, {"layers", double(c_.layers)}};
}

template std::vector<AttentionMap> layer_attention_maps<float>(
    const std::vector<const std::vector<float>*>&, int64_t, int64_t, int64_t);
template std::vector<AttentionMap> layer_attention_maps<double>(
    const std::vector<const std::vector<double>*>&, int64_t, int64_t, int64_t);
template class TransformerNet<float>;
template class TransformerNet<double>;

}  // namespace attn
