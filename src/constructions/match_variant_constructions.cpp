// Standard-attention constructions for the Match3 variants (spec sanford2023 §2.3, §3.5; the
// variants and recipes are ours, named as such). Tokens are read back from any Match encoding;
// retrieval heads copy a token's circle point (cos, sin)(2πx/M) with rotational position codes
// (qsa_codes.h: one φ(x_i) = [circle(x_i); u_i], head δ's query Q_δ u_i = u_{i+δ}).
//
//   smallm_match3    (task match3, small M) one head with Q = 0 averages φ(x) = e_x ∈ R^M:
//                    h = (1/N) Σ_j e_{x_j}; ψ: y_i = 1 iff ∃ a, b with h_a, h_b > 1/(2N) and
//                    x_i + a + b ≡ 0. m = M, H = 1.
//   local_match3     (task match3_local, model.window = the task's w) 2w+1 retrieval heads,
//                    head δ fetches x_{i+δ}; ψ checks every pair in the window (offsets
//                    outside [0, N) are ignored). m = 2 + m', H = 2w + 1.
//   adjacent_match3  (task match3_adjacent) two layers: a retrieval head brings x_{j+1} to token
//                    j, which forms s_j = x_j + x_{j+1} mod M (s_{N−1}: none); layer 2 is the
//                    match2_trig head between x_i and the s_j. m = max(2 + m', 4), H = 1.
//   pointer_match3   (task match3_pointer) token i carries S_i (|S_i| = s); s retrieval heads
//                    fetch x_p for p ∈ S_i (φ holds the s query codes); ψ checks every pair of
//                    S_i. m = 2 + (s + 1)m', H = s.
// Witnesses are not required to be distinct (the tasks' default, spec §7 A9).
#include <algorithm>
#include <atomic>
#include <cmath>

#include "constructions/attend.h"
#include "constructions/construction.h"
#include "constructions/match_geometry.h"
#include "constructions/qsa_codes.h"
#include "core/error.h"

namespace attn {
namespace {

std::vector<double> circle_points(const std::vector<int64_t>& tokens, int64_t M, double sign) {
  std::vector<double> v(2 * tokens.size());
  for (size_t j = 0; j < tokens.size(); ++j) {
    const double t = match_angle(tokens[j], M);
    v[2 * j] = std::cos(t), v[2 * j + 1] = sign * std::sin(t);
  }
  return v;
}

// True iff some a, b in `present` (a multiset given as a 0/1 table over [M]) close x with
// x + a + b ≡ 0.
bool pair_completes(int64_t x, const std::vector<char>& present, int64_t M) {
  for (int64_t a = 0; a < M; ++a)
    if (present[a] && present[((-x - a) % M + 2 * M) % M]) return true;
  return false;
}

int64_t even_m_prime(const Params& model, const std::string& name) {
  const int64_t mp = model.get_int("m_prime");
  ATTN_CHECK(mp % 2 == 0, "model.m_prime = " + std::to_string(mp) + ": construction " + name +
                              " uses rotational codes (cos/sin pairs); use an even m_prime");
  return mp;
}

class SmallMMatch3 final : public Construction {
 public:
  explicit SmallMMatch3(const ConstructionSetup& s) : layout_(s.shape, 0, "smallm_match3") {}
  void forward(const double* x, const SequenceContext& ctx, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), M = ctx.M;
    const auto tokens = layout_.decode(x, M);
    m_seen_ = M;
    std::vector<double> v(static_cast<size_t>(N * M), 0.0), h(static_cast<size_t>(N * M));
    for (int64_t j = 0; j < N; ++j) v[j * M + tokens[j]] = 1.0;
    LayerProbs layer(probs ? static_cast<size_t>(N * N) : 0);
    construction_attend<double>(N, 1, M, std::vector<double>(N, 0.0), std::vector<double>(N, 0.0),
                                std::move(v), p, h.data(), probs ? layer.data() : nullptr);
    std::vector<char> present(static_cast<size_t>(M));
    for (int64_t i = 0; i < N; ++i) {
      for (int64_t a = 0; a < M; ++a) present[a] = h[i * M + a] > 0.5 / static_cast<double>(N);
      y[i] = pair_completes(tokens[i], present, M) ? 1.0 : 0.0;
      if (stats) stats->row(1.0 / static_cast<double>(N), 0.0);
    }
    if (probs) probs->push_back(std::move(layer));
  }
  std::vector<std::pair<std::string, double>> sizes() const override {
    return {{"m", static_cast<double>(m_seen_.load())}, {"heads", 1}, {"layers", 1}};
  }
  void weights(ModelTensors&) const override {}

 private:
  MatchLayout layout_;
  mutable std::atomic<int64_t> m_seen_{0};
};

// Fetches, for every token i, the circle point of token target[i] (−1: none) and decodes it.
std::vector<int64_t> fetch_tokens(const std::vector<double>& U, int64_t m_prime,
                                  const std::vector<int64_t>& target,
                                  const std::vector<double>& circle, int64_t M, const Params& model,
                                  const Precision& p, std::vector<LayerProbs>* probs,
                                  ConstructionStats* stats) {
  const int64_t N = static_cast<int64_t>(target.size());
  std::vector<double> out(static_cast<size_t>(2 * N));
  LayerProbs layer;
  match_retrieve(U, m_prime, target, circle, M, model, p, out.data(), probs ? &layer : nullptr,
                 stats);
  if (probs) probs->push_back(std::move(layer));
  std::vector<int64_t> got(static_cast<size_t>(N), -1);
  for (int64_t i = 0; i < N; ++i)
    if (target[i] >= 0) got[i] = match_circle_decode(out[2 * i], out[2 * i + 1], M);
  return got;
}

class LocalMatch3 final : public Construction {
 public:
  explicit LocalMatch3(const ConstructionSetup& s)
      : layout_(s.shape, 0, "local_match3"),
        model_(s.model),
        w_(s.model.get_int("window")),
        m_prime_(even_m_prime(s.model, "local_match3")),
        U_(position_codes_rotational(layout_.N(), m_prime_, s.seed, "construction.frequencies")) {}

  void forward(const double* x, const SequenceContext& ctx, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), M = ctx.M;
    ATTN_CHECK(ctx.window == 0 || ctx.window == w_,
               "construction local_match3: model.window = " + std::to_string(w_) +
                   " but the data's task.w = " + std::to_string(ctx.window) +
                   "; set model.window = " + std::to_string(ctx.window));
    const auto tokens = layout_.decode(x, M);
    const auto circle = circle_points(tokens, M, 1.0);
    // window[i] collects the fetched tokens of i's in-range offsets.
    std::vector<std::vector<int64_t>> window(static_cast<size_t>(N));
    for (int64_t delta = -w_; delta <= w_; ++delta) {
      std::vector<int64_t> target(static_cast<size_t>(N));
      for (int64_t i = 0; i < N; ++i) target[i] = ((i + delta) % N + N) % N;  // Q_δ u_i = u_{i+δ}
      const auto got = fetch_tokens(U_, m_prime_, target, circle, M, model_, p, probs, stats);
      for (int64_t i = 0; i < N; ++i)
        if (i + delta >= 0 && i + delta < N) window[i].push_back(got[i]);
    }
    std::vector<char> present(static_cast<size_t>(M));
    for (int64_t i = 0; i < N; ++i) {
      std::fill(present.begin(), present.end(), 0);
      for (int64_t t : window[i]) present[t] = 1;
      y[i] = pair_completes(tokens[i], present, M) ? 1.0 : 0.0;
    }
  }
  std::vector<std::pair<std::string, double>> sizes() const override {
    return {{"m", static_cast<double>(2 + m_prime_)}, {"m_prime", static_cast<double>(m_prime_)},
            {"heads", static_cast<double>(2 * w_ + 1)}, {"layers", 1}};
  }
  void weights(ModelTensors& out) const override { out.add("codes", {layout_.N(), m_prime_}, U_); }

 private:
  MatchLayout layout_;
  Params model_;  // a copy: the construction does not depend on its owner's lifetime
  int64_t w_, m_prime_;
  std::vector<double> U_;
};

class AdjacentMatch3 final : public Construction {
 public:
  explicit AdjacentMatch3(const ConstructionSetup& s)
      : layout_(s.shape, 0, "adjacent_match3"),
        model_(s.model),
        temp_(s.model),
        m_prime_(even_m_prime(s.model, "adjacent_match3")),
        U_(position_codes_rotational(layout_.N(), m_prime_, s.seed, "construction.frequencies")) {}

  void forward(const double* x, const SequenceContext& ctx, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), M = ctx.M;
    const auto tokens = layout_.decode(x, M);
    std::vector<int64_t> target(static_cast<size_t>(N));
    for (int64_t j = 0; j < N; ++j) target[j] = j + 1 < N ? j + 1 : -1;
    const auto next = fetch_tokens(U_, m_prime_, target, circle_points(tokens, M, 1.0), M, model_,
                                   p, probs, stats);
    // Layer 2: the Match2 head between x_i and s_j = x_j + x_{j+1} (token N−1 has none).
    std::vector<int64_t> sums(static_cast<size_t>(N), -1);
    for (int64_t j = 0; j < N; ++j)
      if (next[j] >= 0) sums[j] = (tokens[j] + next[j]) % M;
    match2_head(tokens, sums, M, temp_.beta(static_cast<double>(N), match_gap(M)), p, y, probs,
                stats);
  }
  std::vector<std::pair<std::string, double>> sizes() const override {
    return {{"m", static_cast<double>(std::max<int64_t>(2 + m_prime_, 4))},
            {"m_prime", static_cast<double>(m_prime_)}, {"heads", 1}, {"layers", 2}};
  }
  void weights(ModelTensors& out) const override { out.add("codes", {layout_.N(), m_prime_}, U_); }

 private:
  MatchLayout layout_;
  Params model_;  // a copy: the construction does not depend on its owner's lifetime
  MatchTemperature temp_;
  int64_t m_prime_;
  std::vector<double> U_;
};

class PointerMatch3 final : public Construction {
 public:
  explicit PointerMatch3(const ConstructionSetup& s)
      : layout_(s.shape, s.shape.T, "pointer_match3"),
        model_(s.model),
        m_prime_(even_m_prime(s.model, "pointer_match3")),
        U_(position_codes_rotational(layout_.N(), m_prime_, s.seed, "construction.frequencies")) {}

  void forward(const double* x, const SequenceContext& ctx, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t N = layout_.N(), M = ctx.M, td = layout_.token_dim();
    const auto tokens = layout_.decode(x, M);
    std::vector<std::vector<int64_t>> pointers(static_cast<size_t>(N));
    int64_t s = 0;
    for (int64_t i = 0; i < N; ++i) {
      for (int64_t j = 0; j < N; ++j)
        if (x[i * layout_.d_in() + td + j] > 0.5) pointers[i].push_back(j);
      s = std::max<int64_t>(s, static_cast<int64_t>(pointers[i].size()));
    }
    s_seen_ = s;
    const auto circle = circle_points(tokens, M, 1.0);
    std::vector<std::vector<int64_t>> fetched(static_cast<size_t>(N));
    for (int64_t h = 0; h < s; ++h) {  // head h fetches the h-th pointer of every token
      std::vector<int64_t> target(static_cast<size_t>(N), -1);
      for (int64_t i = 0; i < N; ++i)
        if (h < static_cast<int64_t>(pointers[i].size())) target[i] = pointers[i][h];
      const auto got = fetch_tokens(U_, m_prime_, target, circle, M, model_, p, probs, stats);
      for (int64_t i = 0; i < N; ++i)
        if (got[i] >= 0) fetched[i].push_back(got[i]);
    }
    std::vector<char> present(static_cast<size_t>(M));
    for (int64_t i = 0; i < N; ++i) {
      std::fill(present.begin(), present.end(), 0);
      for (int64_t t : fetched[i]) present[t] = 1;
      y[i] = pair_completes(tokens[i], present, M) ? 1.0 : 0.0;
    }
  }
  std::vector<std::pair<std::string, double>> sizes() const override {
    const double s = static_cast<double>(s_seen_.load());
    return {{"m", 2 + (s + 1) * static_cast<double>(m_prime_)},
            {"m_prime", static_cast<double>(m_prime_)}, {"heads", s}, {"layers", 1}};
  }
  void weights(ModelTensors& out) const override { out.add("codes", {layout_.N(), m_prime_}, U_); }

 private:
  MatchLayout layout_;
  Params model_;  // a copy: the construction does not depend on its owner's lifetime
  int64_t m_prime_;
  std::vector<double> U_;
  mutable std::atomic<int64_t> s_seen_{0};
};

}  // namespace

std::unique_ptr<Construction> smallm_match3_make(const ConstructionSetup& s) {
  return std::make_unique<SmallMMatch3>(s);
}
std::unique_ptr<Construction> local_match3_make(const ConstructionSetup& s) {
  return std::make_unique<LocalMatch3>(s);
}
std::unique_ptr<Construction> adjacent_match3_make(const ConstructionSetup& s) {
  return std::make_unique<AdjacentMatch3>(s);
}
std::unique_ptr<Construction> pointer_match3_make(const ConstructionSetup& s) {
  return std::make_unique<PointerMatch3>(s);
}

}  // namespace attn
