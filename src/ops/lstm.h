// One LSTM layer run over whole sequences (the `lstm` model stacks layers and directions).
//
// Gates in PyTorch's order (input i, forget f, cell g, output o), one bias (PyTorch's
// b_ih + b_hh folded into one). h_0 = c_0 = 0. With `reverse` the layer reads t = T−1 … 0
// (the backward direction of a bidirectional LSTM); h[:, t] is always the state after
// reading token t in that direction.
// Shapes (row-major):
//   x      (B, T, C)       inputs
//   wx     (C, 4·Hd)       input weights, columns [i | f | g | o]
//   wh     (Hd, 4·Hd)      recurrent weights
//   b      (4·Hd)
//   h      (B, T, Hd)      hidden states
//   c      (T, B, Hd)      cache: cell states, time-major (a step's rows one block)
//   tanh_c (T, B, Hd)      cache: tanh(c), time-major
//   gates  (T, B, 4·Hd)    cache: post-activation gates [σ(i) | σ(f) | tanh(g) | σ(o)], time-major
// c_t = f ∘ c_{t−1} + i ∘ g,  h_t = o ∘ tanh(c_t).
// Backward (through time) takes dh (B, T, Hd), the loss gradient w.r.t. every h[:, t], and
// accumulates (+=) into every non-null dx (B, T, C), dwx, dwh, db. With LstmDh::last_step_only
// dh is taken as +0 but at the last step in reading order (t = T−1, or 0 with `reverse`), as
// under a read-out of the final state only: the other steps' rows are not read (they may hold
// anything) and the gradients have the same bits as with +0 there.
// A mostly-zero x (one- and multi-hot tokens) is multiplied by its non-zeros (ops/sparse_rows.h).
// x_sparse, when given, is this very x's list as sparse_rows_build(·, x, B·T, C) made it (and
// found it sparse enough; only its shape is checked), e.g. built once by a network for its first
// layer's forward, backward and head; null: the layer builds it itself where x is sparse enough.
// Either way, the same bits.
#pragma once

#include <cstdint>

#include "ops/sparse_rows.h"

namespace attn {

struct LstmShape {
  int64_t B = 1, T = 1, C = 1, Hd = 1;
  bool reverse = false;
};

// Which steps' rows of dh lstm_backward reads (see above).
enum class LstmDh { every_step, last_step_only };

template <class T>
void lstm_forward(T* h, T* c, T* tanh_c, T* gates, const T* x, const T* wx, const T* wh,
                  const T* b, const LstmShape& s, const SparseRows<T>* x_sparse = nullptr);
template <class T>
void lstm_backward(T* dx, T* dwx, T* dwh, T* db, const T* dh, const T* x, const T* wx, const T* wh,
                   const T* h, const T* c, const T* tanh_c, const T* gates, const LstmShape& s,
                   const SparseRows<T>* x_sparse = nullptr, LstmDh dh_steps = LstmDh::every_step);

template <class T>
void lstm_forward_ref(T* h, T* c, T* tanh_c, T* gates, const T* x, const T* wx, const T* wh,
                      const T* b, const LstmShape& s);

}  // namespace attn
