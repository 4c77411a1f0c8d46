// The fused kernels' register-tile product (ops/attention_tiles.h) as a kernel for isa_run, for
// benches that time a product on the tiles beside OpenBLAS's: C (M × n, ldc) = (or +=) A · B, A
// read through strides (rows ars, terms aks), B (K × n, ldb), over all terms (Span::all). A bench
// including this compiles with -ffp-contract=off, as the kernels do (bench/CMakeLists.txt).
#pragma once

#include <cstdint>

#include "ops/attention_tiles.h"

namespace attn::bench {

template <int VB>
ATTN_COPY_BODY void tiles_product_body(float* c, int64_t ldc, const float* a, int64_t ars,
                                       int64_t aks, const float* b, int64_t ldb, int64_t M,
                                       int64_t n, int64_t K, bool add) {
  attention_tiles::product<float, VB>(c, ldc, a, ars, aks, b, ldb, M, n, K, 1.f, add,
                                      attention_tiles::Span::all);
}
ATTN_TILES_KERNEL(TilesProduct, tiles_product_body)

// The same, in the ISA copy in use.
inline void tiles_product(float* c, int64_t ldc, const float* a, int64_t ars, int64_t aks,
                          const float* b, int64_t ldb, int64_t M, int64_t n, int64_t K, bool add) {
  attention_tiles::isa_run<TilesProduct>(c, ldc, a, ars, aks, b, ldb, M, n, K, add);
}

}  // namespace attn::bench
