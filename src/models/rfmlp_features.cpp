// RFMLP random features: the weight draw, the blocked GEMM fast path and the scalar
// reference (see rfmlp_features.h).
//
// Shapes: X count × T × d, read per block as Xb (B × T·d); W width × D (D = T·d [+ 1]);
// Phi count × width. The GEMM is Xb · W[:, :T·d]ᵀ (strided view, no copy of X or W), the
// augmented column W[:, T·d] is added as a bias in the same pass as the relu.
#include "models/rfmlp_features.h"

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

using ConstStridedRowMap = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

void rfmlp_check(const RfmlpConfig& c, int64_t T, int64_t d) {
  ATTN_CHECK(c.width >= 1, "rfmlp: width = " + std::to_string(c.width) + " must be at least 1");
  ATTN_CHECK(std::isfinite(c.w_var) && c.w_var >= 0.0,
             "rfmlp: w_var = " + std::to_string(c.w_var) + " must be >= 0 (0 = 1/(N+2))");
  ATTN_CHECK(c.block >= 0,
             "rfmlp: block = " + std::to_string(c.block) + " must be >= 0 (0 = automatic)");
  ATTN_CHECK(T >= 1, "rfmlp: T = " + std::to_string(T) + " tokens per sample must be at least 1");
  ATTN_CHECK(d >= 1, "rfmlp: token dimension d = " + std::to_string(d) + " must be at least 1");
}

}  // namespace

RfmlpFeatures::RfmlpFeatures(const RfmlpConfig& config, int64_t T, int64_t d, uint64_t seed)
    : config_(config), T_(T), d_(d), D_(0), block_(0), w_var_(0.0) {
  rfmlp_check(config, T, d);
  D_ = T * d + (config.augment ? 1 : 0);
  const int64_t N = T - 1;
  w_var_ = config.w_var > 0.0 ? config.w_var : 1.0 / static_cast<double>(N + 2);
  uint64_t entries = 0;
  ATTN_CHECK(
      checked_mul(static_cast<uint64_t>(config.width), static_cast<uint64_t>(D_), &entries) &&
          entries < (uint64_t{1} << 60),
      "rfmlp: width = " + std::to_string(config.width) + " is too large");
  memory_check(entries * sizeof(double), "rfmlp weights (width × (T·d + 1))", "lower the width");
  block_ = config.block > 0 ? config.block : 256;

  const double scale = std::sqrt(w_var_);
  W_.resize(entries);
  for (int64_t m = 0; m < config.width; ++m) {
    Rng rng(seed, "rfmlp.w", static_cast<uint64_t>(m));
    double* wm = W_.data() + m * D_;
    for (int64_t k = 0; k < D_; ++k) wm[k] = scale * rng.gaussian();
  }
  if (config.augment) {
    bias_.resize(config.width);
    for (int64_t m = 0; m < config.width; ++m) bias_[m] = W_[m * D_ + T * d];
  }
}

int64_t RfmlpFeatures::dim() const { return config_.width; }

void RfmlpFeatures::features(const double* X, int64_t count, double* Phi) const {
  const int64_t width = config_.width, P = T_ * d_;
  const bool augment = config_.augment;
  const ConstStridedRowMap Wx(W_.data(), width, P, Eigen::OuterStride<>(D_));

  parallel_for(0, count, block_, [&](int64_t lo, int64_t hi) {
    const int64_t B = hi - lo;
    const ConstRowMap Xb(X + lo * P, B, P);
    RowMap out(Phi + lo * width, B, width);
    out.noalias() = Xb * Wx.transpose();
    for (int64_t b = 0; b < B; ++b) {
      double* row = out.data() + b * width;
      if (augment) {
        const double* bias = bias_.data();
        for (int64_t m = 0; m < width; ++m) row[m] = std::max(row[m] + bias[m], 0.0);
      } else {
        for (int64_t m = 0; m < width; ++m) row[m] = std::max(row[m], 0.0);
      }
    }
  });
}

void rfmlp_features_reference(const RfmlpConfig& c, const std::vector<double>& W, int64_t T,
                              int64_t d, const double* X, int64_t count, double* Phi) {
  rfmlp_check(c, T, d);
  const int64_t P = T * d, D = P + (c.augment ? 1 : 0);
  ATTN_ASSERT(static_cast<int64_t>(W.size()) == c.width * D, "W must be width × D");
  for (int64_t j = 0; j < count; ++j) {
    const double* z = X + j * P;
    for (int64_t m = 0; m < c.width; ++m) {
      const double* wm = W.data() + m * D;
      double total = 0.0;
      for (int64_t k = 0; k < D; ++k) total += wm[k] * (k < P ? z[k] : 1.0);
      Phi[j * c.width + m] = total > 0.0 ? total : 0.0;
    }
  }
}

int64_t rfmlp_matched_width(int64_t heads, int64_t d, bool augment) {
  return heads * (augment ? d + 1 : d);
}

}  // namespace attn
