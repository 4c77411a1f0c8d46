// Row-major GEMM for the ops, on OpenBLAS's cblas, for float and double.
//
// c (m × n) = alpha · op(a) · op(b) + beta · c, where op(a) is m × k (a stored k × m when
// trans_a), op(b) is k × n (b stored n × k when trans_b); lda/ldb/ldc are row strides.
// OpenBLAS runs at the thread count core/threads.h allows (1 by default).
#pragma once

#include <cstdint>

#include "core/blas_core.h"  // blas_core_name: the kernel set OpenBLAS runs, reports record it

namespace attn {

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace attn
