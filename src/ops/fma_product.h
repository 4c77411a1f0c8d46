// Float matrix products on fused multiply-add register tiles, in one summation order on every
// machine: the LSTM's recurrent products (ops/lstm.cpp), where OpenBLAS re-packed the same
// recurrent weights for every step's call and ran at 85-90 % of the core's multiply-add rate
// (docs/performance.md#lstm-fma-products), and the narrow float linear products (ops/linear.cpp:
// φ, the projections, ψ, the transformer's layers), where OpenBLAS's
// packing cost about what the product did (docs/performance.md#linear-fma-tiles).
//
// c (m × n, row stride ldc) = A · B, or c + A · B with `accumulate`, where
//   A (m × k): A[r][t] = a[r·row_stride + t·term_stride] (a transposed operand is swapped strides);
//   B (k × n): in panels of `width` columns, panel p's row t at data + p·panel_stride + t·ldb,
//     either packed once (fma_pack_panels: ldb = width, panels k·width apart) or a row-major
//     matrix read in place (fma_panels_in_place: ldb its row stride, panels width apart). The width
//     is the active copy's tile width (fma_panel_width): 32 columns in the AVX-512 copy (two
//     vectors), 16 in the others (a 64-byte line a row: on 32-column panels, half of each line at
//     a time, the AVX2 copy's LSTM forward product made 72-95 GFLOP/s against 96-98); 16 in every
//     copy when B has at most 16 columns. Any width gives the same bits in any copy.
// Every entry of c is one float accumulator starting at 0, updated by fma(A[r][t], B[t][j], ·) for
// t = 0 … k−1 in order, then stored (or added to c's entry: c + acc). So neither the tile shape
// nor the vector width changes a bit: the generic copy (std::fma), the AVX2+FMA copy and the
// AVX-512 copy (ops/isa.h) give the same bits, and an entry depends only on its row of A and
// column of B (a sequence gives the same bits alone or inside a batch). With accumulate = false
// c is only written (it may hold NaNs before).
// Threads: none; call from several threads on disjoint c.
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

// Columns of B per panel for the copy in use (ops/isa.h): 32 with AVX-512, else 16 (the packing
// functions below take 16 for a B of at most 16 columns in every copy).
int64_t fma_panel_width();

struct FmaPanels {
  const float* data = nullptr;
  int64_t width = 16;        // columns a panel
  int64_t ldb = 16;          // floats between a panel's rows
  int64_t panel_stride = 0;  // floats between panels
  int64_t n = 0;             // B's columns; the last panel's columns from n on are never read
  bool packed = false;       // made by fma_pack_panels (the products pick their loop order by it)
};

struct FmaOperandA {
  const float* a = nullptr;
  int64_t row_stride = 0, term_stride = 1;
};

// Packs B (k × n) into `out` (resized to ⌈n/w⌉·k·w floats for w = fma_panel_width(), or 16 when
// n <= 16; columns
// from n on 0): from b row-major (B[t][j] = b[t·ldb + j]) or, with trans, from b holding Bᵀ
// (B[t][j] = b[j·ldb + t]).
// The panels point into `out`: valid while it is neither resized nor freed.
FmaPanels fma_pack_panels(std::vector<float>& out, const float* b, int64_t ldb, bool trans,
                          int64_t k, int64_t n);

// B (k × n) row-major at b with row stride ldb, read where it lies.
FmaPanels fma_panels_in_place(const float* b, int64_t ldb, int64_t n);

// c = A·B or c + A·B as above (m, k >= 0; b.n columns). With k = 0: c = 0 (or c unchanged).
void fma_product(float* c, int64_t ldc, const FmaOperandA& a, const FmaPanels& b, int64_t m,
                 int64_t k, bool accumulate);

}  // namespace attn
