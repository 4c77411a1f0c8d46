// RFA / BRFA random features: the W draw, the blocked GEMM fast path and the scalar
// reference (see rfa_features.h).
//
// Shapes: X count × T × d; Phi count × M·e; W M × e × e; Wcat e × M·e; per block
// Q B × e (augmented queries), U B × M·e; per sample K N × e (augmented keys), S M × N.
#include "models/rfa_features.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "core/eigen_rows.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/rng.h"
#include "core/threads.h"

namespace attn {
namespace {

void rfa_check(const RfaConfig& c, int64_t T, int64_t d) {
  ATTN_CHECK(c.heads >= 1, "rfa: heads = " + std::to_string(c.heads) + " must be at least 1");
  ATTN_CHECK(std::isfinite(c.w_var) && c.w_var >= 0.0,
             "rfa: w_var = " + std::to_string(c.w_var) + " must be a finite number >= 0");
  ATTN_CHECK(std::isfinite(c.w_mean), "rfa: w_mean must be finite");
  ATTN_CHECK(c.block >= 0,
             "rfa: block = " + std::to_string(c.block) + " must be >= 0 (0 = automatic)");
  ATTN_CHECK(T >= 2, "rfa: a sample needs a query and at least one key (T = " +
                         std::to_string(T) + ", need T >= 2)");
  ATTN_CHECK(d >= 1, "rfa: token dimension d = " + std::to_string(d) + " must be at least 1");
}

// Samples per block: the largest power of two with U (B × M·e) within 256 Ki doubles
// (2 MiB, so U stays in cache between its GEMM and its use), clamped to [16, 256].
int64_t rfa_auto_block(int64_t M, int64_t e) {
  const int64_t target = int64_t{1} << 18;
  int64_t block = 256;
  while (block > 16 && block * M * e > target) block /= 2;
  return block;
}

// a_mi from the scores s_mi of one head over its N keys, in place (row of S).
void rfa_activate_row(RfaActivation act, double* s, int64_t N) {
  const double inv_n = 1.0 / static_cast<double>(N);
  switch (act) {
    case RfaActivation::relu:
      for (int64_t i = 0; i < N; ++i) s[i] = std::max(s[i], 0.0) * inv_n;
      break;
    case RfaActivation::exp:
      for (int64_t i = 0; i < N; ++i) s[i] = std::exp(s[i]) * inv_n;
      break;
    case RfaActivation::softmax: {
      double top = s[0];
      for (int64_t i = 1; i < N; ++i) top = std::max(top, s[i]);
      double total = 0.0;
      for (int64_t i = 0; i < N; ++i) {
        s[i] = std::exp(s[i] - top);
        total += s[i];
      }
      const double inv = 1.0 / total;
      for (int64_t i = 0; i < N; ++i) s[i] *= inv;
      break;
    }
  }
}

}  // namespace

RfaFeatures::RfaFeatures(const RfaConfig& config, int64_t T, int64_t d, uint64_t seed)
    : config_(config), T_(T), d_(d), e_(0), block_(0) {
  rfa_check(config, T, d);
  e_ = config.augment ? d + 1 : d;
  const int64_t M = config.heads, e = e_;
  uint64_t entries = 0;
  ATTN_CHECK(checked_mul(static_cast<uint64_t>(M), static_cast<uint64_t>(e * e), &entries) &&
                 entries < (uint64_t{1} << 60),
             "rfa: heads = " + std::to_string(M) + " is too large");
  memory_check(2 * entries * sizeof(double), "rfa weights (2 × heads × e²)",
               "lower model.heads");
  block_ = config.block > 0 ? config.block : rfa_auto_block(M, e);

  const double scale = std::sqrt(config.w_var);
  W_.resize(entries);
  for (int64_t m = 0; m < M; ++m) {
    Rng rng(seed, "rfa.W", static_cast<uint64_t>(m));
    double* Wm = W_.data() + m * e * e;
    for (int64_t a = 0; a < e; ++a) {
      for (int64_t b = 0; b < e; ++b) {
        const double mean = (a == b && a < d) ? config.w_mean : 0.0;
        Wm[a * e + b] = mean + scale * rng.gaussian();
      }
    }
  }
  Wcat_.resize(entries);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t a = 0; a < e; ++a)
      for (int64_t b = 0; b < e; ++b) Wcat_[a * M * e + m * e + b] = W_[(m * e + a) * e + b];
}

int64_t RfaFeatures::dim() const { return config_.heads * e_; }

void RfaFeatures::features(const double* X, int64_t count, double* Phi) const {
  const int64_t M = config_.heads, e = e_, d = d_, T = T_, N = T - 1;
  const RfaActivation act = config_.activation;
  const bool augment = config_.augment;
  const ConstRowMap Wcat(Wcat_.data(), e, M * e);

  // Each worker takes a run of whole blocks and allocates its workspace once; blocks start
  // at multiples of B whatever the thread count, so the result does not depend on it.
  const int64_t B = block_;
  const int64_t blocks = (count + B - 1) / B;
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(threads_count(), blocks));
  const int64_t run = (blocks + workers - 1) / workers * B;

  parallel_for(0, count, run, [&](int64_t run_lo, int64_t run_hi) {
    const int64_t rows_max = std::min(B, run_hi - run_lo);
    RowMatrix Q(rows_max, e), U(rows_max, M * e), K(N, e), S(M, N);
    for (int64_t lo = run_lo; lo < run_hi; lo += B) {
      const int64_t rows = std::min(B, run_hi - lo);
      // Augmented queries of the block, then U = Q · [W_1 … W_M]: one GEMM.
      for (int64_t b = 0; b < rows; ++b) {
        const double* x0 = X + (lo + b) * T * d;
        for (int64_t k = 0; k < d; ++k) Q(b, k) = x0[k];
        if (augment) Q(b, d) = 1.0;
      }
      RowMap Ub(U.data(), rows, M * e);
      Ub.noalias() = Q.topRows(rows) * Wcat;
      for (int64_t b = 0; b < rows; ++b) {
        const double* keys = X + (lo + b) * T * d + d;
        for (int64_t i = 0; i < N; ++i) {
          for (int64_t k = 0; k < d; ++k) K(i, k) = keys[i * d + k];
          if (augment) K(i, d) = 1.0;
        }
        // Row b of U is U_mat (M × e): U_mat[m][k] = (W_mᵀ x̃_0)[k].
        const ConstRowMap Umat(U.data() + b * M * e, M, e);
        S.noalias() = Umat * K.transpose();
        for (int64_t m = 0; m < M; ++m) rfa_activate_row(act, S.data() + m * N, N);
        RowMap out(Phi + (lo + b) * M * e, M, e);
        out.noalias() = S * K;
      }
    }
  });
}

void rfa_features_reference(const RfaConfig& c, const std::vector<double>& W, int64_t T,
                            int64_t d, const double* X, int64_t count, double* Phi) {
  rfa_check(c, T, d);
  const int64_t M = c.heads, N = T - 1;
  const int64_t e = c.augment ? d + 1 : d;
  ATTN_ASSERT(static_cast<int64_t>(W.size()) == M * e * e, "W must be heads × e × e");
  auto tilde = [&](const double* x, int64_t k) { return k < d ? x[k] : 1.0; };
  std::vector<double> s(N);
  for (int64_t j = 0; j < count; ++j) {
    const double* x0 = X + j * T * d;
    for (int64_t m = 0; m < M; ++m) {
      const double* Wm = W.data() + m * e * e;
      // Scores s_mi = Σ_a Σ_b x̃_0[a] W_m[a][b] x̃_i[b].
      for (int64_t i = 1; i <= N; ++i) {
        const double* xi = X + (j * T + i) * d;
        double total = 0.0;
        for (int64_t a = 0; a < e; ++a)
          for (int64_t b = 0; b < e; ++b) total += tilde(x0, a) * Wm[a * e + b] * tilde(xi, b);
        s[i - 1] = total;
      }
      // Weights a_mi.
      if (c.activation == RfaActivation::relu) {
        for (int64_t i = 0; i < N; ++i) s[i] = (s[i] > 0.0 ? s[i] : 0.0) / static_cast<double>(N);
      } else if (c.activation == RfaActivation::exp) {
        for (int64_t i = 0; i < N; ++i) s[i] = std::exp(s[i]) / static_cast<double>(N);
      } else {
        double top = s[0];
        for (int64_t i = 1; i < N; ++i) top = s[i] > top ? s[i] : top;
        double z = 0.0;
        for (int64_t i = 0; i < N; ++i) z += std::exp(s[i] - top);
        for (int64_t i = 0; i < N; ++i) s[i] = std::exp(s[i] - top) / z;
      }
      // Φ_m = Σ_i a_mi x̃_i.
      double* out = Phi + j * M * e + m * e;
      for (int64_t k = 0; k < e; ++k) {
        double total = 0.0;
        for (int64_t i = 1; i <= N; ++i) total += s[i - 1] * tilde(X + (j * T + i) * d, k);
        out[k] = total;
      }
    }
  }
}

}  // namespace attn
