// Tests of third-order attention (ops/third_order_attention.h): fast path against the naive
// reference (double and float), softmax over the N² pairs and its mask, permutation
// equivariance, closed forms at scale = 0 and for a single dominant pair, accumulation
// semantics of the backward. Its gradient-check rows run in test_ops_attention.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/third_order_attention.h"
#include "attention_test_helpers.h"

namespace attn {
namespace {
using namespace test_attention;

struct TriData {
  ThirdOrderShape s;
  std::vector<double> q, k1, k2, v1, v2;
  size_t n_out() const { return static_cast<size_t>(s.B * s.N * s.H * s.dv); }
  size_t n_probs() const { return static_cast<size_t>(s.B * s.H * s.N * s.N * s.N); }
};

TriData tri_data(ThirdOrderShape s, uint64_t seed) {
  const int64_t nk = s.B * s.N * s.H * s.dk, nv = s.B * s.N * s.H * s.dv;
  return {s,
          random_vec<double>(nk, seed, "test.q"),
          random_vec<double>(nk, seed, "test.k1"),
          random_vec<double>(nk, seed, "test.k2"),
          random_vec<double>(nv, seed, "test.v1"),
          random_vec<double>(nv, seed, "test.v2")};
}

template <class T>
void forward(const TriData& d, T scale, std::vector<T>& out, std::vector<T>& probs,
             bool ref = false) {
  const auto q = cast<T>(d.q), k1 = cast<T>(d.k1), k2 = cast<T>(d.k2), v1 = cast<T>(d.v1),
             v2 = cast<T>(d.v2);
  out.assign(d.n_out(), T(0));
  probs.assign(d.n_probs(), T(0));
  auto f = ref ? third_order_forward_ref<T> : third_order_forward<T>;
  f(out.data(), probs.data(), q.data(), k1.data(), k2.data(), v1.data(), v2.data(), scale, d.s);
}

const std::vector<ThirdOrderShape>
    kTriShapes = {{1, 1, 1, 1, 1, false}, {1, 3, 1, 1, 1, true},  {1, 5, 1, 3, 2, false},
                  {2, 7, 3, 5, 3, true},  {3, 6, 2, 4, 7, false}, {1, 11, 2, 8, 5, true},
                  {2, 29, 2, 3, 2, true}};  // N = 29: the fast path splits the queries into blocks
// Causal (…, exclude_self, score_bits, causal): blocks of ⌈N/4⌉ queries.
const std::vector<ThirdOrderShape> kCausalTriShapes = {{1, 1, 1, 1, 1, false, 0, true},
                                                       {2, 7, 3, 5, 3, false, 0, true},
                                                       {2, 29, 2, 3, 2, false, 0, true}};

template <class T>
void check_fast_vs_ref(double tol) {
  std::vector<ThirdOrderShape> shapes = kTriShapes;
  shapes.insert(shapes.end(), kCausalTriShapes.begin(), kCausalTriShapes.end());
  for (const auto& s : shapes) {
    TriData d = tri_data(s, 21);
    std::vector<T> out, probs, out_r, probs_r;
    forward<T>(d, T(0.7), out, probs);
    forward<T>(d, T(0.7), out_r, probs_r, true);
    EXPECT_LE(rel_diff(out, out_r), tol) << "N=" << s.N << " H=" << s.H;
    EXPECT_LE(rel_diff(probs, probs_r), tol) << "N=" << s.N << " H=" << s.H;
    // Without a probs buffer the forward gives the same output.
    const auto q = cast<T>(d.q), k1 = cast<T>(d.k1), k2 = cast<T>(d.k2), v1 = cast<T>(d.v1),
               v2 = cast<T>(d.v2);
    std::vector<T> out_np(d.n_out());
    third_order_forward<T>(out_np.data(), nullptr, q.data(), k1.data(), k2.data(), v1.data(),
                           v2.data(), T(0.7), s);
    EXPECT_EQ(out_np, out);
  }
}

TEST(OpsAttentionThirdOrder, FastMatchesRefDouble) { check_fast_vs_ref<double>(1e-12); }
TEST(OpsAttentionThirdOrder, FastMatchesRefFloat) { check_fast_vs_ref<float>(1e-5); }

TEST(OpsAttentionThirdOrder, ProbsSumToOneAndMaskIsExact) {
  for (bool excl : {false, true}) {
    ThirdOrderShape s{2, 6, 2, 3, 2, excl};
    TriData d = tri_data(s, 4);
    std::vector<double> out, probs;
    forward<double>(d, 1.7, out, probs);
    const int64_t N = s.N;
    for (int64_t r = 0; r < s.B * s.H * N; ++r) {
      const int64_t i = r % N;
      const double* p = probs.data() + r * N * N;
      double sum = 0;
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < N; ++k) {
          sum += p[j * N + k];
          if (excl && (j == i || k == i || j == k)) {
            EXPECT_EQ(p[j * N + k], 0.0);
          } else {
            EXPECT_GT(p[j * N + k], 0.0);
          }
        }
      EXPECT_NEAR(sum, 1.0, 1e-14);
    }
  }
}

TEST(OpsAttentionThirdOrder, PermutationEquivariance) {
  for (bool excl : {false, true}) {
    ThirdOrderShape s{2, 5, 2, 3, 4, excl};
    TriData d = tri_data(s, 8);
    const std::vector<int64_t> perm{2, 4, 0, 3, 1};
    std::vector<double> out, out_p, probs;
    forward<double>(d, 1.2, out, probs);
    TriData p = d;
    for (auto* x : {&p.q, &p.k1, &p.k2, &p.v1, &p.v2}) *x = permute_tokens(*x, s.B, s.N, perm);
    forward<double>(p, 1.2, out_p, probs);
    EXPECT_LE(rel_diff(out_p, permute_tokens(out, s.B, s.N, perm)), 1e-13);
  }
}

TEST(OpsAttentionThirdOrder, ScaleZeroGivesProductOfMeans) {
  for (bool excl : {false, true}) {
    ThirdOrderShape s{2, 5, 2, 3, 3, excl};
    TriData d = tri_data(s, 9);
    std::vector<double> out, probs;
    forward<double>(d, 0.0, out, probs);
    const int64_t N = s.N, H = s.H, dv = s.dv;
    auto at = [&](const std::vector<double>& x, int64_t b, int64_t t, int64_t h, int64_t c) {
      return x[((b * N + t) * H + h) * dv + c];
    };
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t c = 0; c < dv; ++c) {
            double want;
            if (!excl) {  // mean(v1) ∘ mean(v2)
              double m1 = 0, m2 = 0;
              for (int64_t j = 0; j < N; ++j)
                m1 += at(d.v1, b, j, h, c), m2 += at(d.v2, b, j, h, c);
              want = (m1 / N) * (m2 / N);
            } else {  // mean over ordered pairs j ≠ k, both ≠ i
              double sum = 0;
              for (int64_t j = 0; j < N; ++j)
                for (int64_t k = 0; k < N; ++k)
                  if (j != i && k != i && j != k)
                    sum += at(d.v1, b, j, h, c) * at(d.v2, b, k, h, c);
              want = sum / static_cast<double>((N - 1) * (N - 2));
            }
            EXPECT_NEAR(out[((b * N + i) * H + h) * dv + c], want, 1e-14);
          }
  }
}

TEST(OpsAttentionThirdOrder, HandSetDominantPair) {
  // dk = 1, N = 3: score(i; j, k) = q_i k1_j k2_k. With q = (1, 1, −1), k1 = (0, 3, 1),
  // k2 = (2, 0, −2) and a large scale, tokens 0 and 1 pick (j, k) = (1, 0) and token 2
  // picks (1, 2); out_i = v1_j ∘ v2_k.
  ThirdOrderShape s{1, 3, 1, 1, 2, false};
  TriData d{s, {1, 1, -1}, {0, 3, 1}, {2, 0, -2}, {1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}};
  std::vector<double> out, probs;
  forward<double>(d, 30.0, out, probs);
  const std::vector<double> want{21, 32, 21, 32, 33, 48};
  for (int e = 0; e < 6; ++e) EXPECT_NEAR(out[e], want[e], 1e-10);
}

TEST(OpsAttentionThirdOrder, BackwardAccumulatesAndSkipsNullBuffers) {
  ThirdOrderShape s{2, 5, 2, 3, 2, true};
  TriData d = tri_data(s, 12);
  std::vector<double> out, probs;
  const double scale = 0.8;
  forward<double>(d, scale, out, probs);
  const auto dout = random_vec<double>(static_cast<int64_t>(d.n_out()), 3, "test.dout");
  const std::vector<const std::vector<double>*> inputs{&d.q, &d.k1, &d.k2, &d.v1, &d.v2};
  auto run = [&](double init, int only) {  // only = −1: every buffer
    std::vector<std::vector<double>> g;
    for (const auto* x : inputs) g.emplace_back(x->size(), init);
    g.emplace_back(1, init);
    auto buf = [&](int t) { return (only < 0 || only == t) ? g[t].data() : nullptr; };
    third_order_backward<double>(buf(0), buf(1), buf(2), buf(3), buf(4), buf(5), dout.data(),
                                 d.q.data(), d.k1.data(), d.k2.data(), d.v1.data(), d.v2.data(),
                                 probs.data(), scale, s);
    return g;
  };
  const auto g0 = run(0.0, -1);
  const auto g1 = run(0.25, -1);
  for (size_t t = 0; t < 6; ++t)
    for (size_t e = 0; e < g0[t].size(); ++e) EXPECT_NEAR(g1[t][e], g0[t][e] + 0.25, 1e-14);
  for (int which = 0; which < 6; ++which) {
    const auto g = run(0.0, which);
    for (size_t t = 0; t < 6; ++t)
      for (size_t e = 0; e < g[t].size(); ++e)
        EXPECT_EQ(g[t][e], static_cast<int>(t) == which ? g0[t][e] : 0.0);
  }
}

TEST(OpsAttentionThirdOrder, BackwardFloatMatchesDouble) {
  ThirdOrderShape s{2, 6, 2, 4, 3, false};
  TriData d = tri_data(s, 14);
  const auto dout = random_vec<double>(static_cast<int64_t>(d.n_out()), 5, "test.dout");
  auto grads = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> out, probs;
    forward<T>(d, T(0.9), out, probs);
    const auto q = cast<T>(d.q), k1 = cast<T>(d.k1), k2 = cast<T>(d.k2), v1 = cast<T>(d.v1),
               v2 = cast<T>(d.v2), go = cast<T>(dout);
    std::vector<T> dq(q.size()), dk1(q.size()), dk2(q.size()), dv1(v1.size()), dv2(v1.size()),
        ds(1);
    third_order_backward<T>(dq.data(), dk1.data(), dk2.data(), dv1.data(), dv2.data(), ds.data(),
                            go.data(), q.data(), k1.data(), k2.data(), v1.data(), v2.data(),
                            probs.data(), T(0.9), s);
    std::vector<double> all;
    for (const auto* x : {&dq, &dk1, &dk2, &dv1, &dv2, &ds})
      all.insert(all.end(), x->begin(), x->end());
    return all;
  };
  EXPECT_LE(rel_diff(grads(0.0f), grads(0.0)), 1e-5);
}

TEST(OpsAttentionThirdOrder, BackwardDirectionalDerivativeWithQueryBlocks) {
  // N ≥ 26 makes the fast path process the queries in several blocks (the gradcheck rows use
  // small N): check <∇L, u> against a central difference of L = <dout, out> along a random
  // direction u of each input in turn.
  for (const ThirdOrderShape& s :
       {ThirdOrderShape{1, 29, 2, 3, 2, true}, ThirdOrderShape{2, 27, 1, 4, 3, false},
        ThirdOrderShape{1, 23, 2, 3, 2, false, 0, true}}) {
    TriData d = tri_data(s, 31);
    double scale = 0.6;
    std::vector<double> out, probs;
    forward<double>(d, scale, out, probs);
    const auto dout = random_vec<double>(static_cast<int64_t>(d.n_out()), 6, "test.dout");
    std::vector<std::vector<double>> g{std::vector<double>(d.q.size()),
                                       std::vector<double>(d.k1.size()),
                                       std::vector<double>(d.k2.size()),
                                       std::vector<double>(d.v1.size()),
                                       std::vector<double>(d.v2.size()),
                                       std::vector<double>(1)};
    third_order_backward<double>(g[0].data(), g[1].data(), g[2].data(), g[3].data(), g[4].data(),
                                 g[5].data(), dout.data(), d.q.data(), d.k1.data(), d.k2.data(),
                                 d.v1.data(), d.v2.data(), probs.data(), scale, s);
    auto loss = [&](const TriData& x, double sc) {
      std::vector<double> o, p;
      forward<double>(x, sc, o, p);
      double l = 0;
      for (size_t e = 0; e < o.size(); ++e) l += o[e] * dout[e];
      return l;
    };
    for (int t = 0; t < 6; ++t) {
      const double h = 1e-5;
      double analytic = 0, numeric = 0;
      if (t == 5) {
        analytic = g[5][0];
        numeric = (loss(d, scale + h) - loss(d, scale - h)) / (2 * h);
      } else {
        std::vector<double>* xs[] = {&d.q, &d.k1, &d.k2, &d.v1, &d.v2};
        const auto dir = random_vec<double>(static_cast<int64_t>(xs[t]->size()), 40 + t,
                                            "test.dir", -1.0, 1.0);
        for (size_t e = 0; e < dir.size(); ++e) analytic += g[t][e] * dir[e];
        TriData up = d, down = d;
        std::vector<double>* xu[] = {&up.q, &up.k1, &up.k2, &up.v1, &up.v2};
        std::vector<double>* xd[] = {&down.q, &down.k1, &down.k2, &down.v1, &down.v2};
        for (size_t e = 0; e < dir.size(); ++e) {
          (*xu[t])[e] += h * dir[e];
          (*xd[t])[e] -= h * dir[e];
        }
        numeric = (loss(up, scale) - loss(down, scale)) / (2 * h);
      }
      EXPECT_NEAR(analytic, numeric, 1e-7 * std::max(1.0, std::abs(numeric)))
          << "input " << t << " N=" << s.N;
    }
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {
using namespace test_attention;

// Causal third order: query i's pair weights are exactly 0 unless j, k ≤ i, and its output is
// the unmasked reference's on the prefix 0 … i.
TEST(OpsAttentionThirdOrder, CausalQueryIsThirdOrderOverThePrefix) {
  const ThirdOrderShape s{1, 13, 2, 3, 2, false, 0, true};
  TriData d = tri_data(s, 23);
  std::vector<double> out, probs;
  forward<double>(d, 0.8, out, probs);
  const int64_t N = s.N, rk = s.H * s.dk, rv = s.H * s.dv;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t n = i + 1;
    auto prefix = [&](const std::vector<double>& x, int64_t w) {
      return std::vector<double>(x.begin(), x.begin() + n * w);
    };
    TriData p{{1, n, s.H, s.dk, s.dv}, prefix(d.q, rk),  prefix(d.k1, rk),
              prefix(d.k2, rk),        prefix(d.v1, rv), prefix(d.v2, rv)};
    std::vector<double> o, pp;
    forward<double>(p, 0.8, o, pp, true);
    for (int64_t c = 0; c < rv; ++c) EXPECT_NEAR(out[i * rv + c], o[i * rv + c], 1e-12);
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < N; ++k) {
          const double got = probs[(((h * N) + i) * N + j) * N + k];
          if (j > i || k > i) {
            EXPECT_EQ(got, 0.0);
          } else {
            EXPECT_NEAR(got, pp[(((h * n) + i) * n + j) * n + k], 1e-12);
          }
        }
  }
}

}  // namespace
}  // namespace attn
