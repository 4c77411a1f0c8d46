// Gpt2Net (see gpt2_net.h).
#include "nn/gpt2_net.h"

#include <cmath>

#include "core/error.h"
#include "core/rng.h"
#include "nn/token_outputs.h"
#include "nn/transformer_net.h"
#include "ops/attention.h"
#include "ops/blas.h"
#include "ops/layernorm.h"
#include "ops/linear.h"

namespace attn {

bool gpt2_head_tied(const Gpt2NetConfig& c) {
  switch (c.head) {
    case Gpt2Head::automatic: return c.d_out == c.d_in;
    case Gpt2Head::tied:
      ATTN_CHECK(c.d_out == c.d_in,
                 "model." + c.name +
                     ".head = \"tied\" reads the logits through wte, which needs "
                     "as many outputs as input tokens, but d_out = " +
                     std::to_string(c.d_out) + " and d_in = " + std::to_string(c.d_in) +
                     "; set model.head = \"separate\" (or \"auto\")");
      return true;
    case Gpt2Head::separate: return false;
  }
  ATTN_ASSERT(false, "gpt2_head_tied: unknown Gpt2Head");
  return false;
}

namespace {

constexpr double kGeluC = 0.7978845608028654;  // √(2/π)
constexpr double kGeluA = 0.044715;

// Weights N(0, std²) from the stream "<stream>.<tensor name>" of `seed`.
template <class T>
void init_normal(ParamSet<T>& ps, int id, double std, uint64_t seed, const std::string& stream) {
  Rng rng(seed, stream + "." + ps.entry(id).name, 0);
  T* v = ps.value(id);
  for (int64_t i = 0; i < ps.entry(id).size; ++i) v[i] = static_cast<T>(std * rng.gaussian());
}

template <class T>
void fill(ParamSet<T>& ps, int id, T value) {
  std::fill(ps.value(id), ps.value(id) + ps.entry(id).size, value);
}

}  // namespace

template <class T>
void gelu_tanh_forward(T* out, const T* inp, int64_t count) {
  const T c = static_cast<T>(kGeluC), a = static_cast<T>(kGeluA);
  for (int64_t i = 0; i < count; ++i) {
    const T x = inp[i];
    out[i] = T(0.5) * x * (T(1) + std::tanh(c * (x + a * x * x * x)));
  }
}

template <class T>
void gelu_tanh_backward(T* dinp, const T* dout, const T* inp, int64_t count) {
  const T c = static_cast<T>(kGeluC), a = static_cast<T>(kGeluA);
  for (int64_t i = 0; i < count; ++i) {
    const T x = inp[i], t = std::tanh(c * (x + a * x * x * x));
    const T d = T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * c * (T(1) + 3 * a * x * x);
    dinp[i] += dout[i] * d;
  }
}

template <class T>
Gpt2Net<T>::Gpt2Net(const Gpt2NetConfig& config) : c_(config) {
  const std::string& n = c_.name;
  token_outputs_check(n, c_.T, c_.T_out);
  quantize_check_bits(c_.precision.bits, "model.bits");
  ATTN_CHECK(c_.m % c_.heads == 0, "model." + n + ": m = " + std::to_string(c_.m) +
                                       " is not a multiple of heads = " + std::to_string(c_.heads) +
                                       " (each head has width m/heads); change m or heads");
  tied_ = gpt2_head_tied(c_);
  auto& ps = this->params_;
  const int64_t m = c_.m;
  wte_ = ps.add("wte.weight", {c_.d_in, m});
  pos_.declare(ps, c_.positions, c_.T, m, n);
  layers_.resize(static_cast<size_t>(c_.layers));
  for (int64_t l = 0; l < c_.layers; ++l) {
    Layer& L = layers_[static_cast<size_t>(l)];
    const std::string p = "h." + std::to_string(l) + ".";
    L.g1 = ps.add(p + "ln_1.weight", {m});
    L.b1 = ps.add(p + "ln_1.bias", {m});
    L.attn_w = ps.add(p + "attn.c_attn.weight", {m, 3 * m});
    L.attn_b = ps.add(p + "attn.c_attn.bias", {3 * m});
    L.proj_w = ps.add(p + "attn.c_proj.weight", {m, m});
    L.proj_b = ps.add(p + "attn.c_proj.bias", {m});
    L.g2 = ps.add(p + "ln_2.weight", {m});
    L.b2 = ps.add(p + "ln_2.bias", {m});
    L.fc_w = ps.add(p + "mlp.c_fc.weight", {m, 4 * m});
    L.fc_b = ps.add(p + "mlp.c_fc.bias", {4 * m});
    L.mproj_w = ps.add(p + "mlp.c_proj.weight", {4 * m, m});
    L.mproj_b = ps.add(p + "mlp.c_proj.bias", {m});
  }
  gf_ = ps.add("ln_f.weight", {m});
  bf_ = ps.add("ln_f.bias", {m});
  if (!tied_) head_ = ps.add("lm_head.weight", {c_.d_out, m});
  ps.allocate();
}

template <class T>
void Gpt2Net<T>::init(uint64_t seed) {
  auto& ps = this->params_;
  const std::string stream = c_.name + ".init";
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c_.layers));
  init_normal(ps, wte_, 0.02, seed, stream);
  for (Layer& L : layers_) {
    for (int id : {L.g1, L.g2}) fill(ps, id, T(1));
    for (int id : {L.b1, L.b2, L.attn_b, L.proj_b, L.fc_b, L.mproj_b}) fill(ps, id, T(0));
    for (int id : {L.attn_w, L.fc_w}) init_normal(ps, id, 0.02, seed, stream);
    for (int id : {L.proj_w, L.mproj_w}) init_normal(ps, id, proj_std, seed, stream);
  }
  fill(ps, gf_, T(1));
  fill(ps, bf_, T(0));
  if (head_ >= 0) init_normal(ps, head_, 0.02, seed, stream);
  pos_.init(ps, seed);
}

template <class T>
void Gpt2Net<T>::attention_layer_forward(Layer& L, int64_t B, int64_t bits) {
  auto& ps = this->params_;
  const int64_t N = c_.T, H = c_.heads, m = c_.m, rows = B * N, dh = m / H;
  std::vector<T>& qkv = qkv_;  // scratch kept between calls
  qkv.resize(rows * 3 * m);
  linear_forward(qkv.data(), L.u.data(), ps.value(L.attn_w), ps.value(L.attn_b), rows, m, 3 * m);
  L.q.resize(rows * m);
  L.k.resize(rows * m);
  L.v.resize(rows * m);
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = qkv.data() + r * 3 * m;
    std::copy(src, src + m, L.q.data() + r * m);
    std::copy(src + m, src + 2 * m, L.k.data() + r * m);
    std::copy(src + 2 * m, src + 3 * m, L.v.data() + r * m);
  }
  for (std::vector<T>* buf : {&L.q, &L.k, &L.v}) head_quantize(buf->data(), B, N, H, dh, bits);
  L.probs.resize(B * H * N * N);
  L.heads.resize(rows * m);
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(dh)));
  attention_forward(L.heads.data(), L.probs.data(), L.q.data(), L.k.data(), L.v.data(), scale,
                    AttentionShape{B, N, H, dh, dh, false, score_bits_, false, c_.causal});
}

template <class T>
void Gpt2Net<T>::forward(const T* x, int64_t B, T* y) {
  auto& ps = this->params_;
  x_ = x;
  B_ = B;
  const int64_t N = c_.T, m = c_.m, rows = B * N, f = 4 * m;
  const T eps = static_cast<T>(1e-5);
  const int64_t bits = c_.precision.qkv_bits(this->training());
  score_bits_ = c_.precision.score_bits(this->training());
  std::vector<T> h(rows * m), a(rows * m);
  linear_forward(h.data(), x, ps.value(wte_), static_cast<const T*>(nullptr), rows, c_.d_in, m);
  pos_.forward(ps, h.data(), x, B, c_.d_in);
  for (Layer& L : layers_) {
    L.h_in = h;
    L.u.resize(rows * m);
    L.mean1.resize(rows);
    L.rstd1.resize(rows);
    layernorm_forward(L.u.data(), L.mean1.data(), L.rstd1.data(), L.h_in.data(), ps.value(L.g1),
                      ps.value(L.b1), rows, m, eps);
    attention_layer_forward(L, B, bits);
    linear_forward(a.data(), L.heads.data(), ps.value(L.proj_w), ps.value(L.proj_b), rows, m, m);
    L.h_mid.resize(rows * m);
    for (int64_t i = 0; i < rows * m; ++i) L.h_mid[i] = L.h_in[i] + a[i];
    L.w.resize(rows * m);
    L.mean2.resize(rows);
    L.rstd2.resize(rows);
    layernorm_forward(L.w.data(), L.mean2.data(), L.rstd2.data(), L.h_mid.data(), ps.value(L.g2),
                      ps.value(L.b2), rows, m, eps);
    L.fc.resize(rows * f);
    L.act.resize(rows * f);
    linear_forward(L.fc.data(), L.w.data(), ps.value(L.fc_w), ps.value(L.fc_b), rows, m, f);
    gelu_tanh_forward(L.act.data(), L.fc.data(), rows * f);
    linear_forward(a.data(), L.act.data(), ps.value(L.mproj_w), ps.value(L.mproj_b), rows, f, m);
    for (int64_t i = 0; i < rows * m; ++i) h[i] = L.h_mid[i] + a[i];
  }
  h_out_ = std::move(h);
  z_.resize(rows * m);
  mean_f_.resize(rows);
  rstd_f_.resize(rows);
  layernorm_forward(z_.data(), mean_f_.data(), rstd_f_.data(), h_out_.data(), ps.value(gf_),
                    ps.value(bf_), rows, m, eps);
  // logits (rows, d_out) = z · Eᵀ, E (d_out, m).
  logits_.resize(rows * c_.d_out);  // the gemm below writes every entry (beta 0)
  const T* E = ps.value(tied_ ? wte_ : head_);
  if (rows > 0)
    gemm(false, true, rows, c_.d_out, m, T(1), z_.data(), m, E, m, T(0), logits_.data(), c_.d_out);
  token_outputs_gather(y, logits_.data(), B, N, c_.T_out, c_.d_out);
}

template <class T>
void Gpt2Net<T>::backward(const T* dy) {
  auto& ps = this->params_;
  const int64_t B = B_, N = c_.T, H = c_.heads, m = c_.m, rows = B * N, f = 4 * m, dh = m / H;
  if (rows == 0) return;
  std::vector<T> dlogits(rows * c_.d_out, T(0));
  token_outputs_scatter(dlogits.data(), dy, B, N, c_.T_out, c_.d_out);
  const int E = tied_ ? wte_ : head_;
  std::vector<T> dz(rows * m, T(0)), dh_(rows * m, T(0));
  gemm(false, false, rows, m, c_.d_out, T(1), dlogits.data(), c_.d_out, ps.value(E), m, T(0),
       dz.data(), m);
  gemm(true, false, c_.d_out, m, rows, T(1), dlogits.data(), c_.d_out, z_.data(), m, T(1),
       ps.grad(E), m);
  layernorm_backward(dh_.data(), ps.grad(gf_), ps.grad(bf_), dz.data(), h_out_.data(),
                     ps.value(gf_), mean_f_.data(), rstd_f_.data(), rows, m);
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(dh)));
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
    Layer& L = *it;
    // h = h_mid + mlp(LN₂(h_mid)).
    std::vector<T> dh_mid = dh_, dact(rows * f, T(0)), dfc(rows * f, T(0)), dw(rows * m, T(0));
    linear_backward(dact.data(), ps.grad(L.mproj_w), ps.grad(L.mproj_b), dh_.data(), L.act.data(),
                    ps.value(L.mproj_w), rows, f, m);
    gelu_tanh_backward(dfc.data(), dact.data(), L.fc.data(), rows * f);
    linear_backward(dw.data(), ps.grad(L.fc_w), ps.grad(L.fc_b), dfc.data(), L.w.data(),
                    ps.value(L.fc_w), rows, m, f);
    layernorm_backward(dh_mid.data(), ps.grad(L.g2), ps.grad(L.b2), dw.data(), L.h_mid.data(),
                       ps.value(L.g2), L.mean2.data(), L.rstd2.data(), rows, m);
    // h_mid = h_in + c_proj(attention(c_attn(LN₁(h_in)))).
    std::vector<T> dheads(rows * m, T(0)), dq(rows * m, T(0)), dk(rows * m, T(0)),
        dv(rows * m, T(0));
    linear_backward(dheads.data(), ps.grad(L.proj_w), ps.grad(L.proj_b), dh_mid.data(),
                    L.heads.data(), ps.value(L.proj_w), rows, m, m);
    attention_backward(dq.data(), dk.data(), dv.data(), static_cast<T*>(nullptr), dheads.data(),
                       L.q.data(), L.k.data(), L.v.data(), L.probs.data(), scale,
                       AttentionShape{B, N, H, dh, dh, false, score_bits_, false, c_.causal});
    std::vector<T> dqkv(rows * 3 * m), du(rows * m, T(0));
    for (int64_t r = 0; r < rows; ++r) {
      T* dst = dqkv.data() + r * 3 * m;
      std::copy(dq.data() + r * m, dq.data() + (r + 1) * m, dst);
      std::copy(dk.data() + r * m, dk.data() + (r + 1) * m, dst + m);
      std::copy(dv.data() + r * m, dv.data() + (r + 1) * m, dst + 2 * m);
    }
    linear_backward(du.data(), ps.grad(L.attn_w), ps.grad(L.attn_b), dqkv.data(), L.u.data(),
                    ps.value(L.attn_w), rows, m, 3 * m);
    dh_ = std::move(dh_mid);
    layernorm_backward(dh_.data(), ps.grad(L.g1), ps.grad(L.b1), du.data(), L.h_in.data(),
                       ps.value(L.g1), L.mean1.data(), L.rstd1.data(), rows, m);
  }
  pos_.backward(ps, dh_.data(), B);
  linear_backward(static_cast<T*>(nullptr), ps.grad(wte_), static_cast<T*>(nullptr), dh_.data(), x_,
                  ps.value(wte_), rows, c_.d_in, m);
}

template <class T>
std::vector<AttentionMap> Gpt2Net<T>::attention_maps() const {
  std::vector<const std::vector<T>*> probs;
  for (const Layer& layer : layers_) probs.push_back(&layer.probs);
  return layer_attention_maps(probs, B_, c_.heads, c_.T);
}

template <class T>
std::vector<std::pair<std::string, double>> Gpt2Net<T>::sizes() const {
  return {{"m", double(c_.m)}, {"heads", double(c_.heads)}, {"layers", double(c_.layers)}};
}

template void gelu_tanh_forward<float>(float*, const float*, int64_t);
template void gelu_tanh_forward<double>(double*, const double*, int64_t);
template void gelu_tanh_backward<float>(float*, const float*, const float*, int64_t);
template void gelu_tanh_backward<double>(double*, const double*, const double*, int64_t);
template class Gpt2Net<float>;
template class Gpt2Net<double>;

}  // namespace attn
