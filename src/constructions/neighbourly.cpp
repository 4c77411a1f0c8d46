// Trigonometric moment curve keys and face certificates (spec sanford2023 §3.2), long double.
#include "constructions/neighbourly.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

namespace attn {
namespace {

constexpr long double kTwoPi = 6.283185307179586476925286766559005768L;

long double angle(int64_t j, int64_t N) {
  return kTwoPi * static_cast<long double>(j) / static_cast<long double>(N);
}

}  // namespace

void neighbourly_key(int64_t j, int64_t N, int64_t q, long double* u) {
  for (int64_t k = 1; k <= q; ++k) {
    // k·j reduced mod N first keeps the argument small (exact integer arithmetic).
    const long double a = angle((k * j) % N, N);
    u[2 * (k - 1)] = std::cos(a);
    u[2 * (k - 1) + 1] = std::sin(a);
  }
}

long double neighbourly_query(const int64_t* set, int64_t q, int64_t N, long double* w) {
  using C = std::complex<long double>;
  // c[k + q] is the coefficient of e^{ikθ}, k = −q..q.
  std::vector<C> c(static_cast<size_t>(2 * q + 1), C(0)), next(c.size());
  c[q] = 1;
  for (int64_t f = 0; f < q; ++f) {
    const long double tl = angle(set[f], N);
    const C up = -0.5L * std::polar(1.0L, -tl);   // coefficient of e^{iθ}
    const C down = -0.5L * std::polar(1.0L, tl);  // coefficient of e^{−iθ}
    std::fill(next.begin(), next.end(), C(0));
    for (int64_t k = -q; k <= q; ++k) {
      const C v = c[k + q];
      if (v == C(0)) continue;
      next[k + q] += v;
      if (k + 1 <= q) next[k + 1 + q] += v * up;
      if (k - 1 >= -q) next[k - 1 + q] += v * down;
    }
    c.swap(next);
  }
  // P = c₀ + Σ_k 2 Re(c_k e^{ikθ}) = c₀ + Σ_k (2 Re c_k) cos kθ + (−2 Im c_k) sin kθ.
  for (int64_t k = 1; k <= q; ++k) {
    w[2 * (k - 1)] = -2.0L * c[k + q].real();
    w[2 * (k - 1) + 1] = 2.0L * c[k + q].imag();
  }
  return c[q].real();
}

long double neighbourly_poly_ref(const int64_t* set, int64_t q, int64_t N, int64_t j) {
  long double p = 1;
  for (int64_t f = 0; f < q; ++f) p *= 1.0L - std::cos(angle(((j - set[f]) % N + N) % N, N));
  return p;
}

long double neighbourly_gap(const int64_t* set, int64_t q, int64_t N) {
  long double gap = std::numeric_limits<long double>::infinity();
  for (int64_t j = 0; j < N; ++j)
    if (std::find(set, set + q, j) == set + q)
      gap = std::min(gap, neighbourly_poly_ref(set, q, N, j));
  return gap;
}

}  // namespace attn
