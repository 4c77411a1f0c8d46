// Tests of softmax attention and head_sum (ops/attention.h): fast path against the naive
// reference (double and float), softmax normalisation and masking, permutation
// equivariance, closed forms, accumulation semantics of the backward, bad sizes (also of
// third-order attention), and every gradient-check row of the attention group
// (gradcheck_rows_attention, third order included). Third order: test_ops_third_order.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "gradcheck_test_helpers.h"
#include "ops/attention.h"
#include "ops/gradcheck.h"
#include "ops/third_order_attention.h"
#include "attention_test_helpers.h"

namespace attn {
namespace {
using namespace test_attention;

// ---------------------------------------------------------------- attention

struct AttnData {
  AttentionShape s;
  std::vector<double> q, k, v;
  size_t n_out() const { return static_cast<size_t>(s.B * s.N * s.H * s.dv); }
  size_t n_probs() const { return static_cast<size_t>(s.B * s.H * s.N * s.N); }
};

AttnData attn_data(AttentionShape s, uint64_t seed) {
  AttnData d{s, {}, {}, {}};
  d.q = random_vec<double>(s.B * s.N * s.H * s.dk, seed, "test.q");
  d.k = random_vec<double>(s.B * s.N * s.H * s.dk, seed, "test.k");
  d.v = random_vec<double>(s.B * s.N * s.H * s.dv, seed, "test.v");
  return d;
}

const std::vector<AttentionShape> kAttnShapes = {{1, 1, 1, 1, 1, false},   {1, 2, 1, 1, 1, true},
                                                 {1, 7, 1, 5, 3, false},   {3, 7, 3, 5, 2, true},
                                                 {2, 13, 2, 3, 7, false},  {2, 11, 4, 8, 8, true},
                                                 {1, 64, 2, 16, 16, false}};
// Causal (B, N, H, dk, dv, exclude_self, score_bits, shared_keys, causal): N = 1, one block of
// query rows (N ≤ 16), several blocks (N = 37, 64; causal_row_block).
const std::vector<AttentionShape> kCausalAttnShapes = {{1, 1, 1, 1, 1, false, 0, false, true},
                                                       {3, 7, 3, 5, 2, false, 0, false, true},
                                                       {2, 37, 2, 3, 4, false, 0, false, true},
                                                       {1, 64, 2, 16, 16, false, 0, true, true}};

template <class T>
void check_attention_fast_vs_ref(double tol) {
  std::vector<AttentionShape> shapes = kAttnShapes;
  shapes.insert(shapes.end(), kCausalAttnShapes.begin(), kCausalAttnShapes.end());
  for (const auto& s : shapes) {
    AttnData d = attn_data(s, 7);
    const auto q = cast<T>(d.q), k = cast<T>(d.k), v = cast<T>(d.v);
    std::vector<T> out(d.n_out()), probs(d.n_probs()), out_r(d.n_out()), probs_r(d.n_probs());
    attention_forward<T>(out.data(), probs.data(), q.data(), k.data(), v.data(), T(0.8), s);
    attention_forward_ref<T>(out_r.data(), probs_r.data(), q.data(), k.data(), v.data(), T(0.8), s);
    EXPECT_LE(rel_diff(out, out_r), tol) << "N=" << s.N << " H=" << s.H;
    EXPECT_LE(rel_diff(probs, probs_r), tol) << "N=" << s.N << " H=" << s.H;
    // Without a probs buffer the forward gives the same output.
    std::vector<T> out_np(d.n_out());
    attention_forward<T>(out_np.data(), nullptr, q.data(), k.data(), v.data(), T(0.8), s);
    EXPECT_EQ(out_np, out);
  }
}

TEST(OpsAttention, FastMatchesRefDouble) { check_attention_fast_vs_ref<double>(1e-12); }
TEST(OpsAttention, FastMatchesRefFloat) { check_attention_fast_vs_ref<float>(1e-5); }

TEST(OpsAttention, ProbsRowsSumToOneAndMaskIsExact) {
  for (bool excl : {false, true}) {
    AttentionShape s{2, 9, 3, 4, 5, excl};
    AttnData d = attn_data(s, 3);
    std::vector<double> out(d.n_out()), probs(d.n_probs());
    attention_forward<double>(out.data(), probs.data(), d.q.data(), d.k.data(), d.v.data(), 2.5,
                              s);
    for (int64_t r = 0; r < s.B * s.H * s.N; ++r) {
      const double* row = probs.data() + r * s.N;
      double sum = 0;
      for (int64_t j = 0; j < s.N; ++j) {
        EXPECT_GE(row[j], 0.0);
        sum += row[j];
      }
      EXPECT_NEAR(sum, 1.0, 1e-14);
      const int64_t i = r % s.N;
      if (excl) {
        EXPECT_EQ(row[i], 0.0);
      } else {
        EXPECT_GT(row[i], 0.0);
      }
    }
  }
}

TEST(OpsAttention, PermutationEquivariance) {
  for (bool excl : {false, true}) {
    AttentionShape s{2, 6, 2, 3, 4, excl};
    AttnData d = attn_data(s, 5);
    const std::vector<int64_t> perm{3, 0, 5, 1, 4, 2};
    std::vector<double> out(d.n_out()), out_p(d.n_out()), probs(d.n_probs());
    attention_forward<double>(out.data(), probs.data(), d.q.data(), d.k.data(), d.v.data(), 1.3,
                              s);
    const auto qp = permute_tokens(d.q, s.B, s.N, perm), kp = permute_tokens(d.k, s.B, s.N, perm),
               vp = permute_tokens(d.v, s.B, s.N, perm);
    attention_forward<double>(out_p.data(), probs.data(), qp.data(), kp.data(), vp.data(), 1.3, s);
    EXPECT_LE(rel_diff(out_p, permute_tokens(out, s.B, s.N, perm)), 1e-13);
  }
}

TEST(OpsAttention, ScaleZeroAveragesValues) {
  for (bool excl : {false, true}) {
    AttentionShape s{2, 5, 3, 4, 3, excl};
    AttnData d = attn_data(s, 11);
    std::vector<double> out(d.n_out()), probs(d.n_probs());
    attention_forward<double>(out.data(), probs.data(), d.q.data(), d.k.data(), d.v.data(), 0.0,
                              s);
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t i = 0; i < s.N; ++i)
        for (int64_t h = 0; h < s.H; ++h)
          for (int64_t c = 0; c < s.dv; ++c) {
            double sum = 0;
            for (int64_t j = 0; j < s.N; ++j)
              if (!(excl && j == i)) sum += d.v[((b * s.N + j) * s.H + h) * s.dv + c];
            const double mean = sum / static_cast<double>(excl ? s.N - 1 : s.N);
            EXPECT_NEAR(out[((b * s.N + i) * s.H + h) * s.dv + c], mean, 1e-14);
          }
  }
}

TEST(OpsAttention, HandSetHardAttention) {
  // One head, N = 3, dk = 1: with a large scale each query picks the key with the largest
  // product; q = (1, −1, 1), k = (0, 2, −2) → token 0 and 2 pick j = 1, token 1 picks j = 2.
  AttentionShape s{1, 3, 1, 1, 2, false};
  const std::vector<double> q{1, -1, 1}, k{0, 2, -2}, v{1, 2, 3, 4, 5, 6};
  std::vector<double> out(6), probs(9);
  attention_forward<double>(out.data(), probs.data(), q.data(), k.data(), v.data(), 40.0, s);
  const std::vector<double> want{3, 4, 5, 6, 3, 4};
  for (int e = 0; e < 6; ++e) EXPECT_NEAR(out[e], want[e], 1e-12);
}

TEST(OpsAttention, BackwardAccumulatesAndSkipsNullBuffers) {
  AttentionShape s{2, 5, 3, 4, 2, true};
  AttnData d = attn_data(s, 13);
  std::vector<double> out(d.n_out()), probs(d.n_probs());
  const double scale = 0.9;
  attention_forward<double>(out.data(), probs.data(), d.q.data(), d.k.data(), d.v.data(), scale,
                            s);
  const auto dout = random_vec<double>(static_cast<int64_t>(d.n_out()), 1, "test.dout");
  auto run = [&](double init, bool with_q, bool with_k, bool with_v, bool with_s) {
    std::vector<std::vector<double>> g{std::vector<double>(d.q.size(), init),
                                       std::vector<double>(d.k.size(), init),
                                       std::vector<double>(d.v.size(), init), {init}};
    attention_backward<double>(with_q ? g[0].data() : nullptr, with_k ? g[1].data() : nullptr,
                               with_v ? g[2].data() : nullptr, with_s ? g[3].data() : nullptr,
                               dout.data(), d.q.data(), d.k.data(), d.v.data(), probs.data(),
                               scale, s);
    return g;
  };
  const auto g0 = run(0.0, true, true, true, true);
  const auto g1 = run(0.25, true, true, true, true);
  for (size_t t = 0; t < 4; ++t)
    for (size_t e = 0; e < g0[t].size(); ++e) EXPECT_NEAR(g1[t][e], g0[t][e] + 0.25, 1e-14);
  // Each buffer alone gives the same values; null buffers are left alone.
  for (int which = 0; which < 4; ++which) {
    const auto g = run(0.0, which == 0, which == 1, which == 2, which == 3);
    for (size_t t = 0; t < 4; ++t)
      for (size_t e = 0; e < g[t].size(); ++e)
        EXPECT_EQ(g[t][e], static_cast<int>(t) == which ? g0[t][e] : 0.0);
  }
}

TEST(OpsAttention, BackwardFloatMatchesDouble) {
  AttentionShape s{2, 7, 3, 5, 3, false};
  AttnData d = attn_data(s, 17);
  const auto dout = random_vec<double>(static_cast<int64_t>(d.n_out()), 2, "test.dout");
  auto grads = [&](auto zero) {
    using T = decltype(zero);
    const auto q = cast<T>(d.q), k = cast<T>(d.k), v = cast<T>(d.v), go = cast<T>(dout);
    std::vector<T> out(d.n_out()), probs(d.n_probs());
    attention_forward<T>(out.data(), probs.data(), q.data(), k.data(), v.data(), T(1.1), s);
    std::vector<T> dq(q.size()), dk(k.size()), dv(v.size()), ds(1);
    attention_backward<T>(dq.data(), dk.data(), dv.data(), ds.data(), go.data(), q.data(),
                          k.data(), v.data(), probs.data(), T(1.1), s);
    std::vector<double> all;
    for (const auto* x : {&dq, &dk, &dv, &ds}) all.insert(all.end(), x->begin(), x->end());
    return all;
  };
  EXPECT_LE(rel_diff(grads(0.0f), grads(0.0)), 1e-5);
}

TEST(OpsAttention, BadSizesAreUserErrors) {
  std::vector<double> x(64), p(64);
  AttentionShape s{1, 1, 1, 2, 2, true};  // exclude_self with one token
  EXPECT_THROW(attention_forward<double>(x.data(), p.data(), x.data(), x.data(), x.data(), 1.0, s),
               UserError);
  s = {1, 4, 0, 2, 2, false};
  EXPECT_THROW(attention_forward<double>(x.data(), p.data(), x.data(), x.data(), x.data(), 1.0, s),
               UserError);
  s = {1, 4, 1, 0, 2, false};
  EXPECT_THROW(attention_forward_ref<double>(x.data(), p.data(), x.data(), x.data(), x.data(), 1.0,
                                             s),
               UserError);
  EXPECT_THROW(head_sum_forward<double>(x.data(), x.data(), 2, 0, 2), UserError);
  ThirdOrderShape t{1, 2, 1, 2, 2, true};  // exclude_self needs N ≥ 3
  EXPECT_THROW(third_order_forward<double>(x.data(), p.data(), x.data(), x.data(), x.data(),
                                           x.data(), x.data(), 1.0, t),
               UserError);
  t = {1, 3, 1, 2, 0, false};
  EXPECT_THROW(third_order_forward_ref<double>(x.data(), p.data(), x.data(), x.data(), x.data(),
                                               x.data(), x.data(), 1.0, t),
               UserError);
}

// ---------------------------------------------------------------- head_sum

TEST(OpsAttention, HeadSumForwardBackward) {
  const int64_t rows = 5, H = 3, dv = 7;
  const auto inp = random_vec<double>(rows * H * dv, 1, "test.inp");
  std::vector<double> out(rows * dv, 99.0);
  head_sum_forward<double>(out.data(), inp.data(), rows, H, dv);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < dv; ++c) {
      double want = 0;
      for (int64_t h = 0; h < H; ++h) want += inp[(r * H + h) * dv + c];
      EXPECT_NEAR(out[r * dv + c], want, 1e-15);
    }
  const auto dout = random_vec<double>(rows * dv, 2, "test.dout");
  std::vector<double> dinp(rows * H * dv, 0.5);
  head_sum_backward<double>(dinp.data(), dout.data(), rows, H, dv);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t c = 0; c < dv; ++c)
        EXPECT_EQ(dinp[(r * H + h) * dv + c], 0.5 + dout[r * dv + c]);
}

// ---------------------------------------------------------------- gradient checks

TEST(OpsAttention, GradcheckRowsPass) {
  std::vector<GradcheckRow> rows;
  gradcheck_rows_attention(rows);
  ASSERT_EQ(rows.size(), 16u);
  for (const auto& row : rows)
    for (uint64_t seed : {1, 2}) test::gradcheck_expect_pass(row, seed);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// shared_keys equals the ordinary op with the keys copied into every head; its key gradient
// is the sum of the copies' gradients; the reference agrees.
TEST(OpsAttention, SharedKeysEqualKeysCopiedIntoEveryHead) {
  for (bool excl : {false, true}) {
    AttentionShape s{2, 7, 3, 4, 5, excl};
    AttentionShape shared = s;
    shared.shared_keys = true;
    AttnData d = attn_data(s, 11);
    const std::vector<double> k_shared = random_vec<double>(s.B * s.N * s.dk, 12, "test.ks");
    std::vector<double> k_full(d.k.size());
    for (int64_t bn = 0; bn < s.B * s.N; ++bn)
      for (int64_t h = 0; h < s.H; ++h)
        for (int64_t l = 0; l < s.dk; ++l)
          k_full[(bn * s.H + h) * s.dk + l] = k_shared[bn * s.dk + l];
    std::vector<double> out(d.n_out()), probs(d.n_probs()), out_f(d.n_out()), probs_f(d.n_probs());
    std::vector<double> out_r(d.n_out()), probs_r(d.n_probs());
    attention_forward<double>(out.data(), probs.data(), d.q.data(), k_shared.data(), d.v.data(),
                              0.9, shared);
    attention_forward<double>(out_f.data(), probs_f.data(), d.q.data(), k_full.data(), d.v.data(),
                              0.9, s);
    attention_forward_ref<double>(out_r.data(), probs_r.data(), d.q.data(), k_shared.data(),
                                  d.v.data(), 0.9, shared);
    EXPECT_LE(rel_diff(out, out_f), 1e-13);
    EXPECT_LE(rel_diff(out, out_r), 1e-12);
    const std::vector<double> dout = random_vec<double>(d.n_out(), 13, "test.dout");
    std::vector<double> dq(d.q.size()), dk(k_shared.size()), dv(d.v.size());
    std::vector<double> dq_f(d.q.size()), dk_f(d.k.size()), dv_f(d.v.size());
    double ds = 0, ds_f = 0;
    attention_backward<double>(dq.data(), dk.data(), dv.data(), &ds, dout.data(), d.q.data(),
                               k_shared.data(), d.v.data(), probs.data(), 0.9, shared);
    attention_backward<double>(dq_f.data(), dk_f.data(), dv_f.data(), &ds_f, dout.data(),
                               d.q.data(), k_full.data(), d.v.data(), probs_f.data(), 0.9, s);
    std::vector<double> dk_summed(k_shared.size(), 0.0);
    for (int64_t bn = 0; bn < s.B * s.N; ++bn)
      for (int64_t h = 0; h < s.H; ++h)
        for (int64_t l = 0; l < s.dk; ++l)
          dk_summed[bn * s.dk + l] += dk_f[(bn * s.H + h) * s.dk + l];
    EXPECT_LE(rel_diff(dq, dq_f), 1e-12);
    EXPECT_LE(rel_diff(dv, dv_f), 1e-12);
    EXPECT_LE(rel_diff(dk, dk_summed), 1e-12);
    EXPECT_NEAR(ds, ds_f, 1e-12 * std::max(1.0, std::fabs(ds_f)));
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {
using namespace test_attention;

// Causal attention's row i is ordinary attention over the prefix 0 … i: check the fast
// kernel's output and probs (exactly 0 above the diagonal) against the unmasked reference run
// on each prefix, at N = 40 (three blocks of query rows), and its gradients against central
// differences along random directions.
TEST(OpsAttention, CausalRowIsAttentionOverThePrefix) {
  const AttentionShape s{2, 40, 2, 3, 5, false, 0, false, true};
  AttnData d = attn_data(s, 17);
  std::vector<double> out(d.n_out()), probs(d.n_probs());
  attention_forward<double>(out.data(), probs.data(), d.q.data(), d.k.data(), d.v.data(), 0.9, s);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t i = 0; i < s.N; ++i) {
      // The prefix 0 … i of sequence b as a sequence of its own.
      const int64_t n = i + 1, rk = s.H * s.dk, rv = s.H * s.dv;
      std::vector<double> q(d.q.begin() + b * s.N * rk, d.q.begin() + (b * s.N + n) * rk);
      std::vector<double> k(d.k.begin() + b * s.N * rk, d.k.begin() + (b * s.N + n) * rk);
      std::vector<double> v(d.v.begin() + b * s.N * rv, d.v.begin() + (b * s.N + n) * rv);
      const AttentionShape ps{1, n, s.H, s.dk, s.dv};
      std::vector<double> o(n * rv), p(s.H * n * n);
      attention_forward_ref<double>(o.data(), p.data(), q.data(), k.data(), v.data(), 0.9, ps);
      for (int64_t c = 0; c < rv; ++c)
        EXPECT_NEAR(out[(b * s.N + i) * rv + c], o[i * rv + c], 1e-12) << "i=" << i;
      for (int64_t h = 0; h < s.H; ++h)
        for (int64_t j = 0; j < s.N; ++j) {
          const double got = probs[((b * s.H + h) * s.N + i) * s.N + j];
          if (j > i) {
            EXPECT_EQ(got, 0.0);
          } else {
            EXPECT_NEAR(got, p[(h * n + i) * n + j], 1e-12);
          }
        }
    }
  // Backward: <∇L, u> against a central difference of L = <dout, out>.
  const auto dout = random_vec<double>(static_cast<int64_t>(d.n_out()), 5, "test.dout");
  std::vector<double> dq(d.q.size()), dk(d.k.size()), dv(d.v.size()), dscale(1);
  attention_backward<double>(dq.data(), dk.data(), dv.data(), dscale.data(), dout.data(),
                             d.q.data(), d.k.data(), d.v.data(), probs.data(), 0.9, s);
  auto loss = [&](const AttnData& x, double scale) {
    std::vector<double> o(x.n_out());
    attention_forward<double>(o.data(), nullptr, x.q.data(), x.k.data(), x.v.data(), scale, s);
    return std::inner_product(o.begin(), o.end(), dout.begin(), 0.0);
  };
  const double h = 1e-5;
  EXPECT_NEAR(dscale[0], (loss(d, 0.9 + h) - loss(d, 0.9 - h)) / (2 * h), 1e-7);
  std::vector<double>* grads[] = {&dq, &dk, &dv};
  for (int t = 0; t < 3; ++t) {
    AttnData up = d, down = d;
    std::vector<double>* xu[] = {&up.q, &up.k, &up.v};
    std::vector<double>* xd[] = {&down.q, &down.k, &down.v};
    const auto dir =
        random_vec<double>(static_cast<int64_t>(xu[t]->size()), 50 + t, "test.dir", -1.0, 1.0);
    double analytic = 0;
    for (size_t e = 0; e < dir.size(); ++e) {
      analytic += (*grads[t])[e] * dir[e];
      (*xu[t])[e] += h * dir[e];
      (*xd[t])[e] -= h * dir[e];
    }
    const double numeric = (loss(up, 0.9) - loss(down, 0.9)) / (2 * h);
    EXPECT_NEAR(analytic, numeric, 1e-7 * std::max(1.0, std::abs(numeric))) << "input " << t;
  }
}

// With score rounding (score_bits, the precision models' bits_scores) the masked entries stay
// exactly 0 and every row a distribution, in both kernels (third order: its whole-block path).
TEST(OpsAttention, CausalWithScoreRoundingKeepsTheMask) {
  const AttentionShape s{2, 20, 2, 3, 2, false, 5, false, true};
  AttnData d = attn_data(s, 3);
  std::vector<double> out(d.n_out()), probs(d.n_probs());
  attention_forward<double>(out.data(), probs.data(), d.q.data(), d.k.data(), d.v.data(), 1.3, s);
  const ThirdOrderShape t{1, 9, 2, 3, 2, false, 5, true};
  const int64_t nt = t.B * t.N * t.H * t.dk, nv = t.B * t.N * t.H * t.dv;
  const auto q = random_vec<double>(nt, 4, "test.q"), k1 = random_vec<double>(nt, 4, "test.k1"),
             k2 = random_vec<double>(nt, 4, "test.k2"), v = random_vec<double>(nv, 4, "test.v");
  std::vector<double> out3(nv), probs3(t.B * t.H * t.N * t.N * t.N);
  third_order_forward<double>(out3.data(), probs3.data(), q.data(), k1.data(), k2.data(), v.data(),
                              v.data(), 1.3, t);
  for (int64_t r = 0; r < s.B * s.H * s.N; ++r) {
    const int64_t i = r % s.N;
    double sum = 0;
    for (int64_t j = 0; j < s.N; ++j) {
      sum += probs[r * s.N + j];
      EXPECT_TRUE(j <= i || probs[r * s.N + j] == 0.0) << i << " " << j;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
  for (int64_t r = 0; r < t.B * t.H * t.N; ++r) {
    const int64_t i = r % t.N;
    double sum = 0;
    for (int64_t j = 0; j < t.N; ++j)
      for (int64_t k = 0; k < t.N; ++k) {
        const double p = probs3[(r * t.N + j) * t.N + k];
        sum += p;
        EXPECT_TRUE((j <= i && k <= i) || p == 0.0) << i << " " << j << " " << k;
      }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
}

TEST(OpsAttention, CausalWithExcludeSelfIsAUserError) {
  const AttentionShape s{1, 4, 1, 2, 2, true, 0, false, true};
  std::vector<double> x(16), p(16);
  EXPECT_THROW(attention_forward<double>(x.data(), p.data(), x.data(), x.data(), x.data(), 1.0, s),
               UserError);
  const ThirdOrderShape t{1, 4, 1, 2, 2, true, 0, true};
  std::vector<double> pt(64);
  EXPECT_THROW(third_order_forward<double>(x.data(), pt.data(), x.data(), x.data(), x.data(),
                                           x.data(), x.data(), 1.0, t),
               UserError);
}

// The causal blocks depend on N alone, one block up to N = 16.
TEST(OpsAttention, CausalRowBlockDependsOnNAlone) {
  EXPECT_EQ(causal_row_block(1), 1);
  EXPECT_EQ(causal_row_block(16), 16);
  EXPECT_EQ(causal_row_block(17), 16);
  EXPECT_EQ(causal_row_block(64), 16);
  EXPECT_EQ(causal_row_block(200), 25);
}

}  // namespace
}  // namespace attn
