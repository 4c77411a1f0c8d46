// Tests of the fused attention kernels (ops/attention_fused.h, ops/third_order_fused.h): the
// fused path against the GEMM path (forward, and every gradient of the backward with its +=
// semantics) over shapes with ragged tiles, causal and exclude_self masks and shared keys; the
// dispatch by head size (AttentionPath::automatic; and the GEMM path, which the other tests no
// longer reach at their small heads, against the naive reference); and the same bits from every ISA
// copy.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attention_test_helpers.h"
#include "ops/attention.h"
#include "ops/attention_fused.h"
#include "ops/isa.h"
#include "ops/third_order_attention.h"

namespace attn {
namespace {
using namespace test_attention;

// Everything one attention forward + backward produces.
template <class T>
struct AttnResult {
  std::vector<T> out, probs, dq, dk, dv;
  T dscale = 0;
  std::vector<const std::vector<T>*> tensors() const { return {&out, &probs, &dq, &dk, &dv}; }
};

// Every tensor of two results within tol of each other (rel_diff), and their dscale.
template <class R>
void expect_close(const R& f, const R& b, double tol, const std::string& at) {
  const auto tf = f.tensors(), tb = b.tensors();
  for (size_t i = 0; i < tf.size(); ++i)
    EXPECT_LE(rel_diff(*tf[i], *tb[i]), tol) << at << " #" << i;
  EXPECT_NEAR(double(f.dscale), double(b.dscale), tol * (1 + std::abs(double(b.dscale)))) << at;
}

// Every tensor of two results and their dscale bit for bit the same.
template <class R>
bool same_bits(const R& f, const R& b) {
  const auto tf = f.tensors(), tb = b.tensors();
  for (size_t i = 0; i < tf.size(); ++i)
    if (tf[i]->size() != tb[i]->size() ||
        std::memcmp(tf[i]->data(), tb[i]->data(), tf[i]->size() * sizeof(f.dscale)) != 0)
      return false;
  return std::memcmp(&f.dscale, &b.dscale, sizeof(f.dscale)) == 0;
}

// poison ≥ 0: that token of the first sequence gets an inf in its query, value and output
// gradient (head 0, first entry).
template <class T>
AttnResult<T> attention_run(const AttentionShape& s, bool fused, uint64_t seed,
                            int64_t poison = -1) {
  const int64_t rows = s.B * s.N, nq = rows * s.H * s.dk, nv = rows * s.H * s.dv;
  const int64_t nk = s.shared_keys ? rows * s.dk : nq;
  auto q = random_vec<T>(nq, seed, "test.q");
  const auto k = random_vec<T>(nk, seed, "test.k");
  auto v = random_vec<T>(nv, seed, "test.v"), dout = random_vec<T>(nv, seed, "test.do");
  if (poison >= 0) {
    const T inf = std::numeric_limits<T>::infinity();
    q[poison * s.H * s.dk] = inf;
    v[poison * s.H * s.dv] = inf;
    dout[poison * s.H * s.dv] = -inf;
  }
  AttnResult<T> r;
  r.out.assign(nv, T(0));
  r.probs.assign(s.B * s.H * s.N * s.N, T(0));
  // The gradients start nonzero: the backward adds to them.
  r.dq = random_vec<T>(nq, seed, "test.dq0");
  r.dk = random_vec<T>(nk, seed, "test.dk0");
  r.dv = random_vec<T>(nv, seed, "test.dv0");
  r.dscale = T(0.5);
  const T scale = T(0.7);
  AttentionShape sp = s;
  sp.path = fused ? AttentionPath::fused : AttentionPath::blas;
  attention_forward<T>(r.out.data(), r.probs.data(), q.data(), k.data(), v.data(), scale, sp);
  attention_backward<T>(r.dq.data(), r.dk.data(), r.dv.data(), &r.dscale, dout.data(), q.data(),
                        k.data(), v.data(), r.probs.data(), scale, sp);
  return r;
}

// (B, N, H, dk, dv, exclude_self, score_bits, shared_keys, causal): N and the head sizes off
// the 4-row and 16/8/4-column tiles, one row, the largest fused head.
const std::vector<AttentionShape> kShapes = {
    {1, 1, 1, 1, 1, false, 0, false, false},   {2, 7, 3, 5, 3, true, 0, false, false},
    {3, 33, 2, 17, 9, false, 0, false, false}, {2, 32, 1, 16, 4, false, 0, true, false},
    {1, 21, 2, 64, 64, true, 0, false, false}, {2, 37, 2, 3, 4, false, 0, false, true},
    {1, 64, 2, 16, 16, false, 0, true, true},  {1, 5, 1, 8, 13, false, 0, false, true}};

template <class T>
void check_attention_fused_vs_blas(double tol) {
  for (const AttentionShape& s : kShapes) {
    const auto f = attention_run<T>(s, true, 3), b = attention_run<T>(s, false, 3);
    const std::string at = "N=" + std::to_string(s.N) + " dk=" + std::to_string(s.dk) +
                           " dv=" + std::to_string(s.dv) + " causal=" + std::to_string(s.causal);
    expect_close(f, b, tol, at);
    // Masked probabilities are exactly 0 in the fused path too.
    for (int64_t bh = 0; bh < s.B * s.H; ++bh)
      for (int64_t i = 0; i < s.N; ++i)
        for (int64_t j = 0; j < s.N; ++j)
          if ((s.causal && j > i) || (s.exclude_self && j == i)) {
            ASSERT_EQ(f.probs[(bh * s.N + i) * s.N + j], T(0)) << at;
          }
  }
}

TEST(AttentionFused, MatchesTheGemmPathDouble) { check_attention_fused_vs_blas<double>(1e-12); }
TEST(AttentionFused, MatchesTheGemmPathFloat) { check_attention_fused_vs_blas<float>(2e-5); }

// attention_forward / _backward take the fused kernel up to kAttentionFusedMaxDim and the GEMM
// path above it; the GEMM path still matches the naive reference there.
TEST(AttentionFused, DispatchByHeadSize) {
  EXPECT_TRUE(attention_fused_applies(kAttentionFusedMaxDim, kAttentionFusedMaxDim));
  EXPECT_FALSE(attention_fused_applies(kAttentionFusedMaxDim + 1, 4));
  EXPECT_FALSE(attention_fused_applies(4, kAttentionFusedMaxDim + 1));
  for (const int64_t d : {int64_t(16), kAttentionFusedMaxDim + 8}) {
    for (const bool causal : {false, true}) {
      const AttentionShape s{2, 19, 2, d, d, false, 0, false, causal};
      const int64_t nq = s.B * s.N * s.H * d;
      const auto q = random_vec<double>(nq, 5, "test.q"), k = random_vec<double>(nq, 5, "test.k");
      const auto v = random_vec<double>(nq, 5, "test.v");
      std::vector<double> out(nq), probs(s.B * s.H * s.N * s.N), out_p(nq), probs_p(probs.size());
      std::vector<double> out_r(nq), probs_r(probs.size());
      attention_forward<double>(out.data(), probs.data(), q.data(), k.data(), v.data(), 0.3, s);
      AttentionShape sp = s;
      sp.path = d <= kAttentionFusedMaxDim ? AttentionPath::fused : AttentionPath::blas;
      attention_forward<double>(out_p.data(), probs_p.data(), q.data(), k.data(), v.data(), 0.3,
                                sp);
      attention_forward_ref<double>(out_r.data(), probs_r.data(), q.data(), k.data(), v.data(), 0.3,
                                    s);
      EXPECT_EQ(out, out_p) << "d=" << d;
      EXPECT_EQ(probs, probs_p) << "d=" << d;
      EXPECT_LE(rel_diff(out, out_r), 1e-12) << "d=" << d;
      EXPECT_LE(rel_diff(probs, probs_r), 1e-12) << "d=" << d;
    }
  }
}

template <class T>
struct TriResult {
  std::vector<T> out, probs, dq, dk1, dk2, dv1, dv2;
  T dscale = 0;
  std::vector<const std::vector<T>*> tensors() const {
    return {&out, &probs, &dq, &dk1, &dk2, &dv1, &dv2};
  }
};

// Which gradients a backward asks for (bits of `wanted` below); the others get null.
enum TriGrad : unsigned {
  kDq = 1,
  kDk1 = 2,
  kDk2 = 4,
  kDv1 = 8,
  kDv2 = 16,
  kDscale = 32,
  kAll = kDq | kDk1 | kDk2 | kDv1 | kDv2 | kDscale
};

template <class T>
TriResult<T> third_order_run(const ThirdOrderShape& s, bool fused, uint64_t seed,
                             unsigned wanted = kAll) {
  const int64_t nk = s.B * s.N * s.H * s.dk, nv = s.B * s.N * s.H * s.dv;
  const auto q = random_vec<T>(nk, seed, "test.q"), k1 = random_vec<T>(nk, seed, "test.k1");
  const auto k2 = random_vec<T>(nk, seed, "test.k2"), v1 = random_vec<T>(nv, seed, "test.v1");
  const auto v2 = random_vec<T>(nv, seed, "test.v2"), dout = random_vec<T>(nv, seed, "test.do");
  TriResult<T> r;
  r.out.assign(nv, T(0));
  r.probs.assign(s.B * s.H * s.N * s.N * s.N, T(0));
  // The gradients start nonzero (the backward adds to them): dq, dk1, dk2, dv1, dv2.
  const int64_t sizes[] = {nk, nk, nk, nv, nv};
  const char* streams[] = {"test.dq0", "test.dk10", "test.dk20", "test.dv10", "test.dv20"};
  std::vector<T>* grads[] = {&r.dq, &r.dk1, &r.dk2, &r.dv1, &r.dv2};
  for (int g = 0; g < 5; ++g) *grads[g] = random_vec<T>(sizes[g], seed, streams[g]);
  r.dscale = T(0.5);
  const T scale = T(0.6);
  ThirdOrderShape sp = s;
  sp.path = fused ? AttentionPath::fused : AttentionPath::blas;
  third_order_forward<T>(r.out.data(), r.probs.data(), q.data(), k1.data(), k2.data(), v1.data(),
                         v2.data(), scale, sp);
  auto want = [&](unsigned bit, std::vector<T>& g) { return (wanted & bit) ? g.data() : nullptr; };
  third_order_backward<T>(want(kDq, r.dq), want(kDk1, r.dk1), want(kDk2, r.dk2), want(kDv1, r.dv1),
                          want(kDv2, r.dv2), (wanted & kDscale) ? &r.dscale : nullptr, dout.data(),
                          q.data(), k1.data(), k2.data(), v1.data(), v2.data(), r.probs.data(),
                          scale, sp);
  return r;
}

// (B, N, H, dk, dv, exclude_self, score_bits, causal).
const std::vector<ThirdOrderShape> kTriShapes = {
    {1, 1, 1, 1, 1, false, 0, false},   {2, 7, 3, 5, 3, true, 0, false},
    {2, 16, 1, 16, 4, false, 0, false}, {1, 19, 2, 17, 9, false, 0, false},
    {2, 13, 2, 3, 2, false, 0, true},   {1, 18, 1, 16, 4, false, 0, true},
    {2, 13, 2, 3, 2, false, 5, true},   {2, 7, 3, 5, 3, true, 4, false},
    {1, 24, 1, 8, 5, true, 0, false}};  // N, dk: 32-byte vectors in the AVX-512 copy's pair tables

template <class T>
void check_third_order_fused_vs_blas(double tol) {
  for (const ThirdOrderShape& s : kTriShapes) {
    const auto f = third_order_run<T>(s, true, 4), b = third_order_run<T>(s, false, 4);
    const std::string at = "N=" + std::to_string(s.N) + " dk=" + std::to_string(s.dk) +
                           " causal=" + std::to_string(s.causal);
    expect_close(f, b, tol, at);
  }
}

TEST(ThirdOrderFused, MatchesTheGemmPathDouble) { check_third_order_fused_vs_blas<double>(1e-12); }
TEST(ThirdOrderFused, MatchesTheGemmPathFloat) { check_third_order_fused_vs_blas<float>(2e-5); }

// A backward asked for some gradients gives those the bits it gives when asked for all, and
// leaves the others as they were (null), on the fused path in float and double.
template <class T>
void check_third_order_null_gradients() {
  const unsigned subsets[] = {kDq,     kDk1,        kDk2,          kDv1,       kDv2,
                              kDscale, kDv1 | kDv2, kDq | kDscale, kDk1 | kDv2};
  for (const ThirdOrderShape& s : kTriShapes) {
    const auto all = third_order_run<T>(s, true, 5), init = third_order_run<T>(s, true, 5, 0);
    for (const unsigned w : subsets) {
      const auto r = third_order_run<T>(s, true, 5, w);
      const std::string at = "N=" + std::to_string(s.N) + " causal=" + std::to_string(s.causal) +
                             " wanted=" + std::to_string(w);
      const std::vector<T>* got[] = {&r.dq, &r.dk1, &r.dk2, &r.dv1, &r.dv2};
      const std::vector<T>* full[] = {&all.dq, &all.dk1, &all.dk2, &all.dv1, &all.dv2};
      const std::vector<T>* start[] = {&init.dq, &init.dk1, &init.dk2, &init.dv1, &init.dv2};
      const unsigned bits[] = {kDq, kDk1, kDk2, kDv1, kDv2};
      for (int g = 0; g < 5; ++g)
        EXPECT_EQ(*got[g], (w & bits[g]) ? *full[g] : *start[g]) << at << " gradient " << g;
      EXPECT_EQ(r.dscale, (w & kDscale) ? all.dscale : init.dscale) << at;
      EXPECT_EQ(r.out, all.out) << at;
    }
  }
}

TEST(ThirdOrderFused, NullGradientsChangeNothingElseFloat) {
  check_third_order_null_gradients<float>();
}
TEST(ThirdOrderFused, NullGradientsChangeNothingElseDouble) {
  check_third_order_null_gradients<double>();
}

TEST(ThirdOrderFused, DispatchByHeadSize) {
  EXPECT_TRUE(third_order_fused_applies(kThirdOrderFusedMaxDim, kThirdOrderFusedMaxDim));
  EXPECT_FALSE(third_order_fused_applies(kThirdOrderFusedMaxDim + 1, 4));
  const ThirdOrderShape s{1, 6, 1, kThirdOrderFusedMaxDim + 3, 2, false, 0, false};
  const int64_t nk = s.N * s.dk, nv = s.N * s.dv;
  const auto q = random_vec<double>(nk, 6, "test.q"), k1 = random_vec<double>(nk, 6, "test.k1");
  const auto k2 = random_vec<double>(nk, 6, "test.k2"), v1 = random_vec<double>(nv, 6, "test.v1");
  const auto v2 = random_vec<double>(nv, 6, "test.v2");
  std::vector<double> out(nv), out_b(nv), out_r(nv), probs(s.N * s.N * s.N);
  third_order_forward<double>(out.data(), nullptr, q.data(), k1.data(), k2.data(), v1.data(),
                              v2.data(), 0.05, s);
  ThirdOrderShape sb = s;
  sb.path = AttentionPath::blas;
  third_order_forward<double>(out_b.data(), nullptr, q.data(), k1.data(), k2.data(), v1.data(),
                              v2.data(), 0.05, sb);
  third_order_forward_ref<double>(out_r.data(), probs.data(), q.data(), k1.data(), k2.data(),
                                  v1.data(), v2.data(), 0.05, s);
  EXPECT_EQ(out, out_b);
  EXPECT_LE(rel_diff(out, out_r), 1e-12);
}

// Every ISA copy this CPU and build can run gives the generic copy's bits (checked in float,
// the type the models train in; the copies are built for double too).
template <class Result, class Run>
void check_copies_alike(Run run, const char* what) {
  isa_force(IsaCopy::generic);
  const Result ref = run();
  for (const IsaCopy copy : {IsaCopy::avx2, IsaCopy::avx512}) {
    if (!isa_cpu_has(copy)) continue;
    isa_force(copy);
    const Result r = run();
    EXPECT_TRUE(same_bits(r, ref))
        << what << ": copy " << isa_name(copy) << " differs from generic";
  }
  isa_force(IsaCopy::automatic);
}

TEST(AttentionFused, EveryIsaCopyGivesTheSameBits) {
  for (const AttentionShape& s : kShapes)
    check_copies_alike<AttnResult<float>>([&] { return attention_run<float>(s, true, 8); },
                                          "attention");
  for (const ThirdOrderShape& s : kTriShapes)
    check_copies_alike<TriResult<float>>([&] { return third_order_run<float>(s, true, 8); },
                                         "third order");
}

// A causal block sums, for some rows, terms beyond the row's span that are exact zeros of A
// (attention_tiles.h, product): with an inf in a later token's value, query or output gradient
// those give 0 · inf = NaN, so which rows they reach must not depend on the copy's tiling.
TEST(AttentionFused, CausalCopiesAgreeWithAnInfInALaterToken) {
  for (const int64_t token : {int64_t(2), int64_t(5), int64_t(9)})
    for (const AttentionShape& s : {AttentionShape{2, 37, 2, 5, 6, false, 0, false, true},
                                    AttentionShape{1, 16, 1, 16, 4, false, 0, true, true}})
      check_copies_alike<AttnResult<float>>(
          [&] { return attention_run<float>(s, true, 8, token); }, "attention with an inf");
}

}  // namespace
}  // namespace attn
