// The two-layer relu head on a per-sequence part plus sparse rows (see sparse_relu_head.h).
// Forward, row by row: the first layer's output (zs[b], then the row's non-zeros in order, as
// sparse_rows_times) and its relu h into a one-row scratch; then y's entries as fixed-order dots
// (attention_tiles::lane_dot_run). Backward, kBlockRows rows at a time: h recomputed the same way
// into a block scratch (storing it, 4 MiB at config k's size, saved 0.1-0.2 ms of the head's
// 2.5: docs/performance.md#lstm-head-fused), dw1ᵀ += dyᵀ · h on the register tiles (into a
// scratch (n2, n1) added to dw1 at the end), g = dy · w1ᵀ on the tiles (as
// linear_backward_input_relu computes it), then row by row the mask, db0 and g_sum; dwx by
// sparse_rows_t_times on the block.
// Built with -ffp-contract=off (CMakeLists.txt): the ISA copies must round alike.
#include "ops/sparse_relu_head.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/attention_tiles.h"

namespace attn {
namespace {

using attention_tiles::product;
using attention_tiles::Span;
using attention_tiles::VecOf;

// 64 rows of n1 = 128 floats are 32 KiB: a block's h and g stay in L2 (L1 for narrower heads).
constexpr int64_t kBlockRows = 64;

// The arguments every body takes, by pointer (isa_run passes its arguments by value).
template <class T>
struct HeadArgs {
  const SparseRows<T>& xs;
  SparseReluHeadShape sh;
};

// Columns [j, j + S·L) of hr: S vectors of L = VB / sizeof(T) accumulators in registers while the
// row's non-zeros are added, then the relu.
template <int S, int VB, class T>
ATTN_COPY_BODY void first_layer_slice(T* hr, const T* zr, const SparseRows<T>& xs, int64_t e0,
                                      int64_t e1, const T* wx, int64_t n1, int64_t j) {
  using V = typename VecOf<T, VB>::type;
  constexpr int L = static_cast<int>(VB / sizeof(T));
  V acc[S];
#pragma GCC unroll 8
  for (int u = 0; u < S; ++u) std::memcpy(&acc[u], zr + j + u * L, sizeof(V));
  for (int64_t e = e0; e < e1; ++e) {
    const V v = xs.val[e] - V{};  // a plain broadcast (x − 0 is x)
    const T* w = wx + xs.col[e] * n1 + j;
#pragma GCC unroll 8
    for (int u = 0; u < S; ++u) {
      V wv;
      std::memcpy(&wv, w + u * L, sizeof(V));
      acc[u] += v * wv;
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < S; ++u) {
    acc[u] = acc[u] > V{} ? acc[u] : V{};
    std::memcpy(hr + j + u * L, &acc[u], sizeof(V));
  }
}

// hr[j] = relu(zr[j] + Σ_e v_e · wx[c_e, j]) over row q's non-zeros in order: each entry on its
// own, so the vector width and the slicing change no bit.
template <int VB, class T>
ATTN_COPY_BODY void first_layer_row(T* hr, const T* zr, const SparseRows<T>& xs, int64_t q,
                                    const T* wx, int64_t n1) {
  constexpr int L = static_cast<int>(VB / sizeof(T));
  const int64_t e0 = xs.start[q], e1 = xs.start[q + 1];
  int64_t j = 0;
  for (; j + 8 * L <= n1; j += 8 * L) first_layer_slice<8, VB>(hr, zr, xs, e0, e1, wx, n1, j);
  for (; j + L <= n1; j += L) first_layer_slice<1, VB>(hr, zr, xs, e0, e1, wx, n1, j);
  for (; j < n1; ++j) {
    T acc = zr[j];
    for (int64_t e = e0; e < e1; ++e) acc += xs.val[e] * wx[xs.col[e] * n1 + j];
    hr[j] = acc > T(0) ? acc : T(0);
  }
}

// w1t (n2, n1) = w1ᵀ; hr: scratch (n1).
template <int VB, class T>
ATTN_COPY_BODY void forward_body(T* hr, T* y, const T* zs, const HeadArgs<T>* a, const T* wx,
                                 const T* w1t, const T* b1) {
  const SparseReluHeadShape& sh = a->sh;
  const int64_t rows = sh.B * sh.N, n1 = sh.n1, n2 = sh.n2;
  for (int64_t r = 0; r < rows; ++r) {
    first_layer_row<VB>(hr, zs + (r / sh.N) * n1, a->xs, r, wx, n1);
    T* yr = y + r * n2;
    std::copy(b1, b1 + n2, yr);
    attention_tiles::lane_dot_run(yr, 1, true, w1t, n1, hr, 0, n1, n2);  // y += w1ᵀ · h[r]
  }
}

// The row's g after the product: masked by h > 0, added into db0 and into
// g_sum's row.
template <int VB, class T>
ATTN_COPY_BODY void gradient_row(T* g, T* db0, T* gs, const T* hr, int64_t n1) {
  using V = typename VecOf<T, VB>::type;
  constexpr int L = static_cast<int>(VB / sizeof(T));
  int64_t j = 0;
  for (; j + L <= n1; j += L) {
    V gv, hv, bv, sv;
    std::memcpy(&gv, g + j, sizeof(V));
    std::memcpy(&hv, hr + j, sizeof(V));
    gv = hv > V{} ? gv : V{};
    std::memcpy(g + j, &gv, sizeof(V));
    std::memcpy(&bv, db0 + j, sizeof(V));
    bv += gv;
    std::memcpy(db0 + j, &bv, sizeof(V));
    std::memcpy(&sv, gs + j, sizeof(V));
    sv += gv;
    std::memcpy(gs + j, &sv, sizeof(V));
  }
  for (; j < n1; ++j) {
    g[j] = hr[j] > T(0) ? g[j] : T(0);
    db0[j] += g[j];
    gs[j] += g[j];
  }
}

// Rows [r0, r0 + R) of the backward but dwx's part: h into hb, g into g (scratch (R, n1) each);
// dw1t (n2, n1): dw1ᵀ's sums; w1t = w1ᵀ.
template <int VB, class T>
ATTN_COPY_BODY void backward_block(T* g_sum, T* db0, T* dw1t, T* db1, T* hb, T* g, const T* dy,
                                   const T* zs, const HeadArgs<T>* a, const T* wx, const T* w1t,
                                   int64_t r0, int64_t R) {
  const SparseReluHeadShape& sh = a->sh;
  const int64_t n1 = sh.n1, n2 = sh.n2;
  for (int64_t k = 0; k < R; ++k)
    first_layer_row<VB>(hb + k * n1, zs + ((r0 + k) / sh.N) * n1, a->xs, r0 + k, wx, n1);
  const T* dyb = dy + r0 * n2;
  // dw1ᵀ += dy_blockᵀ · h_block: (n2 × R) · (R × n1).
  product<T, VB>(dw1t, n1, dyb, 1, n2, hb, n1, n2, n1, R, T(1), true, Span::all);
  // g = dy_block · w1ᵀ: (R × n2) · (n2 × n1), every entry summed over n2 in order.
  product<T, VB>(g, n1, dyb, n2, 1, w1t, n1, R, n1, n2, T(1), false, Span::all);
  for (int64_t k = 0; k < R; ++k) {
    for (int64_t o = 0; o < n2; ++o) db1[o] += dyb[k * n2 + o];
    gradient_row<VB>(g + k * n1, db0, g_sum + ((r0 + k) / sh.N) * n1, hb + k * n1, n1);
  }
}

ATTN_TILES_KERNEL(ForwardKernel, forward_body)
ATTN_TILES_KERNEL(BackwardBlockKernel, backward_block)

template <class T>
void check(const SparseRows<T>& xs, const SparseReluHeadShape& sh, const char* what) {
  ATTN_CHECK(sh.B >= 0 && sh.N >= 1 && sh.n1 >= 1 && sh.n2 >= 1 && xs.rows == sh.B * sh.N &&
                 static_cast<int64_t>(xs.start.size()) == xs.rows + 1,
             std::string("sparse_relu_head_") + what + ": bad shape (B " + std::to_string(sh.B) +
                 ", N " + std::to_string(sh.N) + ", n1 " + std::to_string(sh.n1) + ", n2 " +
                 std::to_string(sh.n2) + ", x's rows " + std::to_string(xs.rows) + ")");
}

// w1ᵀ (n2, n1), per thread.
template <class T>
const T* transposed(const T* w1, int64_t n1, int64_t n2) {
  thread_local std::vector<T> w1t;
  w1t.resize(static_cast<size_t>(n1 * n2));
  attention_tiles::transpose_rows(w1t.data(), w1, n1, n2, n2);
  return w1t.data();
}

}  // namespace

template <class T>
void sparse_relu_head_forward(T* y, const T* zs, const SparseRows<T>& xs, const T* wx, const T* w1,
                              const T* b1, const SparseReluHeadShape& sh) {
  check(xs, sh, "forward");
  if (sh.B == 0) return;
  const HeadArgs<T> a{xs, sh};
  const T* w1t = transposed(w1, sh.n1, sh.n2);
  thread_local std::vector<T> hr;
  hr.resize(static_cast<size_t>(sh.n1));
  attention_tiles::isa_run<ForwardKernel>(hr.data(), y, zs, &a, wx, w1t, b1);
}

template <class T>
void sparse_relu_head_backward(T* g_sum, T* dwx, T* db0, T* dw1, T* db1, const T* dy, const T* zs,
                               const SparseRows<T>& xs, const T* wx, const T* w1,
                               const SparseReluHeadShape& sh) {
  check(xs, sh, "backward");
  const int64_t n1 = sh.n1, n2 = sh.n2;
  std::fill(g_sum, g_sum + sh.B * n1, T(0));
  if (sh.B == 0) return;
  const HeadArgs<T> a{xs, sh};
  const T* w1t = transposed(w1, n1, n2);
  thread_local std::vector<T> hb, g, dw1t;
  hb.resize(static_cast<size_t>(kBlockRows * n1));
  g.resize(static_cast<size_t>(kBlockRows * n1));
  dw1t.assign(static_cast<size_t>(n2 * n1), T(0));
  const int64_t rows = sh.B * sh.N;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
    const int64_t R = std::min(kBlockRows, rows - r0);
    attention_tiles::isa_run<BackwardBlockKernel>(g_sum, db0, dw1t.data(), db1, hb.data(), g.data(),
                                                  dy, zs, &a, wx, w1t, r0, R);
    // dwx += Σ x[r]ᵀ g[r] over the block, the rows in order (its non-zeros grouped by column).
    sparse_rows_t_times(dwx, xs, static_cast<const T*>(g.data()), n1, n1, SparseRowSet{r0, R, 1});
  }
  for (int64_t j = 0; j < n1; ++j)
    for (int64_t o = 0; o < n2; ++o) dw1[j * n2 + o] += dw1t[o * n1 + j];
}

#define ATTN_SPARSE_RELU_HEAD_INSTANTIATE(T)                                                 \
  template void sparse_relu_head_forward<T>(T*, const T*, const SparseRows<T>&, const T*,    \
                                            const T*, const T*, const SparseReluHeadShape&); \
  template void sparse_relu_head_backward<T>(T*, T*, T*, T*, T*, const T*, const T*,         \
                                             const SparseRows<T>&, const T*, const T*,       \
                                             const SparseReluHeadShape&);
ATTN_SPARSE_RELU_HEAD_INSTANTIATE(float)
ATTN_SPARSE_RELU_HEAD_INSTANTIATE(double)
#undef ATTN_SPARSE_RELU_HEAD_INSTANTIATE

}  // namespace attn
