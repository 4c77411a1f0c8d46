// Frozen random features and kernels: the parts of a random-feature model that are not
// trained. A ridge read-out on top of them (train/ridge.h) makes the model.
//
// Input layout is the task's: X is count × T × d_in (row-major), one sample after
// another. For rf_target, row 0 of a sample is the query x_0 and rows 1..N the keys.
#pragma once

#include <cstdint>

namespace attn {

// x (T × d_in) -> φ(x) ∈ R^P.
class FeatureMap {
 public:
  virtual ~FeatureMap() = default;
  virtual int64_t dim() const = 0;  // P
  // Phi (count × P, row-major) for the count samples of X.
  virtual void features(const double* X, int64_t count, double* Phi) const = 0;
};

// k(x, x') for two sets of samples: the infinite-width limit of a feature map,
// k(x, x') = lim_{M→∞} <φ(x), φ(x')> / M.
class KernelFunction {
 public:
  virtual ~KernelFunction() = default;
  // K (na × nb, row-major) with K[i][j] = k(sample i of Xa, sample j of Xb).
  virtual void kernel(const double* Xa, int64_t na, const double* Xb, int64_t nb,
                      double* K) const = 0;
};

}  // namespace attn
