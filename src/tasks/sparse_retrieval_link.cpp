// The links of q-sparse token retrieval (sparse_retrieval_link.h).
#include "tasks/sparse_retrieval_link.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"

namespace attn {

RetrievalLinkFn retrieval_link_make(RetrievalLink link, int64_t q, int64_t d, int64_t width,
                                    uint64_t seed) {
  RetrievalLinkFn g;
  g.link = link;
  g.q = q;
  g.d = d;
  g.width = width;
  if (link != RetrievalLink::relu_net) return g;
  g.w1.resize(static_cast<size_t>(width * q * d));
  g.w2.resize(static_cast<size_t>(d * width));
  Rng rng(seed, "sparse_retrieval.link", 0);
  rng_gaussian(rng, g.w1.data(), width * q * d);
  rng_gaussian(rng, g.w2.data(), d * width);
  const double s1 = 1.0 / std::sqrt(static_cast<double>(q));
  const double s2 = std::sqrt(2.0 / static_cast<double>(width));
  for (double& w : g.w1) w *= s1;
  for (double& w : g.w2) w *= s2;
  return g;
}

void retrieval_link_apply(const RetrievalLinkFn& g, const double* z, const int64_t* pointers,
                          double* y, std::vector<double>& scratch) {
  const int64_t q = g.q, d = g.d;
  switch (g.link) {
    case RetrievalLink::mean: {
      // As qsa_targets: summed in pointer order, then multiplied by 1/q.
      const double inv_q = 1.0 / static_cast<double>(q);
      std::fill(y, y + d, 0.0);
      for (int64_t j = 0; j < q; ++j)
        for (int64_t k = 0; k < d; ++k) y[k] += z[pointers[j] * d + k];
      for (int64_t k = 0; k < d; ++k) y[k] *= inv_q;
      return;
    }
    case RetrievalLink::product:
      std::fill(y, y + d, 1.0);
      for (int64_t j = 0; j < q; ++j)
        for (int64_t k = 0; k < d; ++k) y[k] *= z[pointers[j] * d + k];
      return;
    case RetrievalLink::max:
      for (int64_t k = 0; k < d; ++k) y[k] = z[pointers[0] * d + k];
      for (int64_t j = 1; j < q; ++j)
        for (int64_t k = 0; k < d; ++k) y[k] = std::max(y[k], z[pointers[j] * d + k]);
      return;
    case RetrievalLink::relu_net: {
      const int64_t in = q * d, W = g.width;
      scratch.resize(static_cast<size_t>(in + W));
      double* u = scratch.data();
      double* h = u + in;
      for (int64_t j = 0; j < q; ++j)
        std::copy(z + pointers[j] * d, z + (pointers[j] + 1) * d, u + j * d);
      for (int64_t r = 0; r < W; ++r) {
        const double* row = g.w1.data() + r * in;
        double a = 0.0;
        for (int64_t c = 0; c < in; ++c) a += row[c] * u[c];
        h[r] = a > 0.0 ? a : 0.0;
      }
      for (int64_t k = 0; k < d; ++k) {
        const double* row = g.w2.data() + k * W;
        double a = 0.0;
        for (int64_t r = 0; r < W; ++r) a += row[r] * h[r];
        y[k] = a;
      }
      return;
    }
  }
}

}  // namespace attn
