// Position codes and dual certificates of the finite-precision qSA construction.
#include "constructions/qsa_codes.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/rng.h"

namespace attn {

std::vector<double> qsa_codebook(int64_t N, int64_t m_prime, QsaCodeDist dist, uint64_t seed,
                                 const std::string& stream) {
  std::vector<double> U(static_cast<size_t>(N * m_prime));
  const double amp = 1.0 / std::sqrt(static_cast<double>(m_prime));
  for (int64_t j = 0; j < N; ++j) {
    Rng rng(seed, stream, static_cast<uint64_t>(j));  // code j does not depend on N
    double* u = U.data() + j * m_prime;
    for (int64_t l = 0; l < m_prime; ++l)
      u[l] =
          dist == QsaCodeDist::sign ? ((rng.next_u32() & 1u) ? amp : -amp) : amp * rng.gaussian();
  }
  return U;
}

std::vector<double> position_codes_rotational(int64_t N, int64_t m_prime, uint64_t seed,
                                              const std::string& stream) {
  const int64_t pairs = m_prime / 2;
  std::vector<int64_t> freq(static_cast<size_t>(pairs));
  Rng rng(seed, stream, 0);
  for (auto& f : freq)
    f = 1 +
        static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(std::max<int64_t>(N - 1, 1))));
  std::vector<double> U(static_cast<size_t>(N * m_prime), 0.0);
  const double amp = 1.0 / std::sqrt(static_cast<double>(pairs));
  for (int64_t j = 0; j < N; ++j)
    for (int64_t l = 0; l < pairs; ++l) {
      const double a = 2.0 * M_PI * static_cast<double>((freq[l] * j) % N) / static_cast<double>(N);
      U[j * m_prime + 2 * l] = amp * std::cos(a);
      U[j * m_prime + 2 * l + 1] = amp * std::sin(a);
    }
  return U;
}

namespace {

// Solves the q × q symmetric positive (semi)definite system G c = 1 by Cholesky in long
// double; false when a pivot falls below a relative 1e-12 (G singular to rounding).
bool solve_gram_ones(std::vector<long double>& G, int64_t q, std::vector<long double>& c) {
  long double scale = 0;
  for (int64_t a = 0; a < q; ++a) scale = std::max(scale, G[a * q + a]);
  for (int64_t a = 0; a < q; ++a) {
    long double d = G[a * q + a];
    for (int64_t k = 0; k < a; ++k) d -= G[a * q + k] * G[a * q + k];
    if (!(d > 1e-12L * scale)) return false;
    const long double l = std::sqrt(d);
    G[a * q + a] = l;
    for (int64_t b = a + 1; b < q; ++b) {
      long double s = G[b * q + a];
      for (int64_t k = 0; k < a; ++k) s -= G[b * q + k] * G[a * q + k];
      G[b * q + a] = s / l;
    }
  }
  c.assign(static_cast<size_t>(q), 1.0L);
  for (int64_t a = 0; a < q; ++a) {  // L y = 1
    for (int64_t k = 0; k < a; ++k) c[a] -= G[a * q + k] * c[k];
    c[a] /= G[a * q + a];
  }
  for (int64_t a = q - 1; a >= 0; --a) {  // Lᵀ c = y
    for (int64_t k = a + 1; k < q; ++k) c[a] -= G[k * q + a] * c[k];
    c[a] /= G[a * q + a];
  }
  return true;
}

}  // namespace

bool qsa_query_code(const double* U, int64_t m_prime, const int64_t* set, int64_t q,
                    QsaQueryCode mode, double* w) {
  std::vector<long double> coef(static_cast<size_t>(q), 1.0L);
  bool ok = true;
  if (mode == QsaQueryCode::dual) {
    std::vector<long double> G(static_cast<size_t>(q * q));
    for (int64_t a = 0; a < q; ++a)
      for (int64_t b = 0; b <= a; ++b) {
        long double s = 0;
        for (int64_t l = 0; l < m_prime; ++l)
          s += static_cast<long double>(U[set[a] * m_prime + l]) * U[set[b] * m_prime + l];
        G[a * q + b] = G[b * q + a] = s;
      }
    ok = solve_gram_ones(G, q, coef);
    if (!ok) coef.assign(static_cast<size_t>(q), 1.0L);
  }
  for (int64_t l = 0; l < m_prime; ++l) {
    long double s = 0;
    for (int64_t a = 0; a < q; ++a) s += coef[a] * U[set[a] * m_prime + l];
    w[l] = static_cast<double>(s);
  }
  return ok;
}

double qsa_margin(const double* U, int64_t N, int64_t m_prime, const int64_t* set, int64_t q,
                  const double* w) {
  double in_min = std::numeric_limits<double>::infinity();
  double out_max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < N; ++j) {
    double s = 0;
    for (int64_t l = 0; l < m_prime; ++l) s += w[l] * U[j * m_prime + l];
    const bool member = std::find(set, set + q, j) != set + q;
    if (member)
      in_min = std::min(in_min, s);
    else
      out_max = std::max(out_max, s);
  }
  if (out_max == -std::numeric_limits<double>::infinity()) return in_min;  // S = [N]
  return in_min - out_max;
}

double qsa_temperature(int64_t N, int64_t q, double epsilon, double gamma) {
  const double leak_ratio = 2.0 * static_cast<double>(N - q) / (static_cast<double>(q) * epsilon);
  return std::max(0.0, std::log(leak_ratio)) / gamma;
}

}  // namespace attn
