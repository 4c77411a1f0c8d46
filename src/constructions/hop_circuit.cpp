// The k-hop circuit (hop_circuit.h): causal heads with position codes, the layer-1 heads, the
// match head and the pointer-doubling lookups.
#include "constructions/hop_circuit.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "ops/attention.h"
#include "ops/quantize.h"

namespace attn {
namespace {

// Per position: a pointer (0 = undefined) and the symbol at it (A = none).
struct Slot {
  std::vector<int64_t> ptr, sym;
};

struct Circuit {
  const HopSequence& s;
  const HopCircuitOptions& o;
  const Precision& p;
  std::vector<LayerProbs>* probs;
  ConstructionStats* stats;

  int64_t N() const { return s.N; }
  double pos(int64_t u) const { return static_cast<double>(u) / static_cast<double>(s.N); }

  // β for a head whose intended score exceeds every other by g (in q·k units before β): the
  // leak rule β·g = factor·ln(8N²) keeps the mass off the intended key below 1/(8N).
  double beta(double g) const {
    const double n = static_cast<double>(s.N);
    return (o.beta_fixed > 0 ? o.beta_fixed : o.beta_factor * std::log(8.0 * n * n)) / g;
  }

  // One causal softmax head: out (N, dv). q already carries β.
  std::vector<double> head(int64_t dk, int64_t dv, std::vector<double> q, std::vector<double> k,
                           std::vector<double> v, double g, double b) const {
    const int64_t n = N();
    quantize_fixed_point(q.data(), n * dk, p.bits);
    quantize_fixed_point(k.data(), n * dk, p.bits);
    quantize_fixed_point(v.data(), n * dv, p.bits);
    AttentionShape shape{1, n, 1, dk, dv, false};
    shape.causal = true;
    if (p.bits > 0 && p.bits_scores) shape.score_bits = p.bits;
    std::vector<double> out(static_cast<size_t>(n * dv));
    LayerProbs map(static_cast<size_t>(n * n));
    attention_forward<double>(out.data(), map.data(), q.data(), k.data(), v.data(), 1.0, shape);
    if (probs) probs->push_back(std::move(map));
    if (stats)
      for (int64_t i = 0; i < n; ++i) stats->row(g, b);
    return out;
  }

  // Keys (u/N, (u/N)²/2) and queries β(2x/N, −2): score β(x² − (u − x)²)/N², largest at
  // u = x and 1/N² above its neighbours (the causal mask leaves u <= row). The largest |entry|
  // of either tensor depends on N alone (2β; (N−1)/N), so the p-bit scales do too and a row's
  // rounding never depends on later positions.
  std::vector<double> position_keys() const {
    std::vector<double> k(static_cast<size_t>(2 * N()));
    for (int64_t u = 0; u < N(); ++u) k[2 * u] = pos(u), k[2 * u + 1] = pos(u) * pos(u) / 2;
    return k;
  }
  std::vector<double> position_queries(const std::vector<int64_t>& target, double b) const {
    std::vector<double> q(static_cast<size_t>(2 * N()));
    for (int64_t i = 0; i < N(); ++i) q[2 * i] = 2 * b * pos(target[i]), q[2 * i + 1] = -2 * b;
    return q;
  }

  // Values (ptr/N, one-hot of sym over A + 1) of a slot; the read-out rounds them back.
  std::vector<double> slot_values(const Slot& src) const {
    const int64_t dv = s.A + 2;
    std::vector<double> v(static_cast<size_t>(N() * dv));
    for (int64_t u = 0; u < N(); ++u) {
      v[u * dv] = pos(src.ptr[u]);
      v[u * dv + 1 + src.sym[u]] = 1.0;
    }
    return v;
  }
  Slot slot_read(const std::vector<double>& out) const {
    const int64_t dv = s.A + 2;
    Slot r{std::vector<int64_t>(N()), std::vector<int64_t>(N())};
    for (int64_t i = 0; i < N(); ++i) {
      const double* o_i = out.data() + i * dv;
      r.ptr[i] = std::clamp<int64_t>(std::llround(o_i[0] * static_cast<double>(N())), 0, N() - 1);
      r.sym[i] = std::max_element(o_i + 1, o_i + dv) - (o_i + 1);
    }
    return r;
  }

  // Layer 1, previous-token head: row v gets ≈ the one-hot (A) of s_{v−1} (zero for v <= 1).
  std::vector<double> previous_token() const {
    const int64_t A = s.A;
    std::vector<int64_t> target(static_cast<size_t>(N()));
    for (int64_t v = 0; v < N(); ++v) target[v] = v - 1;
    const double g = 1.0 / static_cast<double>(N() * N()), b = beta(g);
    std::vector<double> val(static_cast<size_t>(N() * A));
    for (int64_t u = 1; u < N(); ++u) val[u * A + s.sym[u]] = 1.0;
    return head(2, A, position_queries(target, b), position_keys(), std::move(val), g, b);
  }

  // Layer 1, k head: every row attends to position 0 (key 1 there, 0 elsewhere) and reads k's
  // binary digits; each row thresholds its own copy.
  std::vector<int64_t> broadcast_k() const {
    const int64_t B = o.k_bits;
    const double g = 1.0, b = beta(g);
    std::vector<double> q(static_cast<size_t>(N()), b), k(static_cast<size_t>(N())),
        v(static_cast<size_t>(N() * B));
    k[0] = 1.0;
    for (int64_t j = 0; j < B; ++j) v[j] = static_cast<double>((s.k >> j) & 1);
    const auto out = head(1, B, std::move(q), std::move(k), std::move(v), g, b);
    std::vector<int64_t> kk(static_cast<size_t>(N()));
    for (int64_t i = 0; i < N(); ++i)
      for (int64_t j = 0; j < B; ++j) kk[i] |= static_cast<int64_t>(out[i * B + j] > 0.5) << j;
    return kk;
  }

  // Layer 2, match head: query β(2·onehot(s_t), 1.5, 1), key (prev_v, [v = 0], v/N). A match
  // scores ≈ 2 + v/N (the rightmost wins by 1/N), position 0 1.5, others <= 1 + leak. The
  // layer-1 leak (<= 1/(8N)) moves a score by <= 1/(4N), so g = 1/(2N) is the safe gap.
  Slot match(const std::vector<double>& prev) const {
    const int64_t A = s.A, dk = A + 2;
    const double g = 0.5 / static_cast<double>(N()), b = beta(g);
    std::vector<double> q(static_cast<size_t>(N() * dk)), k(static_cast<size_t>(N() * dk));
    Slot self{std::vector<int64_t>(N()), std::vector<int64_t>(N())};
    for (int64_t t = 0; t < N(); ++t) {
      if (t > 0) q[t * dk + s.sym[t]] = 2 * b;
      q[t * dk + A] = 1.5 * b;
      q[t * dk + A + 1] = b;
      std::copy(prev.begin() + t * A, prev.begin() + (t + 1) * A, k.begin() + t * dk);
      k[t * dk + A] = t == 0 ? 1.0 : 0.0;
      k[t * dk + A + 1] = pos(t);
      self.ptr[t] = t;
      self.sym[t] = t == 0 ? A : s.sym[t];
    }
    return slot_read(head(dk, A + 2, std::move(q), std::move(k), slot_values(self), g, b));
  }

  // A doubling-layer head: row i reads slot src at position target[i].
  Slot lookup(const std::vector<int64_t>& target, const Slot& src) const {
    const double g = 1.0 / static_cast<double>(N() * N()), b = beta(g);
    return slot_read(
        head(2, s.A + 2, position_queries(target, b), position_keys(), slot_values(src), g, b));
  }
};

}  // namespace

int64_t hop_circuit_reach(int64_t layers) {
  ATTN_ASSERT(layers >= 1 && layers <= 62);
  return layers == 1 ? 0 : int64_t{1} << (layers - 2);
}

int64_t hop_circuit_layers_for(int64_t k) {
  int64_t L = 1;
  while (hop_circuit_reach(L) < k) ++L;
  return L;
}

void hop_circuit_forward(const HopSequence& s, const HopCircuitOptions& o, const Precision& p,
                         int64_t* cls, std::vector<LayerProbs>* probs, ConstructionStats* stats) {
  ATTN_ASSERT(o.layers >= 1 && o.layers <= 62 && (o.use_k || o.layers == 2));
  const Circuit c{s, o, p, probs, stats};
  const int64_t N = s.N, A = s.A;
  const auto prev = c.previous_token();
  const auto kk = o.use_k ? c.broadcast_k() : std::vector<int64_t>(static_cast<size_t>(N), 1);
  Slot R{std::vector<int64_t>(N), std::vector<int64_t>(N)};  // R_0 = identity
  for (int64_t t = 0; t < N; ++t) R.ptr[t] = t, R.sym[t] = t == 0 ? A : s.sym[t];
  Slot P = R;
  if (o.layers >= 2) P = c.match(prev);
  for (int64_t j = 1; j + 2 <= o.layers; ++j) {  // layer 2 + j
    Slot next = c.lookup(P.ptr, P);
    if (o.use_k) {
      const Slot read = c.lookup(R.ptr, P);
      for (int64_t i = 0; i < N; ++i)
        if ((kk[i] >> (j - 1)) & 1) R.ptr[i] = read.ptr[i], R.sym[i] = read.sym[i];
    }
    P = std::move(next);
  }
  const int64_t J = o.layers - 2;
  for (int64_t t = 0; t < N; ++t) {
    int64_t sym = R.sym[t];  // L = 1: hop_0
    if (J >= 0) {
      const int64_t low = J >= 62 ? kk[t] : kk[t] & ((int64_t{1} << J) - 1);
      if (low == 0 && kk[t] != 0) sym = P.sym[t];
    }
    cls[t] = t == 0 ? A : sym == A ? A + 1 : sym;
  }
}

}  // namespace attn
