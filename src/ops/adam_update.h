// One Adam or AdamW update of a flat parameter vector, element by element (the loop of
// train/optimizer.cpp's Optimizer::step), in the ISA copy in use (ops/isa.h).
//
// Shapes: params, grads, m, v hold n values. Per element, in this order and these roundings
// (the formulas of train/optimizer.h, with the bias corrections folded into step_size and
// inv_sqrt_bc2 by the caller):
//   g ← grad (+ wd·θ for Adam);  θ ← θ·decay first for AdamW
//   m ← b1·m + (1 − b1)·g;  v ← b2·v + (1 − b2)·g·g;  θ ← θ − step_size·m / (√v·inv_sqrt_bc2 + ε)
// Compiled once per instruction set with -ffp-contract=off and -fno-math-errno (√ of v ≥ 0
// never sets errno; without the flag GCC keeps the scalar sqrt call and the loop does not
// vectorise): vector √ and ÷ round like the scalar ones, so every copy gives the same bits as
// the scalar loop, which the tests keep as the reference.
#pragma once

#include <cstdint>

namespace attn {

template <class T>
struct AdamScalars {
  T b1, b2, step_size, inv_sqrt_bc2, eps;
  T wd;     // Adam: added to the gradient as wd·θ
  T decay;  // AdamW: θ ← θ·decay before the step
  bool decoupled;  // AdamW
};

template <class T>
void adam_update(T* params, const T* grads, T* m, T* v, int64_t n, const AdamScalars<T>& s);

// The same update as a plain scalar loop, for the tests.
template <class T>
void adam_update_ref(T* params, const T* grads, T* m, T* v, int64_t n, const AdamScalars<T>& s);

}  // namespace attn
