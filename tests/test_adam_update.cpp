// adam_update (ops/adam_update.h), the optimiser's element loop in each ISA copy: the same bits
// as the scalar reference loop, for Adam and AdamW, float and double, lengths around the vector
// widths. (train/optimizer.h's formulas themselves are tested in test_nn_training.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "isa_test_helpers.h"
#include "ops/adam_update.h"

namespace attn {
namespace {

template <class T>
struct State {
  std::vector<T> params, grads, m, v;
};

template <class T>
State<T> state(int64_t n, uint64_t seed) {
  Rng rng(seed, "test.adam_update", 0);
  State<T> s;
  for (int64_t i = 0; i < n; ++i) {
    s.params.push_back(static_cast<T>(rng.gaussian()));
    s.grads.push_back(static_cast<T>(rng.gaussian() * 1e-2));
    s.m.push_back(static_cast<T>(rng.gaussian() * 1e-3));
    s.v.push_back(static_cast<T>(rng.uniform() * 1e-4));  // v ≥ 0, as Adam keeps it
  }
  if (n > 3) s.v[2] = T(0);  // a first step: √0
  return s;
}

template <class T>
AdamScalars<T> scalars(bool decoupled) {
  return {T(0.9), T(0.999), T(1e-3 / 0.19), T(1.0 / 0.0439), T(1e-8), T(0.01), T(1 - 1e-5),
          decoupled};
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
void expect_matches_reference() {
  for (const int64_t n : {1, 7, 15, 16, 17, 33, 1000})
    for (const bool decoupled : {false, true}) {
      State<T> got = state<T>(n, 3 + n), want = got;
      const AdamScalars<T> s = scalars<T>(decoupled);
      for (int step = 0; step < 3; ++step) {
        adam_update(got.params.data(), got.grads.data(), got.m.data(), got.v.data(), n, s);
        adam_update_ref(want.params.data(), want.grads.data(), want.m.data(), want.v.data(), n,
                        s);
      }
      EXPECT_TRUE(same_bits(got.params, want.params)) << "params, n " << n << " " << decoupled;
      EXPECT_TRUE(same_bits(got.m, want.m)) << "m, n " << n;
      EXPECT_TRUE(same_bits(got.v, want.v)) << "v, n " << n;
      EXPECT_FALSE(same_bits(got.params, state<T>(n, 3 + n).params)) << "the update moved nothing";
    }
}

TEST(AdamUpdate, GivesTheScalarLoopsBitsFloat) { expect_matches_reference<float>(); }
TEST(AdamUpdate, GivesTheScalarLoopsBitsDouble) { expect_matches_reference<double>(); }

class AdamUpdateCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(AdamUpdateCopies, GiveTheGenericCopysBits) {
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  for (const bool decoupled : {false, true}) {
    const auto [generic, other] = test::generic_and(GetParam(), [&] {
      State<float> s = state<float>(1001, 9);
      adam_update(s.params.data(), s.grads.data(), s.m.data(), s.v.data(), 1001,
                  scalars<float>(decoupled));
      std::vector<float> all = s.params;
      all.insert(all.end(), s.m.begin(), s.m.end());
      all.insert(all.end(), s.v.begin(), s.v.end());
      return all;
    });
    test::expect_same_bits(generic, other, decoupled ? "AdamW" : "Adam");
  }
}

ATTN_ISA_COPIES_INSTANTIATE(AdamUpdateCopies);

}  // namespace
}  // namespace attn
