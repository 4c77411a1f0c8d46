// Match2 with one softmax head (m = 3) and Match3 with one third-order head (m = 4)
// (spec sanford2023 §3.3–3.4). θ_x = 2πx/M, g = 1 − cos(2π/M).
//
//   match2_trig         q_i = β(cos θ_i, −sin θ_i), k_j = (cos θ_j, sin θ_j)  ⇒ score β cos(θ_i +
//   θ_j);
//                       v_j = (cos θ_j, −sin θ_j) (the point of −x_j); β from ln(4N/g)/g.
//   match3_third_order  q_i = β(cos a, −cos a, −sin a, −sin a), k¹_j = (cos b, sin b, cos b, sin
//   b),
//                       k²_k = (cos c, sin c, sin c, cos c) ⇒ score β cos(a + b + c);
//                       v¹_j = (cos b, sin b, sin b, cos b), v²_k = (cos c, −sin c, −cos c, −sin
//                       c); read-out (e₁ + e₂, e₃ + e₄) of the averaged v¹ ∘ v² = the point of −(b
//                       + c); β from ln(4N²/g)/g.
// ψ (with the residual copy of φ(x_i)): y_i = 1 iff ‖(cos θ_i, sin θ_i) − read-out‖ < g/2.
// A match leaves the read-out within 2·(leaked mass) < g/2 of the target; without one every
// value point is ≥ 2π/M away on the circle, so every convex combination is ≥ g away.
#include <cmath>

#include "constructions/attend.h"
#include "constructions/construction.h"
#include "constructions/match_geometry.h"

namespace attn {
namespace {

double readout_distance(double theta, double c, double s) {
  return std::hypot(std::cos(theta) - c, std::sin(theta) - s);
}

class Match2Trig final : public Construction {
 public:
  explicit Match2Trig(const ConstructionSetup& s)
      : layout_(s.shape, 0, "match2_trig"), temp_(s.model) {}

  void forward(const double* x, const SequenceContext& ctx, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), M = ctx.M;
    const auto tokens = layout_.decode(x, M);
    match2_head(tokens, tokens, M, temp_.beta(static_cast<double>(N), match_gap(M)), p, y, probs,
                stats);
  }
  std::vector<std::pair<std::string, double>> sizes() const override {
    return {{"m", 3}, {"heads", 1}, {"layers", 1}};
  }
  void weights(ModelTensors& out) const override {
    // φ(x) = (cos θ_x, sin θ_x, 1); Q = diag(1, −1, 0) (times β), K = diag(1, 1, 0), V = diag(1,
    // −1, 0).
    out.add("q", {3, 3}, {1, 0, 0, 0, -1, 0, 0, 0, 0});
    out.add("k", {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 0});
    out.add("v", {3, 2}, {1, 0, 0, -1, 0, 0});
  }

 private:
  MatchLayout layout_;
  MatchTemperature temp_;
};

class Match3ThirdOrder final : public Construction {
 public:
  explicit Match3ThirdOrder(const ConstructionSetup& s)
      : layout_(s.shape, 0, "match3_third_order"), temp_(s.model) {}

  void forward(const double* x, const SequenceContext& ctx, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), M = ctx.M;
    const auto tokens = layout_.decode(x, M);
    const double g = match_gap(M);
    const double beta = temp_.beta(static_cast<double>(N) * static_cast<double>(N), g);
    std::vector<double> q(4 * N), k1(4 * N), k2(4 * N), v1(4 * N), v2(4 * N), a(4 * N);
    for (int64_t j = 0; j < N; ++j) {
      const double t = match_angle(tokens[j], M), c = std::cos(t), s = std::sin(t);
      const double qv[4] = {beta * c, -beta * c, -beta * s, -beta * s};
      const double k1v[4] = {c, s, c, s}, k2v[4] = {c, s, s, c};
      const double v1v[4] = {c, s, s, c}, v2v[4] = {c, -s, -c, -s};
      for (int l = 0; l < 4; ++l) {
        q[4 * j + l] = qv[l], k1[4 * j + l] = k1v[l], k2[4 * j + l] = k2v[l];
        v1[4 * j + l] = v1v[l], v2[4 * j + l] = v2v[l];
      }
      if (stats) stats->row(g, beta);
    }
    LayerProbs layer(probs ? static_cast<size_t>(N * N * N) : 0);
    construction_attend_third_order(N, 4, 4, std::move(q), std::move(k1), std::move(k2),
                                    std::move(v1), std::move(v2), p, a.data(),
                                    probs ? layer.data() : nullptr);
    for (int64_t i = 0; i < N; ++i) {
      const double* ai = a.data() + 4 * i;
      y[i] = readout_distance(match_angle(tokens[i], M), ai[0] + ai[1], ai[2] + ai[3]) < g / 2
                 ? 1.0
                 : 0.0;
    }
    if (probs) probs->push_back(std::move(layer));
  }
  std::vector<std::pair<std::string, double>> sizes() const override {
    return {{"m", 4}, {"heads", 1}, {"layers", 1}};
  }
  void weights(ModelTensors& out) const override {
    // Rows: the coefficients of (cos θ, sin θ) in each of the 4 coordinates.
    out.add("q", {4, 2}, {1, 0, -1, 0, 0, -1, 0, -1});
    out.add("k1", {4, 2}, {1, 0, 0, 1, 1, 0, 0, 1});
    out.add("k2", {4, 2}, {1, 0, 0, 1, 0, 1, 1, 0});
    out.add("v1", {4, 2}, {1, 0, 0, 1, 0, 1, 1, 0});
    out.add("v2", {4, 2}, {1, 0, 0, -1, -1, 0, 0, -1});
  }

 private:
  MatchLayout layout_;
  MatchTemperature temp_;
};

}  // namespace

std::unique_ptr<Construction> match2_trig_make(const ConstructionSetup& s) {
  return std::make_unique<Match2Trig>(s);
}
std::unique_ptr<Construction> match3_third_order_make(const ConstructionSetup& s) {
  return std::make_unique<Match3ThirdOrder>(s);
}

}  // namespace attn
