// Element-wise activations (identity, relu, exact gelu, tanh, sigmoid): names, forward,
// backward, and scalar double references.
//
// Shapes: inp, out, dinp, dout hold `count` values. Backward dinp += dout · σ'(inp).
// Which forward values backward reads: relu reads inp (or out when inp is null), gelu reads
// inp, tanh and sigmoid read out (or recompute from inp when out is null), identity neither.
// gelu(x) = x·Φ(x) = ½·x·erfc(−x/√2) (erfc keeps Φ accurate in the left tail);
// gelu'(x) = Φ(x) + x·φ(x). tanh and sigmoid are the vectorised ones of ops/vmath.h (sigmoid
// from exp(−|x|), so it never overflows).
#include "ops/activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/choice.h"
#include "core/error.h"
#include "core/suggest.h"
#include "ops/attention_tiles.h"
#include "ops/vmath.h"

namespace attn {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

// out[k] = inp[k] > 0 ? inp[k] : 0 (NaN and −0 give +0) in vectors of VB bytes of the ISA copy
// in use: the scalar ternary does not vectorise under GCC's default -ftrapping-math (a float
// compare may trap), a vector compare does. The same values as the scalar loop; out may be inp.
template <int VB, class T>
ATTN_COPY_BODY void relu_body(T* out, const T* inp, int64_t n) {
  using V = typename attention_tiles::VecOf<T, VB>::type;
  constexpr int L = static_cast<int>(VB / sizeof(T));
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    V x;
    std::memcpy(&x, inp + k, sizeof(V));
    x = x > V{} ? x : V{};
    std::memcpy(out + k, &x, sizeof(V));
  }
  for (; k < n; ++k) out[k] = inp[k] > T(0) ? inp[k] : T(0);
}
ATTN_TILES_KERNEL(ReluKernel, relu_body)

// dinp += dout · σ'(x) with σ' from the activation's value y, for tanh and sigmoid when the
// forward's output is not at hand: y recomputed a chunk at a time (bit-equal to the forward).
template <class T, class Value, class Slope>
void backward_from_value(T* dinp, const T* dout, const T* inp, int64_t count, Value value,
                         Slope slope) {
  constexpr int64_t kChunk = 256;
  T y[kChunk];
  for (int64_t k0 = 0; k0 < count; k0 += kChunk) {
    const int64_t n = std::min(kChunk, count - k0);
    value(y, inp + k0, n);
    for (int64_t k = 0; k < n; ++k) dinp[k0 + k] += dout[k0 + k] * slope(y[k]);
  }
}

}  // namespace

constexpr Choice<Activation> kActivations[] = {{Activation::identity, "identity"},
                                              {Activation::relu, "relu"},
                                              {Activation::gelu, "gelu"},
                                              {Activation::tanh, "tanh"},
                                              {Activation::sigmoid, "sigmoid"}};

Activation activation_parse(const std::string& name) {
  if (const Activation* a = choice_find(name, kActivations)) return *a;
  const auto names = activation_names();
  throw UserError("unknown activation '" + name + "'" + did_you_mean(name, names) +
                  "; activations: " + join_names(names));
}

const char* activation_name(Activation a) { return choice_name(a, kActivations); }

std::vector<std::string> activation_names() { return choice_names(kActivations); }

template <class T>
void activation_forward(T* out, const T* inp, int64_t count, Activation a) {
  ATTN_CHECK(count >= 0, "activation: count must be non-negative, got " + std::to_string(count));
  switch (a) {
    case Activation::identity:
      for (int64_t k = 0; k < count; ++k) out[k] = inp[k];
      return;
    case Activation::relu:
      attention_tiles::isa_run<ReluKernel>(out, inp, count);
      return;
    case Activation::gelu: {
      const T c = T(kInvSqrt2);
      for (int64_t k = 0; k < count; ++k) out[k] = T(0.5) * inp[k] * std::erfc(-inp[k] * c);
      return;
    }
    case Activation::tanh:
      vmath_tanh(out, inp, count);
      return;
    case Activation::sigmoid:
      vmath_sigmoid(out, inp, count);
      return;
  }
  ATTN_ASSERT(false, "activation_forward: unknown activation");
}

template <class T>
void activation_backward(T* dinp, const T* dout, const T* inp, const T* out, int64_t count,
                         Activation a) {
  ATTN_CHECK(count >= 0, "activation: count must be non-negative, got " + std::to_string(count));
  switch (a) {
    case Activation::identity:
      for (int64_t k = 0; k < count; ++k) dinp[k] += dout[k];
      return;
    case Activation::relu: {
      const T* x = inp ? inp : out;  // out > 0 exactly when inp > 0
      ATTN_ASSERT(x != nullptr, "activation_backward(relu) needs inp or out");
      // dout read unconditionally so that the select vectorises (a branch on the sign
      // mispredicts about half the time).
      for (int64_t k = 0; k < count; ++k) {
        const T g = dout[k];
        dinp[k] += x[k] > T(0) ? g : T(0);
      }
      return;
    }
    case Activation::gelu: {
      ATTN_ASSERT(inp != nullptr, "activation_backward(gelu) needs inp");
      const T c = T(kInvSqrt2), n = T(kInvSqrt2Pi);
      for (int64_t k = 0; k < count; ++k) {
        const T x = inp[k];
        const T cdf = T(0.5) * std::erfc(-x * c);
        const T pdf = n * std::exp(T(-0.5) * x * x);
        dinp[k] += dout[k] * (cdf + x * pdf);
      }
      return;
    }
    case Activation::tanh:
      if (out) {
        for (int64_t k = 0; k < count; ++k) dinp[k] += dout[k] * (T(1) - out[k] * out[k]);
      } else {
        ATTN_ASSERT(inp != nullptr, "activation_backward(tanh) needs inp or out");
        backward_from_value(dinp, dout, inp, count, vmath_tanh<T>,
                            [](T y) { return T(1) - y * y; });
      }
      return;
    case Activation::sigmoid:
      if (out) {
        for (int64_t k = 0; k < count; ++k) dinp[k] += dout[k] * out[k] * (T(1) - out[k]);
      } else {
        ATTN_ASSERT(inp != nullptr, "activation_backward(sigmoid) needs inp or out");
        backward_from_value(dinp, dout, inp, count, vmath_sigmoid<T>,
                            [](T y) { return y * (T(1) - y); });
      }
      return;
  }
  ATTN_ASSERT(false, "activation_backward: unknown activation");
}

// References: the textbook formulas, written without the fast path's rewrites.
double activation_value_ref(double x, Activation a) {
  switch (a) {
    case Activation::identity: return x;
    case Activation::relu: return x > 0 ? x : 0.0;
    case Activation::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::tanh: return std::tanh(x);
    case Activation::sigmoid: return 1.0 / (1.0 + std::exp(-x));
  }
  ATTN_ASSERT(false, "activation_value_ref: unknown activation");
  return 0;
}

double activation_derivative_ref(double x, Activation a) {
  switch (a) {
    case Activation::identity: return 1.0;
    case Activation::relu: return x > 0 ? 1.0 : 0.0;
    case Activation::gelu: {
      const double pi = 3.14159265358979323846;
      return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) +
             x * std::exp(-x * x / 2) / std::sqrt(2 * pi);
    }
    case Activation::tanh: {
      const double ch = std::cosh(x);
      return 1.0 / (ch * ch);
    }
    case Activation::sigmoid: {
      const double s = 1.0 / (1.0 + std::exp(-x));
      return s * (1.0 - s);
    }
  }
  ATTN_ASSERT(false, "activation_derivative_ref: unknown activation");
  return 0;
}

template void activation_forward<float>(float*, const float*, int64_t, Activation);
template void activation_forward<double>(double*, const double*, int64_t, Activation);
template void activation_backward<float>(float*, const float*, const float*, const float*, int64_t,
                                         Activation);
template void activation_backward<double>(double*, const double*, const double*, const double*,
                                          int64_t, Activation);

}  // namespace attn
