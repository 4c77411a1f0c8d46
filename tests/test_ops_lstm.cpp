// LSTM layer: the GEMM fast path against the naive forward reference and a naive per-sample
// backward through time (double ≤ 1e-12 relative, float ≤ 1e-5), reverse = forward on the
// time-reversed sequence, accumulation, causality, batch independence, bad shapes, and the
// gradient-check rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "ops/gradcheck.h"
#include "ops/isa.h"
#include "ops/lstm.h"
#include "ops/sparse_rows.h"
#include "gradcheck_test_helpers.h"
#include "isa_test_helpers.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

using test_ops_basic::cast;
using test_ops_basic::random_vec;
using test_ops_basic::rel_err;

LstmShape shape(int64_t B, int64_t T, int64_t C, int64_t Hd, bool reverse) {
  LstmShape s;
  s.B = B;
  s.T = T;
  s.C = C;
  s.Hd = Hd;
  s.reverse = reverse;
  return s;
}

const LstmShape kShapes[] = {shape(1, 1, 1, 1, false), shape(2, 3, 3, 5, false),
                             shape(3, 7, 5, 2, false), shape(1, 5, 2, 3, false),
                             shape(4, 2, 1, 7, false), shape(2, 11, 4, 4, false)};

// One problem: inputs, weights and an upstream gradient, in double.
struct Problem {
  LstmShape s;
  std::vector<double> x, wx, wh, b, dh;
};

Problem make_problem(const LstmShape& s, uint64_t seed) {
  const int64_t G = 4 * s.Hd;
  return Problem{s,
                 random_vec(s.B * s.T * s.C, seed, "x", -1.5, 1.5),
                 random_vec(s.C * G, seed, "wx", -0.9, 0.9),
                 random_vec(s.Hd * G, seed, "wh", -0.9, 0.9),
                 random_vec(G, seed, "b", -0.5, 0.5),
                 random_vec(s.B * s.T * s.Hd, seed, "dh")};
}

template <class T>
struct State {
  std::vector<T> h, c, tanh_c, gates;
};

template <class T>
struct Grads {
  std::vector<T> dx, dwx, dwh, db;
};

// xs: a non-zero list of x handed to the layer (null: the layer's own, where x is sparse).
template <class T>
State<T> run_forward(const Problem& p, bool bias, bool ref,
                     const SparseRows<T>* xs = nullptr) {
  const auto& s = p.s;
  State<T> st{std::vector<T>(p.dh.size()), std::vector<T>(p.dh.size()), std::vector<T>(p.dh.size()),
              std::vector<T>(static_cast<size_t>(s.B * s.T * 4 * s.Hd))};
  const auto x = cast<T>(p.x), wx = cast<T>(p.wx), wh = cast<T>(p.wh), b = cast<T>(p.b);
  const T* bp = bias ? b.data() : nullptr;
  if (ref) {
    lstm_forward_ref<T>(st.h.data(), st.c.data(), st.tanh_c.data(), st.gates.data(), x.data(),
                        wx.data(), wh.data(), bp, s);
  } else {
    lstm_forward<T>(st.h.data(), st.c.data(), st.tanh_c.data(), st.gates.data(), x.data(),
                    wx.data(), wh.data(), bp, s, xs);
  }
  return st;
}

// Gradient buffers pre-filled with `fill` (so accumulation is exercised).
template <class T>
Grads<T> grads_filled(const LstmShape& s, double fill) {
  const int64_t G = 4 * s.Hd;
  return Grads<T>{std::vector<T>(static_cast<size_t>(s.B * s.T * s.C), T(fill)),
                  std::vector<T>(static_cast<size_t>(s.C * G), T(fill)),
                  std::vector<T>(static_cast<size_t>(s.Hd * G), T(fill)),
                  std::vector<T>(static_cast<size_t>(G), T(fill))};
}

// With want_db = false the bias gradient is not asked for (db null; g.db stays at fill).
template <class T>
Grads<T> run_backward(const Problem& p, bool bias, double fill, const SparseRows<T>* xs = nullptr,
                      bool want_db = true, LstmDh dh_steps = LstmDh::every_step) {
  const auto st = run_forward<T>(p, bias, false, xs);
  auto g = grads_filled<T>(p.s, fill);
  const auto x = cast<T>(p.x), wx = cast<T>(p.wx), wh = cast<T>(p.wh), dh = cast<T>(p.dh);
  lstm_backward<T>(g.dx.data(), g.dwx.data(), g.dwh.data(), want_db ? g.db.data() : nullptr,
                   dh.data(), x.data(), wx.data(), wh.data(), st.h.data(), st.c.data(),
                   st.tanh_c.data(), st.gates.data(), p.s, xs, dh_steps);
  return g;
}

// p with dh's rows set to `value` (0 or NaN) but at the last step in reading order: the upstream
// gradient of a read-out of the final state only.
Problem with_dh_at_last_step_only(Problem p, double value) {
  const LstmShape& s = p.s;
  const int64_t last = s.reverse ? 0 : s.T - 1;
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t t = 0; t < s.T; ++t)
      if (t != last) std::fill_n(p.dh.begin() + (b * s.T + t) * s.Hd, s.Hd, value);
  return p;
}

// Naive backward through time, one sample and one step at a time, scalar loops only.
Grads<double> naive_backward(const Problem& p, bool bias, double fill) {
  const auto& s = p.s;
  const int64_t L = s.T, C = s.C, H = s.Hd, G = 4 * H;
  const auto st = run_forward<double>(p, bias, true);
  auto g = grads_filled<double>(s, fill);
  for (int64_t bb = 0; bb < s.B; ++bb) {
    std::vector<double> dc_next(H, 0.0), dh_next(H, 0.0), da(G);
    for (int64_t step = L - 1; step >= 0; --step) {
      const int64_t t = s.reverse ? L - 1 - step : step;
      const int64_t tp = s.reverse ? t + 1 : t - 1;
      const int64_t row = bb * L + t;      // x, dx, h and dh: (B, T, ·)
      const int64_t cache = t * s.B + bb;  // c and the gates: (T, B, ·)
      for (int64_t k = 0; k < H; ++k) {
        const double i = st.gates[cache * G + k], f = st.gates[cache * G + H + k];
        const double gg = st.gates[cache * G + 2 * H + k], o = st.gates[cache * G + 3 * H + k];
        const double tc = std::tanh(st.c[cache * H + k]);
        const double cprev = step == 0 ? 0.0 : st.c[(tp * s.B + bb) * H + k];
        const double dht = p.dh[row * H + k] + dh_next[k];
        const double dct = dc_next[k] + dht * o * (1 - tc * tc);
        da[k] = dct * gg * i * (1 - i);
        da[H + k] = dct * cprev * f * (1 - f);
        da[2 * H + k] = dct * i * (1 - gg * gg);
        da[3 * H + k] = dht * tc * o * (1 - o);
        dc_next[k] = dct * f;
      }
      for (int64_t j = 0; j < G; ++j) {
        g.db[j] += da[j];
        for (int64_t k = 0; k < C; ++k) {
          g.dwx[k * G + j] += p.x[row * C + k] * da[j];
          g.dx[row * C + k] += p.wx[k * G + j] * da[j];
        }
        if (step > 0) {
          for (int64_t k = 0; k < H; ++k) g.dwh[k * G + j] += st.h[(bb * L + tp) * H + k] * da[j];
        }
      }
      for (int64_t k = 0; k < H; ++k) {
        dh_next[k] = 0;
        for (int64_t j = 0; j < G; ++j) dh_next[k] += p.wh[k * G + j] * da[j];
      }
    }
  }
  return g;
}

std::string describe(const LstmShape& s, bool bias) {
  return "B " + std::to_string(s.B) + " T " + std::to_string(s.T) + " C " + std::to_string(s.C) +
         " Hd " + std::to_string(s.Hd) + (s.reverse ? " reverse" : " forward") +
         (bias ? " bias" : " no bias");
}

// Every gradient of the fast path against the naive backward: double ≤ 1e-12, float ≤ 1e-5
// (relative to the largest entry).
void expect_backward_matches_naive(const Problem& p, bool bias) {
  const auto want = naive_backward(p, bias, 0.5);
  const auto fast = run_backward<double>(p, bias, 0.5);
  const auto fast32 = run_backward<float>(p, bias, 0.5);
  EXPECT_LE(rel_err(fast.dx, want.dx), 1e-12);
  EXPECT_LE(rel_err(fast.dwx, want.dwx), 1e-12);
  EXPECT_LE(rel_err(fast.dwh, want.dwh), 1e-12);
  EXPECT_LE(rel_err(fast.db, want.db), 1e-12);
  EXPECT_LE(rel_err(fast32.dx, want.dx), 1e-5);
  EXPECT_LE(rel_err(fast32.dwx, want.dwx), 1e-5);
  EXPECT_LE(rel_err(fast32.dwh, want.dwh), 1e-5);
  EXPECT_LE(rel_err(fast32.db, want.db), 1e-5);
}

TEST(OpsLstm, ForwardFastMatchesRefDoubleAndFloat) {
  for (LstmShape s : kShapes) {
    for (bool reverse : {false, true}) {
      for (bool bias : {true, false}) {
        s.reverse = reverse;
        SCOPED_TRACE(describe(s, bias));
        const auto p = make_problem(s, 1);
        const auto ref = run_forward<double>(p, bias, true);
        const auto fast = run_forward<double>(p, bias, false);
        const auto fast32 = run_forward<float>(p, bias, false);
        EXPECT_LE(rel_err(fast.h, ref.h), 1e-12);
        EXPECT_LE(rel_err(fast.c, ref.c), 1e-12);
        EXPECT_LE(rel_err(fast.tanh_c, ref.tanh_c), 1e-12);
        EXPECT_LE(rel_err(fast.gates, ref.gates), 1e-12);
        EXPECT_LE(rel_err(fast32.h, ref.h), 1e-5);
        EXPECT_LE(rel_err(fast32.c, ref.c), 1e-5);
        EXPECT_LE(rel_err(fast32.tanh_c, ref.tanh_c), 1e-5);
        EXPECT_LE(rel_err(fast32.gates, ref.gates), 1e-5);
      }
    }
  }
}

// One-hot tokens (with an all-zero token at t = 1), so that the input products run on the
// non-zeros (ops/sparse_rows.h).
Problem one_hot_problem(const LstmShape& s) {
  Problem p = make_problem(s, 8);
  for (int64_t r = 0; r < s.B * s.T; ++r)
    for (int64_t k = 0; k < s.C; ++k)
      p.x[r * s.C + k] = (r % s.T != 1 && k == (r * 5) % s.C) ? 1.0 : 0.0;
  return p;
}

// The caches are time-major (T, B, ·) and h batch-major (B, T, ·): h = o ∘ tanh(c) row by row,
// exactly (the layer forms h by that one product), with B ≠ T so that the layouts differ (12 of
// the 15 (b, t) pairs land on other rows); and c at the first step read (t = 0, or T − 1 in
// reverse) is i ∘ g. On a dense input (the per-step GEMM) and a one-hot one (the sparse path).
TEST(OpsLstm, CachesAreTimeMajorAndHBatchMajor) {
  for (bool reverse : {false, true})
    for (bool one_hot : {false, true}) {
      const LstmShape s = shape(3, 5, 9, 6, reverse);
      SCOPED_TRACE(describe(s, true) + (one_hot ? " one-hot" : " dense"));
      const Problem p = one_hot ? one_hot_problem(s) : make_problem(s, 4);
      const auto st = run_forward<double>(p, true, false);
      const int64_t H = s.Hd, G = 4 * H;
      for (int64_t b = 0; b < s.B; ++b)
        for (int64_t t = 0; t < s.T; ++t)
          for (int64_t k = 0; k < H; ++k) {
            const int64_t cache = t * s.B + b;
            EXPECT_EQ(st.h[(b * s.T + t) * H + k],
                      st.gates[cache * G + 3 * H + k] * st.tanh_c[cache * H + k]);
            // vmath_tanh's double version is std::tanh itself.
            EXPECT_EQ(st.tanh_c[cache * H + k], std::tanh(st.c[cache * H + k]));
          }
      const int64_t t0 = reverse ? s.T - 1 : 0;  // the first step read
      for (int64_t b = 0; b < s.B; ++b)
        for (int64_t k = 0; k < H; ++k) {
          const int64_t cache = t0 * s.B + b;
          EXPECT_EQ(st.c[cache * H + k], st.gates[cache * G + k] * st.gates[cache * G + 2 * H + k]);
        }
    }
}

TEST(OpsLstm, BackwardMatchesNaiveBpttDoubleAndFloat) {
  for (LstmShape s : kShapes) {
    for (bool reverse : {false, true}) {
      for (bool bias : {true, false}) {
        s.reverse = reverse;
        SCOPED_TRACE(describe(s, bias));
        expect_backward_matches_naive(make_problem(s, 2), bias);
      }
    }
  }
}

TEST(OpsLstm, DhAtTheLastStepOnlyGivesTheSameBitsAndReadsNoOtherRow) {
  // LstmDh::last_step_only on a dh whose other rows are NaN: every gradient the same bits as
  // reading the zeros there, float and double, both directions, dense and one-hot inputs, with and
  // without the bias gradient, and at one step (where the last step is the only one).
  for (const Problem& full :
       {make_problem(shape(3, 4, 2, 5, false), 6), make_problem(shape(3, 4, 2, 5, true), 6),
        make_problem(shape(2, 1, 3, 4, false), 6), one_hot_problem(shape(70, 5, 9, 9, false)),
        one_hot_problem(shape(70, 5, 9, 9, true))}) {
    SCOPED_TRACE(describe(full.s, true));
    const Problem zeros = with_dh_at_last_step_only(full, 0.0);
    const Problem nans = with_dh_at_last_step_only(full, std::nan(""));
    // Bit for bit (a zero's sign included), on buffers filled with 0.5 (accumulation) and with +0
    // (the gradients themselves). dhrec + 0 and 0 + dhrec are equal in IEEE arithmetic, a −0 in
    // dhrec included (random data rarely makes one: that case rests on the arithmetic).
    auto same = [&](auto zero, bool want_db, double fill) {
      using T = decltype(zero);
      const auto read = run_backward<T>(zeros, true, fill, nullptr, want_db);
      const auto skipped =
          run_backward<T>(nans, true, fill, nullptr, want_db, LstmDh::last_step_only);
      for (auto [a, b, what] :
           {std::tuple{&read.dx, &skipped.dx, "dx"}, std::tuple{&read.dwx, &skipped.dwx, "dwx"},
            std::tuple{&read.dwh, &skipped.dwh, "dwh"}, std::tuple{&read.db, &skipped.db, "db"}}) {
        ASSERT_EQ(a->size(), b->size()) << what;
        EXPECT_EQ(std::memcmp(a->data(), b->data(), a->size() * sizeof(T)), 0) << what;
      }
      EXPECT_NE(read.dwx, grads_filled<T>(full.s, fill).dwx);  // the gradient did arrive
    };
    for (bool want_db : {true, false})
      for (double fill : {0.5, 0.0}) {
        same(0.0, want_db, fill);
        same(0.0f, want_db, fill);
      }
  }
}

// The float forward and backward in the generic copy and in `copy` of the kernels compiled once per
// instruction set (vmath, the cell loops, the sparse input products, the recurrent products on FMA
// tiles; ops/isa.h): the same bits, with and without the bias gradient (the other gradients the
// same either way), and with dh read at the last step only.
void expect_same_bits_as_generic(IsaCopy copy, const Problem& p) {
  const Problem last_only = with_dh_at_last_step_only(p, 0.0);
  const auto both = test::generic_and(copy, [&] {
    return std::make_tuple(
        run_forward<float>(p, true, false), run_backward<float>(p, true, 0.5),
        run_backward<float>(p, true, 0.5, nullptr, false),
        run_backward<float>(last_only, true, 0.5, nullptr, true, LstmDh::last_step_only));
  });
  const auto& [st_generic, g_generic, nodb_generic, last_generic] = both.first;
  const auto& [st, g, nodb, last] = both.second;
  test::expect_same_bits(last_generic.dx, last.dx, "dx, dh at the last step only");
  test::expect_same_bits(last_generic.dwh, last.dwh, "dwh, dh at the last step only");
  test::expect_same_bits(last_generic.dwx, last.dwx, "dwx, dh at the last step only");
  test::expect_same_bits(last_generic.db, last.db, "db, dh at the last step only");
  for (const Grads<float>* n : {&nodb_generic, &nodb}) {
    test::expect_same_bits(g_generic.dx, n->dx, "dx without db");
    test::expect_same_bits(g_generic.dwx, n->dwx, "dwx without db");
    test::expect_same_bits(g_generic.dwh, n->dwh, "dwh without db");
    test::expect_same_bits(grads_filled<float>(p.s, 0.5).db, n->db, "db untouched");
  }
  test::expect_same_bits(st_generic.h, st.h, "h");
  test::expect_same_bits(st_generic.c, st.c, "c");
  test::expect_same_bits(st_generic.tanh_c, st.tanh_c, "tanh_c");
  test::expect_same_bits(st_generic.gates, st.gates, "gates");
  test::expect_same_bits(g_generic.dx, g.dx, "dx");
  test::expect_same_bits(g_generic.dwx, g.dwx, "dwx");
  test::expect_same_bits(g_generic.dwh, g.dwh, "dwh");
  test::expect_same_bits(g_generic.db, g.db, "db");
}

class OpsLstmCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(OpsLstmCopies, GiveTheGenericCopysBits) {
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  // Dense inputs (hidden sizes that are and are not multiples of 16), then one-hot inputs on the
  // sparse path (36 gate columns: a full 32-wide slice and a tail; 68 columns: 4 blocks of 16 and
  // a tail in the AVX-512 compaction).
  for (LstmShape s : {shape(5, 9, 3, 37, false), shape(3, 6, 4, 16, true), shape(4, 7, 5, 8, false),
                      shape(5, 1, 3, 37, false)}) {  // the last: one step
    SCOPED_TRACE(describe(s, true));
    expect_same_bits_as_generic(GetParam(), make_problem(s, 3));
  }
  for (LstmShape s :
       {shape(70, 5, 9, 9, false), shape(70, 5, 9, 9, true), shape(33, 4, 68, 32, false)}) {
    SCOPED_TRACE(describe(s, true));
    expect_same_bits_as_generic(GetParam(), one_hot_problem(s));
  }
}

ATTN_ISA_COPIES_INSTANTIATE(OpsLstmCopies);

TEST(OpsLstm, OneHotInputsTakeTheSparsePathAndAgree) {
  // One-hot tokens: the input products run on the non-zeros (ops/sparse_rows.h); same values as
  // the naive references (and the same bits in every copy: OpsLstmCopies).
  for (bool reverse : {false, true}) {
    const LstmShape s =
        shape(70, 5, 9, 9, reverse);  // 36 gate columns: a full 32-wide slice and a tail
    SCOPED_TRACE(describe(s, true));
    const Problem p = one_hot_problem(s);
    SparseRows<double> probe;
    ASSERT_TRUE(sparse_rows_build(probe, p.x.data(), s.B * s.T, s.C));
    const auto ref = run_forward<double>(p, true, true);
    EXPECT_LE(rel_err(run_forward<double>(p, true, false).h, ref.h), 1e-12);
    EXPECT_LE(rel_err(run_forward<float>(p, true, false).h, ref.h), 1e-5);
    expect_backward_matches_naive(p, true);
  }
}

TEST(OpsLstm, AGivenNonZeroListGivesTheSameBitsAsTheLayersOwn) {
  // x_sparse: the list a network builds once for layer 0 (nn/lstm_net.cpp), in place of the
  // one the layer builds; forward and every gradient the same bits, float and double.
  for (bool reverse : {false, true}) {
    const LstmShape s = shape(70, 5, 9, 9, reverse);
    SCOPED_TRACE(describe(s, true));
    const Problem p = one_hot_problem(s);
    auto both = [&](auto zero) {
      using T = decltype(zero);
      const auto x = cast<T>(p.x);
      SparseRows<T> list;
      ASSERT_TRUE(sparse_rows_build(list, x.data(), s.B * s.T, s.C));
      State<T> st[2];
      Grads<T> g[2];
      for (int given = 0; given < 2; ++given) {
        const SparseRows<T>* xs = given ? &list : nullptr;
        st[given] = run_forward<T>(p, true, false, xs);
        g[given] = run_backward<T>(p, true, 0.25, xs);
      }
      EXPECT_EQ(st[1].h, st[0].h);
      EXPECT_EQ(st[1].gates, st[0].gates);
      EXPECT_EQ(g[1].dx, g[0].dx);
      EXPECT_EQ(g[1].dwx, g[0].dwx);
      EXPECT_EQ(g[1].dwh, g[0].dwh);
      EXPECT_EQ(g[1].db, g[0].db);
      EXPECT_NE(g[0].dwx, grads_filled<T>(s, 0.25).dwx);  // the gradient did arrive
    };
    both(0.0);
    both(0.0f);
  }
}

// Time-reverses a (B, T, D) tensor.
std::vector<double> flip_time(const std::vector<double>& v, int64_t B, int64_t T, int64_t D) {
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      std::copy_n(v.begin() + (b * T + t) * D, D, out.begin() + (b * T + (T - 1 - t)) * D);
  return out;
}

TEST(OpsLstm, ReverseEqualsForwardOnTimeReversedSequence) {
  for (LstmShape s : {shape(2, 5, 3, 4, true), shape(3, 3, 6, 2, true), shape(1, 1, 2, 3, true)}) {
    SCOPED_TRACE(describe(s, true));
    const auto rev = make_problem(s, 3);
    Problem fwd = rev;
    fwd.s.reverse = false;
    fwd.x = flip_time(rev.x, s.B, s.T, s.C);
    fwd.dh = flip_time(rev.dh, s.B, s.T, s.Hd);
    const auto a = run_forward<double>(rev, true, false);
    const auto b = run_forward<double>(fwd, true, false);
    EXPECT_LE(rel_err(a.h, flip_time(b.h, s.B, s.T, s.Hd)), 1e-14);
    // The caches are (T, B, D): one "sequence" of T rows of B·D values.
    EXPECT_LE(rel_err(a.c, flip_time(b.c, 1, s.T, s.B * s.Hd)), 1e-14);
    EXPECT_LE(rel_err(a.gates, flip_time(b.gates, 1, s.T, s.B * 4 * s.Hd)), 1e-14);
    const auto ga = run_backward<double>(rev, true, 0.0);
    const auto gb = run_backward<double>(fwd, true, 0.0);
    EXPECT_LE(rel_err(ga.dx, flip_time(gb.dx, s.B, s.T, s.C)), 1e-13);
    EXPECT_LE(rel_err(ga.dwx, gb.dwx), 1e-13);
    EXPECT_LE(rel_err(ga.dwh, gb.dwh), 1e-13);
    EXPECT_LE(rel_err(ga.db, gb.db), 1e-13);
  }
}

// Backward into buffers filled with −1.25 gives the values into zeros, shifted; each buffer
// alone (the others null) gives the same values as all four together.
void backward_accumulates_and_skips_null_buffers(const Problem& p) {
  const LstmShape& s = p.s;
  const auto g0 = run_backward<double>(p, true, 0.0);
  const auto g1 = run_backward<double>(p, true, -1.25);
  auto shifted = [](std::vector<double> v) {
    for (auto& x : v) x -= 1.25;
    return v;
  };
  // A gradient sums up to B·T terms into its buffer: starting from −1.25 rather than 0 rounds each
  // partial sum differently, by at most about one unit in the last place a term.
  const double tol = std::max(1e-15, double(s.B * s.T) * std::numeric_limits<double>::epsilon());
  EXPECT_LE(rel_err(g1.dx, shifted(g0.dx)), tol);
  EXPECT_LE(rel_err(g1.dwx, shifted(g0.dwx)), tol);
  EXPECT_LE(rel_err(g1.dwh, shifted(g0.dwh)), tol);
  EXPECT_LE(rel_err(g1.db, shifted(g0.db)), tol);
  // Each buffer alone gives the same values as all together.
  const auto st = run_forward<double>(p, true, false);
  for (int which = 0; which < 4; ++which) {
    auto g = grads_filled<double>(s, 0.0);
    lstm_backward<double>(which == 0 ? g.dx.data() : nullptr, which == 1 ? g.dwx.data() : nullptr,
                          which == 2 ? g.dwh.data() : nullptr, which == 3 ? g.db.data() : nullptr,
                          p.dh.data(), p.x.data(), p.wx.data(), p.wh.data(), st.h.data(),
                          st.c.data(), st.tanh_c.data(), st.gates.data(), s);
    const std::vector<double>* mine[] = {&g.dx, &g.dwx, &g.dwh, &g.db};
    const std::vector<double>* all[] = {&g0.dx, &g0.dwx, &g0.dwh, &g0.db};
    for (int k = 0; k < 4; ++k) {
      if (k == which) {
        EXPECT_EQ(*mine[k], *all[k]) << "buffer " << k;
      } else {
        EXPECT_EQ(*mine[k], std::vector<double>(mine[k]->size(), 0.0)) << "buffer " << k;
      }
    }
  }
}

TEST(OpsLstm, BackwardAccumulatesAndSkipsNullBuffers) {
  // Dense inputs and one-hot ones (the sparse path, whose dwx is made on the non-zeros), in both
  // directions; the buffers alone include a network's first layer's case (dx null).
  for (const Problem& p :
       {make_problem(shape(3, 4, 2, 3, false), 4), make_problem(shape(3, 4, 2, 3, true), 4),
        one_hot_problem(shape(70, 5, 9, 9, false)), one_hot_problem(shape(70, 5, 9, 9, true))}) {
    SCOPED_TRACE(describe(p.s, true));
    backward_accumulates_and_skips_null_buffers(p);
  }
}

TEST(OpsLstm, SingleStepHasNoRecurrentGradient) {
  const auto p = make_problem(shape(3, 1, 4, 2, false), 5);
  const auto g = run_backward<double>(p, true, 0.75);
  EXPECT_EQ(g.dwh, std::vector<double>(g.dwh.size(), 0.75));
  const auto want = naive_backward(p, true, 0.75);
  EXPECT_LE(rel_err(g.dx, want.dx), 1e-12);
}

TEST(OpsLstm, StatesDependOnlyOnTokensAlreadyRead) {
  for (bool reverse : {false, true}) {
    const LstmShape s = shape(2, 6, 3, 4, reverse);
    const auto p = make_problem(s, 6);
    const int64_t t_changed = 3;
    Problem q = p;
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t k = 0; k < s.C; ++k) q.x[(b * s.T + t_changed) * s.C + k] += 0.5;
    const auto a = run_forward<double>(p, true, false);
    const auto b = run_forward<double>(q, true, false);
    for (int64_t bb = 0; bb < s.B; ++bb) {
      for (int64_t t = 0; t < s.T; ++t) {
        const bool read = reverse ? t <= t_changed : t >= t_changed;
        double diff = 0;
        for (int64_t k = 0; k < s.Hd; ++k)
          diff = std::max(
              diff, std::abs(a.h[(bb * s.T + t) * s.Hd + k] - b.h[(bb * s.T + t) * s.Hd + k]));
        if (read) {
          EXPECT_GT(diff, 1e-6) << "reverse " << reverse << " t " << t;
        } else {
          EXPECT_EQ(diff, 0.0) << "reverse " << reverse << " t " << t;
        }
      }
    }
  }
}

TEST(OpsLstm, BatchRowsAreIndependent) {
  const LstmShape s = shape(3, 5, 2, 3, false);
  const auto p = make_problem(s, 7);
  const auto all = run_forward<double>(p, true, false);
  const auto gall = run_backward<double>(p, true, 0.0);
  std::vector<double> dwx_sum(gall.dwx.size(), 0.0);
  for (int64_t b = 0; b < s.B; ++b) {
    Problem one = p;
    one.s.B = 1;
    one.x.assign(p.x.begin() + b * s.T * s.C, p.x.begin() + (b + 1) * s.T * s.C);
    one.dh.assign(p.dh.begin() + b * s.T * s.Hd, p.dh.begin() + (b + 1) * s.T * s.Hd);
    const auto st = run_forward<double>(one, true, false);
    const std::vector<double> h_b(all.h.begin() + b * s.T * s.Hd,
                                  all.h.begin() + (b + 1) * s.T * s.Hd);
    EXPECT_LE(rel_err(st.h, h_b), 1e-14);
    const auto g = run_backward<double>(one, true, 0.0);
    for (size_t k = 0; k < dwx_sum.size(); ++k) dwx_sum[k] += g.dwx[k];
  }
  EXPECT_LE(rel_err(dwx_sum, gall.dwx), 1e-13);
}

TEST(OpsLstm, EmptyBatchOrSequenceIsANoOpAndBadShapesAreUserErrors) {
  std::vector<double> buf(64, 3.0);
  double* p = buf.data();
  lstm_forward<double>(p, p, p, p, p, p, p, nullptr, shape(0, 4, 2, 2, false));
  lstm_forward<double>(p, p, p, p, p, p, p, nullptr, shape(2, 0, 2, 2, true));
  lstm_backward<double>(p, p, p, p, p, p, p, p, p, p, p, p, shape(0, 3, 2, 2, false));
  EXPECT_EQ(buf, std::vector<double>(64, 3.0));
  for (const LstmShape& bad : {shape(1, 2, 2, 0, false), shape(1, 2, 0, 2, false),
                               shape(-1, 2, 2, 2, false), shape(1, -2, 2, 2, true)}) {
    EXPECT_THROW(lstm_forward<double>(p, p, p, p, p, p, p, nullptr, bad), UserError);
    EXPECT_THROW(lstm_forward_ref<double>(p, p, p, p, p, p, p, nullptr, bad), UserError);
    EXPECT_THROW(lstm_backward<double>(p, p, p, p, p, p, p, p, p, p, p, p, bad), UserError);
  }
}

TEST(OpsLstm, GradcheckRowsPass) {
  std::vector<GradcheckRow> rows;
  gradcheck_rows_lstm(rows);
  ASSERT_GE(rows.size(), 2u);
  for (const auto& row : rows) test::gradcheck_expect_pass(row, 20240605);
}

}  // namespace
}  // namespace attn
