// The k-hop circuit (hop_circuit.h): causal heads with position codes, the layer-1 heads, the
// match head and the pointer-doubling lookups.
#include "constructions/hop_circuit.h"

#include <algorithm>
#include <cmath>

#include "constructions/attend.h"
#include "core/error.h"

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
    std::vector<double> out(static_cast<size_t>(n * dv));
    LayerProbs map(static_cast<size_t>(n * n));
    construction_attend<double>(n, dk, dv, std::move(q), std::move(k), std::move(v), p, out.data(),
                                map.data(), /*causal=*/true);
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
      r.ptr[i] = pointer(o_i[0]);
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

  // Rightmost-match head: row t attends to the rightmost u <= t whose key symbol vector
  // (ksym, N × A, soft one-hot) has qsym[t] (< 0: none), or to position 0 if none; it reads
  // v (N × dv). Query β(2·onehot(qsym), 1.5, 1), key (ksym, [u = 0], u/N): a match scores
  // ≈ 2 + u/N (the rightmost wins by 1/N), position 0 1.5, others <= 1 + the keys' leak.
  std::vector<double> rightmost(const std::vector<double>& ksym, const std::vector<int64_t>& qsym,
                                double g, std::vector<double> v, int64_t dv) const {
    const int64_t A = s.A, dk = A + 2;
    const double b = beta(g);
    std::vector<double> q(static_cast<size_t>(N() * dk)), k(static_cast<size_t>(N() * dk));
    for (int64_t t = 0; t < N(); ++t) {
      if (qsym[t] >= 0) q[t * dk + qsym[t]] = 2 * b;
      q[t * dk + A] = 1.5 * b;
      q[t * dk + A + 1] = b;
      std::copy(ksym.begin() + t * A, ksym.begin() + (t + 1) * A, k.begin() + t * dk);
      k[t * dk + A] = t == 0 ? 1.0 : 0.0;
      k[t * dk + A + 1] = pos(t);
    }
    return head(dk, dv, std::move(q), std::move(k), std::move(v), g, b);
  }

  // Layer 2, match head: keys the copied previous symbols, query s_t: row t reads (v, s_v) at
  // v = find(t). The layer-1 leak (<= 1/(8N)) moves a score by <= 1/(4N), so g = 1/(2N).
  Slot match(const std::vector<double>& prev) const {
    Slot self{std::vector<int64_t>(N()), std::vector<int64_t>(N())};
    for (int64_t t = 0; t < N(); ++t) self.ptr[t] = t, self.sym[t] = t == 0 ? s.A : s.sym[t];
    return slot_read(
        rightmost(prev, s.sym, 0.5 / static_cast<double>(N()), slot_values(self), s.A + 2));
  }

  // Layer 1, count head: row t attends evenly to position 0 and to every u <= t with
  // s_u = s_t (key one-hot, query β·onehot(s_t) and β at position 0's flag) and reads 1 at
  // position 0: 1/(c_t + 1), c_t = the occurrences of s_t in [1, t] (0 at t = 0). The matches'
  // scores are equal at any bits, so only the leak (< 1/(8N) of a weight) blurs 1/out − 1.
  std::vector<int64_t> occurrences() const {
    const int64_t A = s.A, dk = A + 1;
    const double g = 1.0, b = beta(g);
    std::vector<double> q(static_cast<size_t>(N() * dk)), k(static_cast<size_t>(N() * dk)),
        v(static_cast<size_t>(N()));
    for (int64_t t = 0; t < N(); ++t) {
      q[t * dk + A] = b;
      if (t > 0) q[t * dk + s.sym[t]] = b, k[t * dk + s.sym[t]] = 1.0;
    }
    k[A] = 1.0;
    v[0] = 1.0;
    const auto out = head(dk, 1, std::move(q), std::move(k), std::move(v), g, b);
    std::vector<int64_t> c(static_cast<size_t>(N()));
    for (int64_t t = 1; t < N(); ++t)
      c[t] = std::clamp<int64_t>(std::llround(1.0 / out[t] - 1.0), 1, N());
    return c;
  }

  // Layer 1, one head per symbol a: row t reads 1 + the rightmost u in [1, t] with s_u = a
  // (0 if none): after[a][t]. Keys are the input's exact one-hots, so g = 1/N.
  std::vector<std::vector<int64_t>> last_after() const {
    const int64_t A = s.A;
    std::vector<double> ksym(static_cast<size_t>(N() * A)), v(static_cast<size_t>(N()));
    for (int64_t u = 1; u < N(); ++u) ksym[u * A + s.sym[u]] = 1.0, v[u] = pos(u + 1);
    std::vector<std::vector<int64_t>> after(static_cast<size_t>(A));
    for (int64_t a = 0; a < A; ++a) {
      const auto out = rightmost(ksym, std::vector<int64_t>(static_cast<size_t>(N()), a),
                                 1.0 / static_cast<double>(N()), v, 1);
      for (int64_t t = 0; t < N(); ++t) after[a].push_back(pointer(out[t]));
    }
    return after;
  }

  // Layer 2, occurrence head: row t attends to the previous occurrence u* of s_t (the u with
  // s_u = s_t and c_u = c_t − 1; position 0 when c_t = 1) and reads after[·][u*], so
  // find(find(t)) = after[s_{find(t)}][u*] (u* = find(t) − 1 and s_{find(t)} ≠ s_{u*}). Query
  // β(2·onehot(s_t), 2x/N, −2) with x = c_t − 1, key (onehot(s_u) — all ones at u = 0 —,
  // c_u/N, (c_u/N)²/2): the intended key scores 2 + x²/N², every other at least 1/N² less.
  // The values' extra column (1 at u = 0) pins their scale to 1 whatever the data.
  std::vector<std::vector<int64_t>> previous_occurrence(
      const std::vector<int64_t>& cnt, const std::vector<std::vector<int64_t>>& after) const {
    const int64_t A = s.A, dk = A + 2, dv = A + 1;
    const double n = static_cast<double>(N()), g = 1.0 / (n * n), b = beta(g);
    std::vector<double> q(static_cast<size_t>(N() * dk)), k(static_cast<size_t>(N() * dk)),
        v(static_cast<size_t>(N() * dv));
    for (int64_t u = 0; u < N(); ++u) {
      if (u == 0) std::fill(k.begin(), k.begin() + A, 1.0);
      if (u > 0) {
        k[u * dk + s.sym[u]] = 1.0;
        q[u * dk + s.sym[u]] = 2 * b;
        q[u * dk + A] = 2 * b * static_cast<double>(cnt[u] - 1) / n;
        q[u * dk + A + 1] = -2 * b;
      }
      k[u * dk + A] = static_cast<double>(cnt[u]) / n;
      k[u * dk + A + 1] = k[u * dk + A] * k[u * dk + A] / 2;
      for (int64_t a = 0; a < A; ++a) v[u * dv + a] = pos(after[a][u]);
      v[u * dv + A] = u == 0 ? 1.0 : 0.0;
    }
    const auto out = head(dk, dv, std::move(q), std::move(k), std::move(v), g, b);
    std::vector<std::vector<int64_t>> w(static_cast<size_t>(A));
    for (int64_t a = 0; a < A; ++a)
      for (int64_t t = 0; t < N(); ++t) w[a].push_back(pointer(out[t * dv + a]));
    return w;
  }

  int64_t pointer(double code) const {
    return std::clamp<int64_t>(std::llround(code * static_cast<double>(N())), 0, N() - 1);
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
  return (int64_t{1} << (layers - 1)) - 1;
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
  const bool deep = o.layers >= 3;  // needs find∘find after layer 2
  // Layer 1.
  const auto prev = c.previous_token();
  const auto kk = o.use_k ? c.broadcast_k() : std::vector<int64_t>(static_cast<size_t>(N), 1);
  std::vector<int64_t> cnt;
  std::vector<std::vector<int64_t>> after;
  if (deep) cnt = c.occurrences(), after = c.last_after();
  // hop_0 (the read-out of L = 1): the symbol itself, "none" at position 0.
  Slot S{std::vector<int64_t>(N), std::vector<int64_t>(N)};  // (P, R) per position
  for (int64_t t = 0; t < N; ++t) S.sym[t] = t == 0 ? A : s.sym[t];
  if (o.layers >= 2) {  // layer 2: R = hop_(k mod 2), P = find∘find
    const Slot m = c.match(prev);
    std::vector<std::vector<int64_t>> w;
    if (deep) w = c.previous_occurrence(cnt, after);
    for (int64_t t = 1; t < N; ++t) {
      if (kk[t] & 1) S.sym[t] = m.sym[t];
      if (deep) S.ptr[t] = m.sym[t] == A ? 0 : w[m.sym[t]][t];
    }
  }
  for (int64_t l = 3; l <= o.layers; ++l) {  // P = find^(2^(l−2)) → find^(2^(l−1))
    const Slot read = c.lookup(S.ptr, S);
    for (int64_t t = 1; t < N; ++t) {
      if ((kk[t] >> (l - 2)) & 1) S.sym[t] = read.sym[t];
      S.ptr[t] = read.ptr[t];
    }
  }
  for (int64_t t = 0; t < N; ++t) cls[t] = t == 0 ? A : S.sym[t] == A ? A + 1 : S.sym[t];
}

}  // namespace attn
