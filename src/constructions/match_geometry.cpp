// Shared pieces of the Match constructions: token decoding, circle read-out, retrieval heads.
#include "constructions/match_geometry.h"

#include <algorithm>

#include "constructions/attend.h"
#include "constructions/qsa_codes.h"
#include "core/error.h"

namespace attn {

MatchLayout::MatchLayout(const TaskShape& shape, int64_t extra, const std::string& name)
    : N_(shape.T), d_in_(shape.d_in), extra_(extra), name_(name) {
  ATTN_CHECK(shape.T_out == shape.T && shape.d_out == 1 && d_in_ - extra_ >= 1,
             "construction " + name + " needs a Match task (one 0/1 output per token); this task "
             "has T = " + std::to_string(shape.T) + ", T_out = " + std::to_string(shape.T_out) +
                 ", d_out = " + std::to_string(shape.d_out));
}

int64_t match_circle_decode(double c, double s, int64_t M) {
  double a = std::atan2(s, c);
  if (a < 0) a += 2.0 * M_PI;
  const int64_t x = std::llround(a * static_cast<double>(M) / (2.0 * M_PI));
  return ((x % M) + M) % M;
}

std::vector<int64_t> MatchLayout::decode(const double* x, int64_t M) const {
  const int64_t td = token_dim();
  ATTN_CHECK(M >= 2, "construction " + name_ + " needs the dataset's modulus M (the task constant "
                     "'modulus'); the data has none");
  ATTN_CHECK(td == 1 || td == 2 || td == M,
             "construction " + name_ + ": a token encoding of " + std::to_string(td) +
                 " columns is none of scalar (1), circle (2) or one_hot (M = " + std::to_string(M) +
                 ")");
  std::vector<int64_t> tokens(static_cast<size_t>(N_));
  for (int64_t i = 0; i < N_; ++i) {
    const double* xi = x + i * d_in_;
    if (td == M && M != 2 && M != 1)
      tokens[i] = std::max_element(xi, xi + M) - xi;
    else if (td == 2)
      tokens[i] = match_circle_decode(xi[0], xi[1], M);
    else
      tokens[i] = ((std::llround(xi[0]) % M) + M) % M;
  }
  return tokens;
}

void match2_head(const std::vector<int64_t>& queries, const std::vector<int64_t>& keys, int64_t M,
                 double beta, const Precision& p, double* y, std::vector<LayerProbs>* probs,
                 ConstructionStats* stats) {
  const int64_t N = static_cast<int64_t>(queries.size());
  const double g = match_gap(M);
  std::vector<double> q(2 * N), k(2 * N, 0.0), v(2 * N, 0.0), a(2 * N);
  for (int64_t j = 0; j < N; ++j) {
    const double ti = match_angle(queries[j], M);
    q[2 * j] = beta * std::cos(ti), q[2 * j + 1] = -beta * std::sin(ti);
    if (keys[j] < 0) continue;
    const double ts = match_angle(keys[j], M);
    k[2 * j] = std::cos(ts), k[2 * j + 1] = std::sin(ts);
    v[2 * j] = std::cos(ts), v[2 * j + 1] = -std::sin(ts);
  }
  LayerProbs layer(probs ? static_cast<size_t>(N * N) : 0);
  construction_attend<double>(N, 2, 2, std::move(q), std::move(k), std::move(v), p, a.data(),
                              probs ? layer.data() : nullptr);
  for (int64_t i = 0; i < N; ++i) {
    const double t = match_angle(queries[i], M);
    y[i] = std::hypot(std::cos(t) - a[2 * i], std::sin(t) - a[2 * i + 1]) < g / 2 ? 1.0 : 0.0;
    if (stats) stats->row(g, beta);
  }
  if (probs) probs->push_back(std::move(layer));
}

void match_retrieve(const std::vector<double>& U, int64_t m_prime,
                    const std::vector<int64_t>& target, const std::vector<double>& values,
                    int64_t M, const Params& model, const Precision& p, double* out,
                    LayerProbs* probs, ConstructionStats* stats) {
  const int64_t N = static_cast<int64_t>(target.size());
  const double epsilon = 0.5 * std::sin(M_PI / static_cast<double>(M));
  const double beta_fixed = model.get_real("beta"), factor = model.get_real("beta_factor");
  std::vector<double> q(static_cast<size_t>(N * m_prime), 0.0), k(U);
  for (int64_t i = 0; i < N; ++i) {
    if (target[i] < 0) continue;
    double* w = q.data() + i * m_prime;
    qsa_query_code(U.data(), m_prime, &target[i], 1, QsaQueryCode::dual, w);
    const double gamma = qsa_margin(U.data(), N, m_prime, &target[i], 1, w);
    const double beta = beta_fixed > 0
                            ? beta_fixed
                            : factor * qsa_temperature(N, 1, epsilon, gamma > 0 ? gamma : 0.5);
    if (stats) stats->row(gamma, beta);
    for (int64_t c = 0; c < m_prime; ++c) w[c] *= beta;
  }
  if (probs) probs->resize(static_cast<size_t>(N * N));
  construction_attend<double>(N, m_prime, 2, std::move(q), std::move(k), values, p, out,
                              probs ? probs->data() : nullptr);
}

}  // namespace attn
