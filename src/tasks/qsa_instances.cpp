// qsa instances: the random distribution and the hard instances of the lower-bound proofs.
#include "tasks/qsa_instances.h"

#include "core/error.h"
#include "core/rng.h"

namespace attn {
namespace {

// z_i on the sphere or in the ball, for positions lo .. hi-1.
void draw_z(const QsaConfig& c, Rng& rng, double* z, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    if (c.ball)
      rng_ball(rng, z + i * c.d_out, c.d_out);
    else
      rng_sphere(rng, z + i * c.d_out, c.d_out);
  }
}

// A uniform q-subset for position i (without i when exclude_self), sorted.
void draw_set(const QsaConfig& c, Rng& rng, int64_t i, int64_t* set) {
  if (c.exclude_self)
    rng_subset_excluding(rng, c.N, c.q, i, set);
  else
    rng_subset(rng, c.N, c.q, set);
}

// z = s·e₁ (s = ±1).
void set_e1(const QsaConfig& c, double* z, int64_t i, double s) {
  for (int64_t k = 0; k < c.d_out; ++k) z[i * c.d_out + k] = 0.0;
  z[i * c.d_out] = s;
}

std::string sizes(const QsaConfig& c) {
  return " (task.N = " + std::to_string(c.N) + ", task.q = " + std::to_string(c.q) + ")";
}

}  // namespace

void qsa_instances_check(const QsaConfig& c) {
  if (c.instances == QsaInstances::disj)
    ATTN_CHECK(c.N >= 2 * c.q + 1, "task.instances = disj needs task.N >= 2 task.q + 1" + sizes(c) +
                                       "; raise task.N or lower task.q");
  if (c.instances == QsaInstances::index)
    ATTN_CHECK(c.q == 1, "task.instances = index needs task.q = 1" + sizes(c) + "; set task.q = 1");
  if (c.instances == QsaInstances::rank_pair) {
    ATTN_CHECK(c.q <= c.N / 2, "task.instances = rank_pair needs task.q <= task.N / 2" + sizes(c) +
                                   "; raise task.N or lower task.q");
    ATTN_CHECK(!c.exclude_self,
               "task.instances = rank_pair puts the fixed set F in y_i for i in F, so it needs "
               "task.exclude_self = false");
  }
}

void qsa_draw_random(const QsaConfig& c, uint64_t seed, uint64_t index, double* z, int64_t* sets) {
  Rng z_rng(seed, "qsa.z", index);
  Rng set_rng(seed, "qsa.sets", index);
  draw_z(c, z_rng, z, 0, c.N);
  for (int64_t i = 0; i < c.N; ++i) draw_set(c, set_rng, i, sets + i * c.q);
}

void qsa_draw_disj(const QsaConfig& c, uint64_t seed, uint64_t index, double* z, int64_t* sets,
                   int64_t* disjoint) {
  const int64_t q = c.q, query = 2 * q;
  Rng ab_rng(seed, "qsa.disj.ab", index);
  const bool want_disjoint = ab_rng.uniform() < c.disj_fraction;
  std::vector<int> a(q), b(q);
  auto draw_bits = [&](std::vector<int>& v) {
    for (int64_t t = 0; t < q; ++t) v[t] = static_cast<int>(ab_rng.next_u32() & 1u);
  };
  auto any = [&](const std::vector<int>& v, const std::vector<int>* mask) {
    for (int64_t t = 0; t < q; ++t)
      if (v[t] && (!mask || (*mask)[t])) return true;
    return false;
  };
  if (want_disjoint) {
    // a uniform; b uniform among the strings disjoint from a.
    draw_bits(a);
    draw_bits(b);
    for (int64_t t = 0; t < q; ++t) b[t] &= 1 - a[t];
  } else {
    // a uniform non-zero; b uniform among the strings meeting a (rejection, ≤ 2 tries on average).
    do draw_bits(a);
    while (!any(a, nullptr));
    do draw_bits(b);
    while (!any(b, &a));
  }
  *disjoint = want_disjoint ? 1 : 0;

  for (int64_t i = 0; i < c.N; ++i) set_e1(c, z, i, -1.0);
  for (int64_t t = 0; t < q; ++t)
    if (b[t]) set_e1(c, z, 2 * t + 1, 1.0);
  Rng set_rng(seed, "qsa.disj.sets", index);
  for (int64_t i = 0; i < c.N; ++i) {
    if (i == query)
      for (int64_t t = 0; t < q; ++t) sets[i * q + t] = 2 * t + a[t];  // increasing in t
    else
      draw_set(c, set_rng, i, sets + i * q);
  }
}

void qsa_draw_index(const QsaConfig& c, uint64_t seed, uint64_t index, double* z, int64_t* sets) {
  const int64_t h = c.N / 2;
  Rng bit_rng(seed, "qsa.index.bits", index);
  for (int64_t j = 0; j < h; ++j) set_e1(c, z, j, (bit_rng.next_u32() & 1u) ? 1.0 : -1.0);
  Rng z_rng(seed, "qsa.index.z", index);
  draw_z(c, z_rng, z, h, c.N);
  Rng set_rng(seed, "qsa.index.sets", index);
  for (int64_t i = 0; i < c.N; ++i) {
    if (i < h)
      draw_set(c, set_rng, i, sets + i);  // q = 1
    else
      sets[i] = static_cast<int64_t>(set_rng.uniform_int(static_cast<uint64_t>(h)));
  }
}

std::vector<int64_t> qsa_rank_pair_fixed_set(const QsaConfig& c, uint64_t seed) {
  std::vector<int64_t> F(static_cast<size_t>(c.q - 1));
  Rng rng(seed, "qsa.rank_pair.F", 0);
  rng_subset(rng, c.N / 2, c.q - 1, F.data());
  return F;
}

void qsa_draw_rank_pair(const QsaConfig& c, uint64_t seed, const std::vector<int64_t>& F,
                        uint64_t index, double* z, int64_t* sets) {
  const int64_t h = c.N / 2, q = c.q;
  Rng z_rng(seed, "qsa.rank_pair.z", index);
  draw_z(c, z_rng, z, 0, c.N);
  Rng set_rng(seed, "qsa.rank_pair.sets", index);
  for (int64_t i = 0; i < c.N; ++i) {
    int64_t* set = sets + i * q;
    if (i < h) {
      // F ⊆ [h] lies below h + i, so F then h + i is sorted.
      for (int64_t t = 0; t + 1 < q; ++t) set[t] = F[t];
      set[q - 1] = h + i;
    } else {
      draw_set(c, set_rng, i, set);
    }
  }
}

}  // namespace attn
