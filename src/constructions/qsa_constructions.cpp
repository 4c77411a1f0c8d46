// qSA constructions (spec sanford2023 §3.1–3.2): one head whose row i is ≈ uniform on y_i.
//
//   qsa_random_codes  keys u_j (random ±1/√m' codes), queries β_i·w_{y_i} (dual certificates),
//                     values z_j; m = d' + 2m' (φ(x_i) = [z_i; u_i; w_{y_i}]), double.
//   qsa_neighbourly   keys on the trigonometric moment curve in R^{2q}, queries β_i·w_{y_i}
//                     with exact ties on y_i; m = d' + 4q; long double.
// β_i follows the temperature rule (qsa_codes.h) with the row's own margin γ_{y_i} (or Δ_{y_i})
// unless model.beta fixes it; a row without a positive margin gets the β of γ = 1/2 (it cannot
// succeed at any temperature, and ConstructionStats counts it).
// Inputs: the qsa task's either encoding (multi_hot: d_in = d' + 2N; indices: d' + q + 1).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "constructions/attend.h"
#include "constructions/construction.h"
#include "constructions/neighbourly.h"
#include "constructions/qsa_codes.h"
#include "core/error.h"

namespace attn {
namespace {

// One decoded qSA sequence: z (N, d'), the sets (N rows of q), each token's position.
struct QsaSequence {
  std::vector<double> z;
  std::vector<std::vector<int64_t>> sets;
  std::vector<int64_t> pos;
};

class QsaLayout {
 public:
  QsaLayout(const TaskShape& shape, const std::string& name)
      : N_(shape.T), d_out_(shape.d_out), d_in_(shape.d_in) {
    multi_hot_ = d_in_ == d_out_ + 2 * N_;
    q_ = multi_hot_ ? 0 : d_in_ - d_out_ - 1;
    ATTN_CHECK(shape.T_out == N_ && (multi_hot_ || (q_ >= 1 && q_ < N_)),
               "construction " + name + " needs the qsa task (inputs [z, y, i] with d_in = d' + 2N "
               "or d' + q + 1, one output per token); this task has T = " +
                   std::to_string(shape.T) + ", d_in = " + std::to_string(shape.d_in) +
                   ", d_out = " + std::to_string(shape.d_out));
  }
  int64_t N() const { return N_; }
  int64_t d_out() const { return d_out_; }
  int64_t d_in() const { return d_in_; }

  QsaSequence decode(const double* x) const {
    QsaSequence s;
    s.z.resize(static_cast<size_t>(N_ * d_out_));
    s.sets.resize(static_cast<size_t>(N_));
    s.pos.resize(static_cast<size_t>(N_));
    for (int64_t i = 0; i < N_; ++i) {
      const double* xi = x + i * d_in_;
      std::copy(xi, xi + d_out_, s.z.begin() + i * d_out_);
      auto& set = s.sets[i];
      if (multi_hot_) {
        for (int64_t j = 0; j < N_; ++j)
          if (xi[d_out_ + j] > 0.5) set.push_back(j);
        s.pos[i] = std::max_element(xi + d_out_ + N_, xi + d_out_ + 2 * N_) - (xi + d_out_ + N_);
      } else {
        for (int64_t t = 0; t < q_; ++t) set.push_back(std::llround(xi[d_out_ + t]));
        s.pos[i] = std::llround(xi[d_out_ + q_]);
      }
      std::sort(set.begin(), set.end());
      ATTN_CHECK(!set.empty() && std::adjacent_find(set.begin(), set.end()) == set.end() &&
                     set.front() >= 0 && set.back() < N_ && s.pos[i] >= 0 && s.pos[i] < N_,
                 "construction: token " + std::to_string(i) +
                     " does not encode a set of distinct positions in [0, N) and a position");
    }
    return s;
  }

 private:
  int64_t N_, d_out_, d_in_, q_;
  bool multi_hot_;
};

struct Temperature {
  double epsilon_param, beta_fixed, factor;
  explicit Temperature(const Params& m)
      : epsilon_param(m.get_real("epsilon")),
        beta_fixed(m.get_real("beta")),
        factor(m.get_real("beta_factor")) {}
  // ε = model.epsilon, or 1/(4q) (half the task's 1/(2q)) when it is 0.
  double epsilon(int64_t q) const {
    return epsilon_param > 0 ? epsilon_param : 1.0 / (4.0 * static_cast<double>(q));
  }
  double beta(int64_t N, int64_t q, double margin) const {
    if (beta_fixed > 0) return beta_fixed;
    return factor * qsa_temperature(N, q, epsilon(q), margin > 0 ? margin : 0.5);
  }
};

class QsaRandomCodes final : public Construction {
 public:
  explicit QsaRandomCodes(const ConstructionSetup& s)
      : layout_(s.shape, "qsa_random_codes"),
        m_prime_(s.model.get_int("m_prime")),
        mode_(s.model.get_string("query_code") == "sum" ? QsaQueryCode::sum : QsaQueryCode::dual),
        dist_(s.model.get_string("code_dist") == "gaussian" ? QsaCodeDist::gaussian
                                                             : QsaCodeDist::sign),
        seed_(s.seed),
        temp_(s.model),
        U_(qsa_codebook(layout_.N(), m_prime_, dist_, seed_, "construction.codes")) {}

  void forward(const double* x, const SequenceContext&, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), d = layout_.d_out(), mp = m_prime_;
    const QsaSequence s = layout_.decode(x);
    std::vector<double> q(static_cast<size_t>(N * mp)), k(static_cast<size_t>(N * mp));
    for (int64_t j = 0; j < N; ++j)
      std::copy(U_.begin() + s.pos[j] * mp, U_.begin() + (s.pos[j] + 1) * mp, k.begin() + j * mp);
    for (int64_t i = 0; i < N; ++i) {
      const auto& set = s.sets[i];
      const int64_t qi = static_cast<int64_t>(set.size());
      double* w = q.data() + i * mp;
      qsa_query_code(U_.data(), mp, set.data(), qi, mode_, w);
      const double gamma = qsa_margin(U_.data(), N, mp, set.data(), qi, w);
      const double beta = temp_.beta(N, qi, gamma);
      if (stats) {
        stats->row(gamma, beta);
        for (int64_t l : set) {  // in-set scores are 1 for a dual certificate
          double dot = 0;
          for (int64_t c = 0; c < mp; ++c) dot += w[c] * U_[l * mp + c];
          stats->tie_error_max = std::max(stats->tie_error_max, std::fabs(dot - 1.0));
        }
      }
      for (int64_t c = 0; c < mp; ++c) w[c] *= beta;
    }
    LayerProbs layer;
    if (probs) layer.resize(static_cast<size_t>(N * N));
    construction_attend<double>(N, mp, d, std::move(q), std::move(k), s.z, p, y,
                                probs ? layer.data() : nullptr);
    if (probs) probs->push_back(std::move(layer));
  }

  int64_t m_prime_needed(const double* x, int64_t n) const override {
    const int64_t N = layout_.N();
    std::vector<QsaSequence> seqs;
    for (int64_t b = 0; b < n; ++b) seqs.push_back(layout_.decode(x + b * N * layout_.d_in()));
    for (int64_t mp = 8; mp <= 4096; mp *= 2) {
      const auto U = qsa_codebook(N, mp, dist_, seed_, "construction.codes");
      std::vector<double> w(static_cast<size_t>(mp));
      bool all_positive = true;
      for (size_t b = 0; b < seqs.size() && all_positive; ++b)
        for (const auto& set : seqs[b].sets) {
          const int64_t q = static_cast<int64_t>(set.size());
          qsa_query_code(U.data(), mp, set.data(), q, mode_, w.data());
          if (!(qsa_margin(U.data(), N, mp, set.data(), q, w.data()) > 0)) {
            all_positive = false;
            break;
          }
        }
      if (all_positive) return mp;
    }
    return 0;
  }

  std::vector<std::pair<std::string, double>> sizes() const override {
    return {{"m", static_cast<double>(layout_.d_out() + 2 * m_prime_)},
            {"m_prime", static_cast<double>(m_prime_)},
            {"heads", 1},
            {"layers", 1}};
  }
  void weights(ModelTensors& out) const override { out.add("codes", {layout_.N(), m_prime_}, U_); }

 private:
  QsaLayout layout_;
  int64_t m_prime_;
  QsaQueryCode mode_;
  QsaCodeDist dist_;
  uint64_t seed_;
  Temperature temp_;
  std::vector<double> U_;
};

class QsaNeighbourly final : public Construction {
 public:
  explicit QsaNeighbourly(const ConstructionSetup& s)
      : layout_(s.shape, "qsa_neighbourly"), temp_(s.model) {}

  void forward(const double* x, const SequenceContext&, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), d = layout_.d_out();
    const QsaSequence s = layout_.decode(x);
    const int64_t q = static_cast<int64_t>(s.sets[0].size());
    for (const auto& set : s.sets)
      ATTN_CHECK(static_cast<int64_t>(set.size()) == q,
                 "construction qsa_neighbourly: all sets of a sequence must have the same size");
    q_seen_.store(q);
    const int64_t dk = 2 * q;
    std::vector<long double> qm(static_cast<size_t>(N * dk)), k(static_cast<size_t>(N * dk));
    for (int64_t j = 0; j < N; ++j) neighbourly_key(s.pos[j], N, q, k.data() + j * dk);
    std::vector<long double> u(static_cast<size_t>(dk));
    for (int64_t i = 0; i < N; ++i) {
      const auto& set = s.sets[i];
      long double* w = qm.data() + i * dk;
      const long double a0 = neighbourly_query(set.data(), q, N, w);
      const double gap = static_cast<double>(neighbourly_gap(set.data(), q, N));
      const double beta = temp_.beta(N, q, gap);
      if (stats) {
        stats->row(gap, beta);
        for (int64_t l : set) {
          neighbourly_key(l, N, q, u.data());
          long double dot = 0;
          for (int64_t c = 0; c < dk; ++c) dot += w[c] * u[c];
          stats->tie_error_max =
              std::max(stats->tie_error_max, static_cast<double>(std::fabs(dot - a0)));
        }
      }
      for (int64_t c = 0; c < dk; ++c) w[c] *= static_cast<long double>(beta);
    }
    std::vector<long double> v(s.z.begin(), s.z.end()), out(static_cast<size_t>(N * d));
    std::vector<long double> pr(probs ? static_cast<size_t>(N * N) : 0);
    construction_attend<long double>(N, dk, d, std::move(qm), std::move(k), std::move(v), p,
                                     out.data(), probs ? pr.data() : nullptr);
    for (int64_t e = 0; e < N * d; ++e) y[e] = static_cast<double>(out[e]);
    if (probs) probs->emplace_back(pr.begin(), pr.end());
  }

  std::vector<std::pair<std::string, double>> sizes() const override {
    const double q = static_cast<double>(q_seen_.load());
    return {{"m", static_cast<double>(layout_.d_out()) + 4 * q}, {"heads", 1}, {"layers", 1}};
  }
  void weights(ModelTensors& out) const override {
    out.add("key_angles", {layout_.N()}, [&] {
      std::vector<double> a(static_cast<size_t>(layout_.N()));
      for (int64_t j = 0; j < layout_.N(); ++j)
        a[j] = 2 * M_PI * static_cast<double>(j) / static_cast<double>(layout_.N());
      return a;
    }());
  }

 private:
  QsaLayout layout_;
  Temperature temp_;
  mutable std::atomic<int64_t> q_seen_{0};
};

}  // namespace

std::unique_ptr<Construction> qsa_random_codes_make(const ConstructionSetup& s) {
  return std::make_unique<QsaRandomCodes>(s);
}
std::unique_ptr<Construction> qsa_neighbourly_make(const ConstructionSetup& s) {
  return std::make_unique<QsaNeighbourly>(s);
}

}  // namespace attn
