// Query-key product statistics and the null model (see qk_stats.h).
// Shapes: W (out, in) = (H·hs, D) row-major; A (D, D) row-major.
#include "analysis/qk_stats.h"

#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "core/eigen_rows.h"
#include "core/error.h"
#include "core/rng.h"

namespace attn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// a / b, with 0 / 0 = NaN and a / 0 = ±inf (no floating-point exception either way).
double safe_div(double a, double b) {
  if (b != 0.0) return a / b;
  if (a == 0.0 || std::isnan(a)) return kNaN;
  return a > 0.0 ? std::numeric_limits<double>::infinity()
                 : -std::numeric_limits<double>::infinity();
}

// Sum of squares of rows [r0, r0 + rows) of a row-major matrix with `cols` columns.
double block_sumsq(const std::vector<double>& w, int64_t r0, int64_t rows, int64_t cols) {
  double s = 0.0;
  for (int64_t i = r0 * cols; i < (r0 + rows) * cols; ++i)
    s += w[static_cast<size_t>(i)] * w[static_cast<size_t>(i)];
  return s;
}

void corner_copy(const RowMatrix& A, int64_t block, std::vector<double>* out) {
  out->resize(static_cast<size_t>(block * block));
  for (int64_t i = 0; i < block; ++i) {
    for (int64_t j = 0; j < block; ++j) (*out)[static_cast<size_t>(i * block + j)] = A(i, j);
  }
}

}  // namespace

QkMatrixStats qk_matrix_stats(const double* A, int64_t D) {
  ATTN_ASSERT(D >= 2, "qk_matrix_stats needs D >= 2");
  double trace = 0.0, diag_abs = 0.0;
  int64_t positive = 0;
  for (int64_t i = 0; i < D; ++i) {
    const double a = A[i * D + i];
    trace += a;
    diag_abs += std::fabs(a);
    positive += a > 0.0;
  }
  const double c = trace / static_cast<double>(D);
  double sumsq = 0.0, off_sumsq = 0.0, off_abs = 0.0, diag_dev = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    const double* row = A + i * D;
    for (int64_t j = 0; j < D; ++j) {
      const double a = row[j];
      sumsq += a * a;
      if (j != i) {
        off_sumsq += a * a;
        off_abs += std::fabs(a);
      } else {
        diag_dev += (a - c) * (a - c);
      }
    }
  }
  QkMatrixStats s;
  s.frobenius = std::sqrt(sumsq);
  s.c_star = c;
  s.identity_cosine =
      s.frobenius > 0.0 ? trace / (std::sqrt(static_cast<double>(D)) * s.frobenius) : kNaN;
  const double off_mean = off_abs / static_cast<double>(D * (D - 1));
  s.diag_ratio = safe_div(c, off_mean);
  s.abs_diag_ratio = safe_div(diag_abs / static_cast<double>(D), off_mean);
  s.positive_diag_fraction = static_cast<double>(positive) / static_cast<double>(D);
  s.residual = s.frobenius > 0.0 ? std::sqrt(off_sumsq + diag_dev) / s.frobenius : kNaN;
  return s;
}

void qk_head_product(const QkLayerWeights& w, int64_t head, int64_t head_size, double* A) {
  ATTN_ASSERT(head >= 0 && head_size >= 1 && (head + 1) * head_size <= w.out, "head out of range");
  ConstRowMap Wq(w.wq.data(), w.out, w.in), Wk(w.wk.data(), w.out, w.in);
  RowMap out(A, w.in, w.in);
  out.noalias() = Wq.middleRows(head * head_size, head_size).transpose() *
                  Wk.middleRows(head * head_size, head_size);
}

QkLayerWeights qk_null_weights(const QkLayerWeights& w, int64_t heads, uint64_t seed) {
  ATTN_ASSERT(heads >= 1 && w.out % heads == 0, "heads must divide out");
  QkLayerWeights z;
  z.layer = w.layer;
  z.out = w.out;
  z.in = w.in;
  const int64_t hs = w.out / heads;
  const std::pair<const std::vector<double>*, std::vector<double>*> sides[2] = {{&w.wq, &z.wq},
                                                                                {&w.wk, &z.wk}};
  const char* streams[2] = {"qk_stats.null.query", "qk_stats.null.key"};
  for (int s = 0; s < 2; ++s) {
    const std::vector<double>& real = *sides[s].first;
    std::vector<double>& draw = *sides[s].second;
    draw.resize(real.size());
    Rng rng(seed, streams[s], static_cast<uint64_t>(w.layer));
    rng_gaussian(rng, draw.data(), static_cast<int64_t>(draw.size()));
    for (int64_t h = 0; h < heads; ++h) {
      const double target = std::sqrt(block_sumsq(real, h * hs, hs, w.in));
      const double have = std::sqrt(block_sumsq(draw, h * hs, hs, w.in));
      const double scale = have > 0.0 ? target / have : 0.0;
      for (int64_t i = h * hs * w.in; i < (h + 1) * hs * w.in; ++i)
        draw[static_cast<size_t>(i)] *= scale;
    }
  }
  return z;
}

uint64_t qk_layer_analyze_bytes(int64_t out, int64_t in) {
  return 8 * static_cast<uint64_t>(2 * in * in + 2 * out * in);
}

QkLayerResult qk_layer_analyze(const QkLayerWeights& w, const QkAnalyzeOptions& o) {
  ATTN_ASSERT(w.wq.size() == static_cast<size_t>(w.out * w.in) && w.wk.size() == w.wq.size(),
              "weights do not match their shape");
  ATTN_ASSERT(o.heads >= 1 && w.out % o.heads == 0, "heads must divide out");
  ATTN_CHECK(w.in >= 2, "layer " + std::to_string(w.layer) + ": the model dimension D = " +
                            std::to_string(w.in) + " is too small; the statistics need D >= 2");
  QkLayerResult r;
  r.layer = w.layer;
  r.D = w.in;
  r.heads = o.heads;
  r.head_size = w.out / o.heads;
  r.block = std::min(o.block, w.in);
  r.head_results.resize(static_cast<size_t>(o.heads));

  const QkLayerWeights null = qk_null_weights(w, o.heads, o.seed);
  RowMatrix A_layer(w.in, w.in), A_head(w.in, w.in);
  for (int pass = 0; pass < 2; ++pass) {
    const bool real = pass == 0;
    const QkLayerWeights& weights = real ? w : null;
    A_layer.setZero();
    for (int64_t h = 0; h < o.heads; ++h) {
      qk_head_product(weights, h, r.head_size, A_head.data());
      QkHeadResult& hr = r.head_results[static_cast<size_t>(h)];
      hr.head = h;
      (real ? hr.stats : hr.null_stats) = qk_matrix_stats(A_head.data(), w.in);
      A_layer += A_head;
      if (real && r.block > 0) {
        for (int64_t keep : o.block_heads) {
          if (keep == h) corner_copy(A_head, r.block, &r.head_blocks[h]);
        }
      }
    }
    (real ? r.stats : r.null_stats) = qk_matrix_stats(A_layer.data(), w.in);
    if (real && r.block > 0) corner_copy(A_layer, r.block, &r.layer_block);
  }
  return r;
}

}  // namespace attn
