// One LSTM layer over whole sequences: forward and backward through time on GEMMs.
//
// Shapes (row-major, see lstm.h): x (B, T, C), wx (C, 4Hd), wh (Hd, 4Hd), b (4Hd), h (B, T, Hd);
// the caches time-major: c, tanh_c (T, B, Hd), gates (T, B, 4Hd) holding
// [σ(i) | σ(f) | tanh(g) | σ(o)], so that a step's rows are one contiguous block (in (B, T, ·)
// arrays a step's gate rows lie T·4Hd floats apart; whole steps 1.02–1.08× shorter on a Zen 4
// EPYC, docs/performance.md#lstm-time-major-caches).
// Forward, per step in reading order: gates[t] = x[:, t] · wx + b (a GEMM, or, when x is mostly
// zeros, as in one- and multi-hot encodings, on its non-zeros: ops/sparse_rows.h), then
// gates[t] += h[:, t_prev] · wh as one (B × Hd)·(Hd × 4Hd) product over the batch (h's rows
// strided, no copies), then the element-wise cell update (sigmoid/tanh vectorised, ops/vmath.h).
// The two recurrent products with the weights (this one, and dh_rec below) run, in float, on FMA
// register tiles with the weights packed once per call (ops/fma_product.h; OpenBLAS re-packed them
// every step, docs/performance.md#lstm-fma-products); dwh and, in double (gradient checks), all
// three on OpenBLAS.
// A null b is a zero bias.
// Backward: per step (reverse reading order) the element-wise gate gradients into da, the step's
// (B, 4Hd) block, with db += Σ da summed in the same loop, and, while the block is hot in L2, every
// product that reads it: dh_rec = da · whᵀ for the previous step, dwh += h[:, t_prev]ᵀ · da,
// dwx += x[:, t]ᵀ · da (on x's non-zeros when it is sparse), dx[:, t] += da · wxᵀ. (Until
// 2026-12-06 da was kept for every step, 4·B·T·Hd floats, and dwh, dwx and dx were one GEMM each
// after the loop: writing that array and reading it back cost more than the larger GEMMs saved, see
// docs/performance.md#lstm-da-per-step.) The element-wise parts of both passes (the cell loops) are
// compiled once per instruction set and run through attention_tiles::isa_run, float and double
// alike: every copy makes the same operations in the same order.
#include "ops/lstm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "ops/attention_tiles.h"
#include "ops/blas.h"
#include "ops/fma_product.h"
#include "ops/isa.h"
#include "ops/sparse_rows.h"
#include "ops/vmath.h"

namespace attn {
namespace {

void lstm_check(const LstmShape& s) {
  ATTN_CHECK(s.B >= 0 && s.T >= 0 && s.C >= 1 && s.Hd >= 1,
             "lstm: need batch >= 0, length >= 0, input dim >= 1 and hidden size >= 1 (B " +
                 std::to_string(s.B) + ", T " + std::to_string(s.T) + ", C " +
                 std::to_string(s.C) + ", Hd " + std::to_string(s.Hd) + ")");
}

// Backward's scratch, kept per thread across calls (fresh vectors would cost page faults on every
// call): da (B, 4Hd) for one step, dc and dhrec (B, Hd), the input's non-zeros, and (float) the
// recurrent weights packed for the products: wh forward, whᵀ backward.
template <class T>
struct LstmScratch {
  std::vector<T> da, dc, dhrec;
  SparseRows<T> x_sparse;
  std::vector<float> wh_panels;
};
template <class T>
LstmScratch<T>& lstm_scratch() {
  thread_local LstmScratch<T> s;
  return s;
}

// x's non-zero list (rows b·L + t; step t: rows t, t + L, …): the caller's, else built into the
// scratch; null when x is not sparse enough.
template <class T>
const SparseRows<T>* x_sparse_list(const SparseRows<T>* given, const T* x, int64_t rows,
                                   int64_t C) {
  if (given) {
    ATTN_ASSERT(given->rows == rows && given->cols == C, "x's non-zero list has another shape");
    return given;
  }
  SparseRows<T>& own = lstm_scratch<T>().x_sparse;
  return sparse_rows_build(own, x, rows, C) ? &own : nullptr;
}

// One step of the forward pass's element-wise part for every sequence bb < B: the gate
// pre-activations (the step's block of gates, overwritten by [σ(i) | σ(f) | tanh(g) | σ(o)]) to
// c, tanh(c) and h. Rows of gates, c_prev (null before the first step: c = i·g), c and tanh_c
// advance by 4Hd, Hd, Hd, Hd; of h by h_stride.
template <class T>
struct CellForwardStep {
  T* gates;
  const T* c_prev;
  T* c;
  T* tanh_c;
  T* h;
  int64_t h_stride;
};

// One row's c and h from its activated gates (every array distinct, so the loops vectorise).
template <bool First, class T>
ATTN_COPY_BODY void cell_forward_row(int64_t H, const T* __restrict ig, const T* __restrict fg,
                                     const T* __restrict gg, const T* __restrict og,
                                     const T* __restrict cp, T* __restrict ct, T* __restrict tc,
                                     T* __restrict ht) {
  for (int64_t k = 0; k < H; ++k) ct[k] = First ? ig[k] * gg[k] : fg[k] * cp[k] + ig[k] * gg[k];
  vmath_tanh(tc, ct, H);
  for (int64_t k = 0; k < H; ++k) ht[k] = og[k] * tc[k];
}

// How many sequences ahead the cell loops ask for h's and dh's rows: they lie L·Hd floats apart,
// too far for the hardware prefetcher to follow from row to row.
constexpr int64_t kCellAhead = 2;

// Asks for the 64-byte cache lines that hold p[0 .. n) ahead of their use.
template <class T>
ATTN_COPY_BODY void prefetch_span(const T* p, int64_t n) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p + n);
  for (uintptr_t a = first; a < end; a += 64) __builtin_prefetch(reinterpret_cast<const void*>(a));
}

// The forward's cell loop over one step's B rows (VB: the copy's vector width, unused: the loops
// are plain element-wise loops the compiler vectorises for the copy's target).
template <int VB, class T>
ATTN_COPY_BODY void cell_forward_loop(const CellForwardStep<T>* sp, int64_t B, int64_t H) {
  const CellForwardStep<T>& s = *sp;
  const int64_t G = 4 * H;
  for (int64_t bb = 0; bb < B; ++bb) {
    // h's rows lie L·Hd floats apart: asked for kCellAhead sequences ahead.
    if (bb + kCellAhead < B) prefetch_span(s.h + (bb + kCellAhead) * s.h_stride, H);
    T* a = s.gates + bb * G;
    vmath_sigmoid(a, a, 2 * H);              // i, f
    vmath_tanh(a + 2 * H, a + 2 * H, H);     // g
    vmath_sigmoid(a + 3 * H, a + 3 * H, H);  // o
    T* ct = s.c + bb * H;
    T* tc = s.tanh_c + bb * H;
    T* ht = s.h + bb * s.h_stride;
    if (s.c_prev) {
      cell_forward_row<false>(H, a, a + H, a + 2 * H, a + 3 * H, s.c_prev + bb * H, ct, tc, ht);
    } else {
      cell_forward_row<true>(H, a, a + H, a + 2 * H, a + 3 * H, s.c_prev, ct, tc, ht);
    }
  }
}

ATTN_TILES_KERNEL(CellForwardKernel, cell_forward_loop)

// One step of the backward pass's element-wise part for every sequence bb < B: from dL/dh_t
// (dh + dhrec) and dL/dc_t (dc) to the gate gradients da[bb] (the step's block) and dc for the
// previous step.
// Row pointers are at bb = 0; rows of gates (the step's block), tanh_c and c_prev advance by 4Hd,
// Hd and cp_stride (Hd, or 0 for the zeros before the first step), of dh by dh_stride, of da (the
// step's block), dhrec and dc by 4Hd, Hd and Hd.
template <class T>
struct CellBackwardStep {
  const T* gates;
  const T* tanh_c;
  const T* c_prev;
  const T* dh;  // null: the step's rows of dh are zero
  const T* dhrec;
  T* dc;
  T* da;
  T* db;  // += Σ over the rows of da, row by row in order; null: no bias gradient
  int64_t cp_stride;
  int64_t dh_stride;
};

// One row (k < Hd). Every array is distinct (__restrict), so the compiler vectorises the loop.
// With Bias, the row's four gate gradients are also added to the bias gradient's four slices
// (dbi … dbo): rows in order, the sums a separate pass over da made, without reading da again.
// Without Dh the step's dh row is zero and not read: dL/dh = dhrec + 0 (the same bits as
// 0 + dhrec: a −0 in dhrec becomes +0 either way).
template <bool Bias, bool Dh, class T>
ATTN_COPY_BODY void cell_backward_row(int64_t H, const T* __restrict ig, const T* __restrict fg,
                                      const T* __restrict gg, const T* __restrict og,
                                      const T* __restrict tc, const T* __restrict cp,
                                      const T* __restrict dht, const T* __restrict dhr,
                                      T* __restrict dcb, T* __restrict di, T* __restrict df,
                                      T* __restrict dg, T* __restrict dout, T* __restrict dbi,
                                      T* __restrict dbf, T* __restrict dbg, T* __restrict dbo) {
  for (int64_t k = 0; k < H; ++k) {
    const T dhk = Dh ? dht[k] + dhr[k] : dhr[k] + T(0);
    const T dck = dcb[k] + dhk * og[k] * (T(1) - tc[k] * tc[k]);
    const T dik = dck * gg[k] * ig[k] * (T(1) - ig[k]);
    const T dfk = dck * cp[k] * fg[k] * (T(1) - fg[k]);
    const T dgk = dck * ig[k] * (T(1) - gg[k] * gg[k]);
    const T dok = dhk * tc[k] * og[k] * (T(1) - og[k]);
    di[k] = dik;
    df[k] = dfk;
    dg[k] = dgk;
    dout[k] = dok;
    dcb[k] = dck * fg[k];
    if constexpr (Bias) {
      dbi[k] += dik;
      dbf[k] += dfk;
      dbg[k] += dgk;
      dbo[k] += dok;
    }
  }
}

template <bool Bias, bool Dh, class T>
ATTN_COPY_BODY void cell_backward_rows(const CellBackwardStep<T>& s, int64_t B, int64_t H) {
  const int64_t G = 4 * H;
  // The bias gradient's four slices (only formed when there is one: no offsets from a null db).
  T* db[4] = {};
  if constexpr (Bias)
    for (int g = 0; g < 4; ++g) db[g] = s.db + g * H;
  for (int64_t bb = 0; bb < B; ++bb) {
    // dh's rows are strided; the step's blocks of the caches are contiguous.
    if (Dh && bb + kCellAhead < B) prefetch_span(s.dh + (bb + kCellAhead) * s.dh_stride, H);
    const T* a = s.gates + bb * G;
    T* d = s.da + bb * G;
    cell_backward_row<Bias, Dh>(H, a, a + H, a + 2 * H, a + 3 * H, s.tanh_c + bb * H,
                                s.c_prev + bb * s.cp_stride, Dh ? s.dh + bb * s.dh_stride : nullptr,
                                s.dhrec + bb * H, s.dc + bb * H, d, d + H, d + 2 * H, d + 3 * H,
                                db[0], db[1], db[2], db[3]);
  }
}

// The backward's cell loop over one step's B rows (VB unused, as in cell_forward_loop).
template <int VB, class T>
ATTN_COPY_BODY void cell_backward_loop(const CellBackwardStep<T>* s, int64_t B, int64_t H) {
  if (s->db) {
    s->dh ? cell_backward_rows<true, true>(*s, B, H) : cell_backward_rows<true, false>(*s, B, H);
  } else {
    s->dh ? cell_backward_rows<false, true>(*s, B, H) : cell_backward_rows<false, false>(*s, B, H);
  }
}
ATTN_TILES_KERNEL(CellBackwardKernel, cell_backward_loop)

// The recurrent weights for the two recurrent products with them: float packs them once per call
// (wh for the forward product, whᵀ for dh_rec) into the thread's scratch, valid until the next
// lstm_forward or lstm_backward on this thread; double leaves them to OpenBLAS.
template <class T>
struct RecurrentWeights {
  const T* wh;
  FmaPanels panels;  // float only
};

template <class T>
RecurrentWeights<T> recurrent_weights(const T* wh, int64_t H, bool transposed) {
  RecurrentWeights<T> w{wh, {}};
  const int64_t G = 4 * H;
  if constexpr (std::is_same_v<T, float>) {
    std::vector<float>& out = lstm_scratch<T>().wh_panels;
    w.panels = transposed ? fma_pack_panels(out, wh, G, true, G, H)  // whᵀ: G × H
                          : fma_pack_panels(out, wh, G, false, H, G);
  }
  return w;
}

// gt (B × 4Hd, the step's gate block) += hp · wh, hp's B rows ldh apart.
template <class T>
void gates_plus_recurrent(T* gt, const T* hp, int64_t ldh, const RecurrentWeights<T>& w, int64_t B,
                          int64_t H) {
  const int64_t G = 4 * H;
  if constexpr (std::is_same_v<T, float>) {
    fma_product(gt, G, FmaOperandA{hp, ldh, 1}, w.panels, B, H, true);
  } else {
    gemm<T>(false, false, B, G, H, T(1), hp, ldh, w.wh, G, T(1), gt, G);
  }
}

// dhrec (B × Hd) = da · whᵀ.
template <class T>
void recurrent_dh(T* dhrec, const T* da, const RecurrentWeights<T>& w, int64_t B, int64_t H) {
  const int64_t G = 4 * H;
  if constexpr (std::is_same_v<T, float>) {
    fma_product(dhrec, H, FmaOperandA{da, G, 1}, w.panels, B, G, false);
  } else {
    gemm<T>(false, true, B, H, G, T(1), da, G, w.wh, G, T(0), dhrec, H);
  }
}

}  // namespace

template <class T>
void lstm_forward(T* h, T* c, T* tanh_c, T* gates, const T* x, const T* wx, const T* wh,
                  const T* b, const LstmShape& s, const SparseRows<T>* x_sparse) {
  lstm_check(s);
  const int64_t B = s.B, L = s.T, C = s.C, H = s.Hd, G = 4 * H, rows = B * L;
  if (rows == 0) return;
  // Input products one step at a time, by a GEMM or, when x is mostly zeros, on its non-zeros:
  // the step's gate block is then hot for the recurrent product and the cell update.
  auto init_bias = [&](T* a) {
    if (b) {
      std::copy(b, b + G, a);
    } else {
      std::fill(a, a + G, T(0));
    }
  };
  const SparseRows<T>* xsp = x_sparse_list(x_sparse, x, rows, C);
  const bool sparse = xsp != nullptr;
  const RecurrentWeights<T> w =
      L > 1 ? recurrent_weights(wh, H, false) : RecurrentWeights<T>{wh, {}};

  for (int64_t step = 0; step < L; ++step) {
    const int64_t t = s.reverse ? L - 1 - step : step;
    const int64_t tp = s.reverse ? t + 1 : t - 1;  // previous step in reading order
    // The step's blocks of the caches (B rows each, contiguous), h's rows (strided by L·Hd).
    T* gt = gates + t * B * G;
    T* ctb = c + t * B * H;
    T* tcb = tanh_c + t * B * H;
    const T* cpb = step > 0 ? c + tp * B * H : nullptr;  // c's block of the previous step
    // The bias into the block, unless the sparse product starts its sums from b itself.
    if (!sparse || !b)
      for (int64_t bb = 0; bb < B; ++bb) init_bias(gt + bb * G);
    if (sparse) {
      sparse_rows_times(gt, G, *xsp, wx, G, SparseRowSet{t, B, L}, b);  // b + x·wx
    } else {
      gemm<T>(false, false, B, G, C, T(1), x + t * C, L * C, wx, G, T(1), gt, G);
    }
    if (step > 0) {
      // gates[t] += h[:, tp] · wh over the batch (h's rows strided by L·Hd).
      gates_plus_recurrent(gt, h + tp * H, L * H, w, B, H);
    }
    const CellForwardStep<T> cs{
        .gates = gt, .c_prev = cpb, .c = ctb, .tanh_c = tcb, .h = h + t * H, .h_stride = L * H};
    attention_tiles::isa_run<CellForwardKernel>(&cs, B, H);
  }
}

template <class T>
void lstm_backward(T* dx, T* dwx, T* dwh, T* db, const T* dh, const T* x, const T* wx, const T* wh,
                   const T* h, const T* c, const T* tanh_c, const T* gates, const LstmShape& s,
                   const SparseRows<T>* x_sparse, LstmDh dh_steps) {
  lstm_check(s);
  const int64_t B = s.B, L = s.T, C = s.C, H = s.Hd, G = 4 * H, rows = B * L;
  if (rows == 0) return;
  LstmScratch<T>& sc = lstm_scratch<T>();
  // ∂/∂ gate pre-activations of one step (B, 4Hd), rewritten every step (every entry): small
  // enough to stay in L2 while the step's products read it.
  std::vector<T>& da = sc.da;
  std::vector<T>& dc = sc.dc;        // ∂/∂c_t arriving from later steps
  std::vector<T>& dhrec = sc.dhrec;  // ∂/∂h_t arriving from step t+1
  da.resize(static_cast<size_t>(B * G));
  dc.assign(static_cast<size_t>(B * H), T(0));
  dhrec.assign(static_cast<size_t>(B * H), T(0));
  const std::vector<T> zeros(static_cast<size_t>(H), T(0));  // c before the first step
  const SparseRows<T>* xsp = dwx ? x_sparse_list(x_sparse, x, rows, C) : nullptr;
  const bool sparse_dwx = xsp != nullptr;
  const RecurrentWeights<T> w =
      L > 1 ? recurrent_weights(wh, H, true) : RecurrentWeights<T>{wh, {}};

  for (int64_t step = L - 1; step >= 0; --step) {
    const int64_t t = s.reverse ? L - 1 - step : step;
    const int64_t tp = s.reverse ? t + 1 : t - 1;  // previous step in reading order
    const CellBackwardStep<T> cs{
        .gates = gates + t * B * G,
        .tanh_c = tanh_c + t * B * H,
        .c_prev = step > 0 ? c + tp * B * H : zeros.data(),
        // null: the step's rows are zero (not read)
        .dh = step == L - 1 || dh_steps == LstmDh::every_step ? dh + t * H : nullptr,
        .dhrec = dhrec.data(),
        .dc = dc.data(),
        .da = da.data(),
        .db = db,
        .cp_stride = step > 0 ? H : 0,
        .dh_stride = L * H};
    attention_tiles::isa_run<CellBackwardKernel>(&cs, B, H);
    const T* d = da.data();
    // x[:, t] and dx[:, t]: rows strided by L·C.
    if (sparse_dwx) sparse_rows_t_times(dwx, *xsp, d, G, G, SparseRowSet{t, B, L});
    if (dwx && !sparse_dwx)
      gemm<T>(true, false, C, G, B, T(1), x + t * C, L * C, d, G, T(1), dwx, G);
    if (dx) gemm<T>(false, true, B, C, G, T(1), d, G, wx, G, T(1), dx + t * C, L * C);
    if (step > 0) {
      // dwh += h[:, tp]ᵀ · da (h's rows strided by L·Hd); ∂/∂h at step tp through the
      // recurrence: da · whᵀ. dwh stays on OpenBLAS in every copy: on the FMA tiles, with both
      // operands strided (h's rows 8 KB apart, da's 2 KB at the spec's shape), the AVX2 copy made
      // 63 GFLOP/s against OpenBLAS's 101-102 (docs/performance.md#lstm-fma-products); transposed
      // with h's block packed it stays 1.06-1.12x slower than OpenBLAS's Haswell kernel: whole
      // steps with it ran at 0.955x the speed of steps with OpenBLAS's dwh in the AVX2 copy, 1.025x
      // in the AVX-512 copy (docs/performance.md#lstm-last-percent); and every copy must round
      // alike.
      if (dwh) gemm<T>(true, false, H, G, B, T(1), h + tp * H, L * H, d, G, T(1), dwh, G);
      recurrent_dh(dhrec.data(), d, w, B, H);
    }
  }
}

// Reference: every pre-activation summed from scratch with plain loops, no GEMM, no cache
// reuse beyond the previous h and c.
template <class T>
void lstm_forward_ref(T* h, T* c, T* tanh_c, T* gates, const T* x, const T* wx, const T* wh,
                      const T* b, const LstmShape& s) {
  lstm_check(s);
  const int64_t B = s.B, L = s.T, C = s.C, H = s.Hd, G = 4 * H;
  std::vector<T> pre(static_cast<size_t>(G));
  for (int64_t bb = 0; bb < B; ++bb) {
    for (int64_t step = 0; step < L; ++step) {
      const int64_t t = s.reverse ? L - 1 - step : step;
      const int64_t tp = s.reverse ? t + 1 : t - 1;
      const bool first = step == 0;
      for (int64_t j = 0; j < G; ++j) {
        T sum = b ? b[j] : T(0);
        for (int64_t k = 0; k < C; ++k) sum += x[(bb * L + t) * C + k] * wx[k * G + j];
        if (!first) {
          for (int64_t k = 0; k < H; ++k) sum += h[(bb * L + tp) * H + k] * wh[k * G + j];
        }
        pre[j] = sum;
      }
      for (int64_t k = 0; k < H; ++k) {
        const T i = T(1) / (T(1) + std::exp(-pre[k]));
        const T f = T(1) / (T(1) + std::exp(-pre[H + k]));
        const T g = std::tanh(pre[2 * H + k]);
        const T o = T(1) / (T(1) + std::exp(-pre[3 * H + k]));
        const T cprev = first ? T(0) : c[(tp * B + bb) * H + k];  // the caches are time-major
        const T cnew = f * cprev + i * g;
        c[(t * B + bb) * H + k] = cnew;
        tanh_c[(t * B + bb) * H + k] = std::tanh(cnew);
        h[(bb * L + t) * H + k] = o * std::tanh(cnew);
        T* a = gates + (t * B + bb) * G;
        a[k] = i;
        a[H + k] = f;
        a[2 * H + k] = g;
        a[3 * H + k] = o;
      }
    }
  }
}

#define ATTN_LSTM_INSTANTIATE(T)                                                                   \
  template void lstm_forward<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*,            \
                                const LstmShape&, const SparseRows<T>*);                           \
  template void lstm_backward<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, const T*, \
                                 const T*, const T*, const T*, const LstmShape&,                   \
                                 const SparseRows<T>*, LstmDh);                                    \
  template void lstm_forward_ref<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*,        \
                                    const LstmShape&);
ATTN_LSTM_INSTANTIATE(float)
ATTN_LSTM_INSTANTIATE(double)
#undef ATTN_LSTM_INSTANTIATE

}  // namespace attn
