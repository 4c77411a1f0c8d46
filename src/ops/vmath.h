// Vectorised element-wise sigmoid, tanh and exp for the ops' hot loops (LSTM gates,
// activations, softmax rows).
//
// out[k] = σ(in[k]), tanh(in[k]) or exp(in[k]) for 0 <= k < n; out may alias in.
// Float values go through vectorised kernels, the same operations on every element (the last
// vector padded with zeros), so an element's result depends only on its value — never on its
// position, the pointer's alignment or n: a sequence gives the same bits alone or inside a batch.
// float sigmoid: e = exp(−|x|) by a vectorisable Cody–Waite + polynomial exp, then 1/(1 + e)
// for x >= 0 and e/(1 + e) for x < 0: no overflow, relative error ≤ 2.1e-7 down to x = −87
// (below, the value stays at 1.6e-38 instead of going denormal); NaN stays NaN.
// float tanh: tanh|x| = −expm1(−2|x|)/(2 + expm1(−2|x|)) with the same exp kernel, relative error
// ≤ 2.1e-7, tanh(±0) = ±0, saturates to ±1.
// float exp (vmath_exp_nonpositive, for softmax rows after the max is subtracted): inputs must
// be <= 0; the same Cody–Waite + polynomial exp, relative error ≤ 1e-7; −inf gives exactly 0
// (masked entries), inputs below −87 give exp(−87) ≈ 1.6e-38 (never a denormal); NaN stays NaN.
// (All three measured against double on every float, 2026-12-07: worst 2.04e-7, 2.09e-7 and
// 9.4e-8.) The bounds hold with subnormals flushed too (core/float_env.h: how attnlab trains) for
// inputs and results of at least 2^-126 in magnitude (a subnormal tanh is flushed to 0): the last
// step, 2^n · (e^r − 1) + 2^n, is one fused multiply-add whose result is never below 2^-126, so no
// subnormal intermediate is flushed. (Before 2026-12-07 it was a product then a sum,
// and flushing the product lost up to 41 % near x = −87.)
// double: the same stable sigmoid formula, std::tanh and std::exp, element by element (double is
// for gradient checks, where accuracy matters and speed does not).
#pragma once

#include <cstdint>

namespace attn {

template <class T>
void vmath_sigmoid(T* out, const T* in, int64_t n);
template <class T>
void vmath_tanh(T* out, const T* in, int64_t n);
template <class T>
void vmath_exp_nonpositive(T* out, const T* in, int64_t n);

}  // namespace attn
