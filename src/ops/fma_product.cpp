// Float products on FMA register tiles (see fma_product.h), compiled three times on x86-64.
//
// Copies (ops/isa.h picks one): AVX-512, tiles of 8 rows × one 32-column panel (16 zmm
// accumulators; each term broadcasts 8 values of A and loads 2 vectors of B for 16 FMAs); AVX2 with
// FMA, tiles of 6 rows × one 16-column panel (12 ymm accumulators); generic, entry by entry with
// ops/fused_madd.h's fma (a build for this CPU, -march=native, runs the AVX-512 or AVX2 body as its
// only copy instead). Each copy also runs panels of the other width: the AVX2 copy a 32-column
// panel in two halves, the AVX-512 copy a 16-column one in tiles of 8 rows × one vector (8
// accumulators: at 8 rows × 32 columns, masked down to 16, φ's forward product at m = 16 made 52-55
// GFLOP/s against 105-110 on this tile, docs/performance.md#linear-fma-tiles). Rows left over (m
// not a multiple of the tile's) go in tiles of 4, 2 and 1 rows, the last panel's columns past n are
// masked off: the order of every entry's terms is the same in all of them. The AVX-512 and AVX2
// tile bodies are twins on purpose: an intrinsic inlines only into a function compiled for its
// target, and a target attribute cannot vary with a template argument (GCC refuses "target specific
// option mismatch"), so each copy spells out its own body. Loop order: with packed panels, rows
// outermost (the tile's rows of A stay in L1, the panels stream from L2 in order); with B read in
// place, panels outermost (the panel's strided rows are reused by every row tile). Measured at the
// LSTM's shapes in docs/performance.md#lstm-fma-products. An accumulating tile asks for its rows of
// c when it starts: they are read after its k terms.
#include "ops/fma_product.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "ops/fused_madd.h"
#include "ops/isa.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTN_FMA_X86 1
#else
#define ATTN_FMA_X86 0
#endif

namespace attn {
namespace {

// One product's arguments, as fma_product takes them.
struct Job {
  float* c;
  int64_t ldc;
  FmaOperandA a;  // A[r][t] = a.a[r·row_stride + t·term_stride]
  FmaPanels b;
  int64_t m, k;
  bool accumulate;
};

int64_t panel_count(int64_t n, int64_t width) { return (n + width - 1) / width; }

// Panels of 16 columns for a B of at most 16 (one vector a row in every copy), else the copy's.
int64_t panel_width_for(int64_t n) { return n <= 16 ? 16 : fma_panel_width(); }

// A copy's tile kernels: tile(j, p, r0) computes rows r0 … r0 + R − 1 of panel p, for R = the
// copy's tile height mr, 4, 2 and 1.
using TileFn = void (*)(const Job& j, int64_t p, int64_t r0);
struct TileSet {
  int64_t mr;
  TileFn rows_mr, rows_4, rows_2, rows_1;
};

// Rows 0 … m − 1 of panels p0 … p1 − 1: blocks of mr rows, the rest in blocks of 4, 2 and 1,
// each block over the panels in turn.
[[maybe_unused]] void rows_of_panels(const Job& j, const TileSet& s, int64_t p0, int64_t p1) {
  auto block = [&](TileFn tile, int64_t r) {
    for (int64_t p = p0; p < p1; ++p) tile(j, p, r);
  };
  int64_t r = 0;
  for (; r + s.mr <= j.m; r += s.mr) block(s.rows_mr, r);
  if (s.mr > 4 && r + 4 <= j.m) block(s.rows_4, r), r += 4;
  if (r + 2 <= j.m) block(s.rows_2, r), r += 2;
  if (r < j.m) block(s.rows_1, r);
}

// Every tile in the loop order of the file comment.
[[maybe_unused]] void for_each_tile(const Job& j, const TileSet& s) {
  const int64_t panels = panel_count(j.b.n, j.b.width);
  if (j.b.packed) {
    rows_of_panels(j, s, 0, panels);  // rows outermost
  } else {
    for (int64_t p = 0; p < panels; ++p) rows_of_panels(j, s, p, p + 1);  // panels outermost
  }
}

// The generic copy: a row of a panel at a time, its entries' chains side by side (a loop over the
// panel's columns inside the loop over terms).
void product_generic(const Job& j) {
  const int64_t panels = panel_count(j.b.n, j.b.width);
  for (int64_t r = 0; r < j.m; ++r) {
    const float* ar = j.a.a + r * j.a.row_stride;
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t col0 = p * j.b.width, cols = std::min(j.b.width, j.b.n - col0);
      const float* bp = j.b.data + p * j.b.panel_stride;
      float acc[32] = {};
      for (int64_t t = 0; t < j.k; ++t) {
        const float a = ar[t * j.a.term_stride];
        const float* bt = bp + t * j.b.ldb;
        for (int64_t jj = 0; jj < cols; ++jj)
          acc[jj] = fused_multiply_add<kGenericCopyHasFma>(a, bt[jj], acc[jj]);
      }
      float* cr = j.c + r * j.ldc + col0;
      for (int64_t jj = 0; jj < cols; ++jj) cr[jj] = j.accumulate ? cr[jj] + acc[jj] : acc[jj];
    }
  }
}

#if ATTN_FMA_X86

// Where a tile reads A[r0 + r][t] (r < MR): with Adjacent (ars = 1, a transposed A) one pointer a
// term and r as a constant offset; otherwise one pointer a row, advanced by t·aks. (Computing
// r·ars + t·aks for each load instead cost the AVX2 copy up to a third of its rate.)
template <int MR, bool Adjacent>
struct ATileReader {
  const float* row[Adjacent ? 1 : MR];
  int64_t aks;
  ATTN_COPY_BODY ATileReader(const Job& j, int64_t r0) : aks(j.a.term_stride) {
    for (int r = 0; r < (Adjacent ? 1 : MR); ++r) row[r] = j.a.a + (r0 + r) * j.a.row_stride;
  }
  ATTN_COPY_BODY const float* at(int r, int64_t t) const {
    if constexpr (Adjacent) {
      return row[0] + t * aks + r;
    } else {
      return row[r] + t * aks;
    }
  }
};

// ---- AVX-512: MR rows × 16·NV columns (NV vectors: a 32-column panel or a 16-column one); in
// the last panel, columns from n on are masked off (Full: a whole panel, plain loads and stores).
template <bool Full>
[[gnu::always_inline]] ATTN_TARGET_AVX512 inline __m512 load16(const float* x, __mmask16 m) {
  if constexpr (Full) {
    return _mm512_loadu_ps(x);
  } else {
    return _mm512_maskz_loadu_ps(m, x);
  }
}

// NV vectors (16 columns each) × MR rows: a 32-column panel (NV = 2) or a 16-column one (NV = 1).
template <int MR, int NV, bool Full, bool Adjacent>
[[gnu::always_inline]] ATTN_TARGET_AVX512 inline void tile_avx512_body(const Job& j, int64_t p,
                                                                       int64_t r0) {
  const int64_t cols = std::min<int64_t>(16 * NV, j.b.n - p * j.b.width);
  __mmask16 mask[NV];
  for (int v = 0; v < NV; ++v) {
    const int64_t valid = std::clamp<int64_t>(cols - 16 * v, 0, 16);
    mask[v] = valid == 16 ? __mmask16(0xffff) : __mmask16((1u << valid) - 1);
  }
  const ATileReader<MR, Adjacent> a(j, r0);
  const float* b = j.b.data + p * j.b.panel_stride;
  float* c = j.c + r0 * j.ldc + p * j.b.width;
  __m512 acc[NV][MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) acc[v][r] = _mm512_setzero_ps();
    if (j.accumulate)
      for (int v = 0; v < NV; ++v)
        _mm_prefetch(reinterpret_cast<const char*>(c + r * j.ldc + 16 * v), _MM_HINT_T0);
  }
  for (int64_t t = 0; t < j.k; ++t) {
    const float* bt = b + t * j.b.ldb;
    __m512 bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load16<Full>(bt + 16 * v, mask[v]);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(*a.at(r, t));
      for (int v = 0; v < NV; ++v) acc[v][r] = _mm512_fmadd_ps(x, bv[v], acc[v][r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * j.ldc;
    for (int v = 0; v < NV; ++v) {
      __m512 y = acc[v][r];
      if (j.accumulate) y = _mm512_add_ps(load16<Full>(cr + 16 * v, mask[v]), y);
      if (Full) {
        _mm512_storeu_ps(cr + 16 * v, y);
      } else {
        _mm512_mask_storeu_ps(cr + 16 * v, mask[v], y);
      }
    }
  }
}

template <int MR, int NV>
[[gnu::always_inline]] ATTN_TARGET_AVX512 inline void tile_avx512_panel(const Job& j, int64_t p,
                                                                        int64_t r0) {
  const bool full = j.b.n - p * j.b.width >= 16 * NV;
  if (j.a.row_stride == 1) {
    full ? tile_avx512_body<MR, NV, true, true>(j, p, r0)
         : tile_avx512_body<MR, NV, false, true>(j, p, r0);
  } else {
    full ? tile_avx512_body<MR, NV, true, false>(j, p, r0)
         : tile_avx512_body<MR, NV, false, false>(j, p, r0);
  }
}

template <int MR>
ATTN_TARGET_AVX512 void tile_avx512(const Job& j, int64_t p, int64_t r0) {
  j.b.width == 16 ? tile_avx512_panel<MR, 1>(j, p, r0) : tile_avx512_panel<MR, 2>(j, p, r0);
}

[[maybe_unused]] constexpr TileSet kTilesAvx512{8, tile_avx512<8>, tile_avx512<4>, tile_avx512<2>,
                                                tile_avx512<1>};

// ---- AVX2 + FMA: MR rows × 16 columns (two vectors), a panel's two halves one after the other.

// Lanes l < valid of an 8-float vector: all ones (maskload/maskstore read the sign bit).
ATTN_TARGET_AVX2_FMA [[gnu::always_inline]] inline __m256i lanes_below(int64_t valid) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(valid, 0, 8))),
                            lane);
}

template <bool Full>
[[gnu::always_inline]] ATTN_TARGET_AVX2_FMA inline __m256 load8(const float* x, __m256i m) {
  if constexpr (Full) {
    return _mm256_loadu_ps(x);
  } else {
    return _mm256_maskload_ps(x, m);
  }
}

template <bool Full>
[[gnu::always_inline]] ATTN_TARGET_AVX2_FMA inline void store8(float* x, __m256i m, __m256 v) {
  if constexpr (Full) {
    _mm256_storeu_ps(x, v);
  } else {
    _mm256_maskstore_ps(x, m, v);
  }
}

// Columns col0 … col0 + cols − 1 (cols <= 16) of rows r0 … r0 + MR − 1 (Full: cols = 16, plain
// loads and stores; else masked, which costs much more on AMD cores).
template <int MR, bool Full, bool Adjacent>
[[gnu::always_inline]] ATTN_TARGET_AVX2_FMA inline void half_tile_avx2(const Job& j, int64_t col0,
                                                                       int64_t cols, int64_t r0) {
  const __m256i m0 = lanes_below(cols), m1 = lanes_below(cols - 8);
  const ATileReader<MR, Adjacent> a(j, r0);
  const float* b = j.b.data + (col0 / j.b.width) * j.b.panel_stride + col0 % j.b.width;
  float* c = j.c + r0 * j.ldc + col0;
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    acc0[r] = _mm256_setzero_ps();
    acc1[r] = _mm256_setzero_ps();
    if (j.accumulate) _mm_prefetch(reinterpret_cast<const char*>(c + r * j.ldc), _MM_HINT_T0);
  }
  for (int64_t t = 0; t < j.k; ++t) {
    const float* bt = b + t * j.b.ldb;
    const __m256 b0 = load8<Full>(bt, m0);
    const __m256 b1 = load8<Full>(bt + 8, m1);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss(a.at(r, t));
      acc0[r] = _mm256_fmadd_ps(x, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(x, b1, acc1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * j.ldc;
    __m256 v0 = acc0[r], v1 = acc1[r];
    if (j.accumulate) {
      v0 = _mm256_add_ps(load8<Full>(cr, m0), v0);
      v1 = _mm256_add_ps(load8<Full>(cr + 8, m1), v1);
    }
    store8<Full>(cr, m0, v0);
    store8<Full>(cr + 8, m1, v1);
  }
}

template <int MR, bool Adjacent>
ATTN_TARGET_AVX2_FMA void tile_avx2_walk(const Job& j, int64_t p, int64_t r0) {
  const int64_t col0 = p * j.b.width, cols = std::min<int64_t>(j.b.width, j.b.n - col0);
  for (int64_t h = 0; h < cols; h += 16) {
    if (cols - h >= 16) {
      half_tile_avx2<MR, true, Adjacent>(j, col0 + h, 16, r0);
    } else {
      half_tile_avx2<MR, false, Adjacent>(j, col0 + h, cols - h, r0);
    }
  }
}

template <int MR>
ATTN_TARGET_AVX2_FMA void tile_avx2(const Job& j, int64_t p, int64_t r0) {
  j.a.row_stride == 1 ? tile_avx2_walk<MR, true>(j, p, r0) : tile_avx2_walk<MR, false>(j, p, r0);
}

[[maybe_unused]] constexpr TileSet kTilesAvx2{6, tile_avx2<6>, tile_avx2<4>, tile_avx2<2>,
                                              tile_avx2<1>};

#endif  // ATTN_FMA_X86

}  // namespace

int64_t fma_panel_width() {
#if ATTN_HAVE_ISA_COPIES
  return isa_active() == IsaCopy::avx512 ? 32 : 16;
#elif ATTN_FMA_X86 && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__)
  return 32;
#else
  return 16;
#endif
}

FmaPanels fma_pack_panels(std::vector<float>& out, const float* b, int64_t ldb, bool trans,
                          int64_t k, int64_t n) {
  ATTN_ASSERT(k >= 0 && n >= 0 && (k == 0 || n == 0 || b), "fma_pack_panels: bad shape");
  const int64_t w = panel_width_for(n), panels = panel_count(n, w);
  out.resize(static_cast<size_t>(panels * k * w));
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t col0 = p * w, cols = std::min(w, n - col0);
    float* dst = out.data() + p * k * w;
    if (trans) {
      // The panel's row t gathers term t of Bᵀ's rows col0 … col0 + cols − 1 (their lines stay in
      // L1 from one term to the next), written contiguously.
      for (int64_t t = 0; t < k; ++t)
        for (int64_t jj = 0; jj < cols; ++jj) dst[t * w + jj] = b[(col0 + jj) * ldb + t];
    } else {
      for (int64_t t = 0; t < k; ++t)
        std::copy(b + t * ldb + col0, b + t * ldb + col0 + cols, dst + t * w);
    }
    if (cols < w)  // the last panel's columns from n on
      for (int64_t t = 0; t < k; ++t) std::fill(dst + t * w + cols, dst + (t + 1) * w, 0.f);
  }
  return FmaPanels{
      .data = out.data(), .width = w, .ldb = w, .panel_stride = k * w, .n = n, .packed = true};
}

FmaPanels fma_panels_in_place(const float* b, int64_t ldb, int64_t n) {
  ATTN_ASSERT(n >= 0 && ldb >= n, "fma_panels_in_place: row stride below the width");
  const int64_t w = panel_width_for(n);
  return FmaPanels{.data = b, .width = w, .ldb = ldb, .panel_stride = w, .n = n, .packed = false};
}

void fma_product(float* c, int64_t ldc, const FmaOperandA& a, const FmaPanels& b, int64_t m,
                 int64_t k, bool accumulate) {
  ATTN_ASSERT(m >= 0 && k >= 0 && b.n >= 0 && ldc >= b.n && (b.width == 16 || b.width == 32),
              "fma_product: bad shape");
  if (m == 0 || b.n == 0) return;
  if (k == 0) {
    if (!accumulate)
      for (int64_t r = 0; r < m; ++r) std::fill(c + r * ldc, c + r * ldc + b.n, 0.f);
    return;
  }
  const Job j{.c = c, .ldc = ldc, .a = a, .b = b, .m = m, .k = k, .accumulate = accumulate};
#if ATTN_HAVE_ISA_COPIES
  switch (isa_active()) {
    case IsaCopy::avx512: return for_each_tile(j, kTilesAvx512);
    case IsaCopy::avx2: return for_each_tile(j, kTilesAvx2);
    default: break;
  }
#elif ATTN_FMA_X86 && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__)
  return for_each_tile(j, kTilesAvx512);  // a build for this CPU: its only copy
#elif ATTN_FMA_X86 && defined(__AVX2__) && defined(__FMA__)
  return for_each_tile(j, kTilesAvx2);
#endif
  product_generic(j);
}

}  // namespace attn
