// The float element-wise kernels (ops/vmath.h) against double on dense grids, their exact values
// at the ends (±0, ±inf, NaN), each vector copy (AVX2, AVX-512) against the generic one
// (ops/isa.h): same bits; and the choice of copy (ATTNLAB_ISA's values).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/float_env.h"
#include "isa_test_helpers.h"
#include "ops/isa.h"
#include "ops/vmath.h"

namespace attn {
namespace {

std::vector<float> grid(float lo, float hi, int n) {
  std::vector<float> x;
  for (int k = 0; k <= n; ++k)
    x.push_back(lo + (hi - lo) * static_cast<float>(k) / static_cast<float>(n));
  return x;
}

// The references in double, and the relative error bounds vmath.h states for the float kernels.
double sigmoid_ref(double v) { return 1.0 / (1.0 + std::exp(-v)); }
double tanh_ref(double v) { return std::tanh(v); }
double exp_ref(double v) { return std::exp(v); }
constexpr double kSigmoidTanhBound = 2.1e-7, kExpBound = 1e-7;

// Worst relative error of f against ref over x (skipping exact zeros of ref).
template <class F, class R>
double worst_rel(const std::vector<float>& x, F f, R ref) {
  std::vector<float> y(x.size());
  f(y.data(), x.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const double r = ref(static_cast<double>(x[k]));
    if (r != 0) worst = std::max(worst, std::abs(y[k] - r) / std::abs(r));
  }
  return worst;
}

TEST(Vmath, TanhIsAccurateNearZeroAndEverywhere) {
  EXPECT_LE(worst_rel(grid(-100, 100, 2000000), vmath_tanh<float>, tanh_ref), kSigmoidTanhBound);
  EXPECT_LE(worst_rel(grid(-1e-3f, 1e-3f, 200000), vmath_tanh<float>, tanh_ref), kSigmoidTanhBound);
  std::vector<float> tiny{1e-30f, -1e-38f, 1e-44f};  // down to denormals: tanh x = x
  EXPECT_LE(worst_rel(tiny, vmath_tanh<float>, tanh_ref), kSigmoidTanhBound);
}

// The bounds vmath.h states (measured on every float: the heavy test below).
TEST(Vmath, SigmoidAndExpAreAccurate) {
  EXPECT_LE(worst_rel(grid(-87, 100, 2000000), vmath_sigmoid<float>, sigmoid_ref),
            kSigmoidTanhBound);
  EXPECT_LE(worst_rel(grid(-87, 0, 2000000), vmath_exp_nonpositive<float>, exp_ref), kExpBound);
}

// Every float through the three kernels (the active copy; the others give its bits), against
// double, with subnormals kept and flushed: the bounds vmath.h states, on the ranges it states
// them for (sigmoid and exp down to −87; with subnormals flushed, inputs of at least 2^-126 in
// magnitude). Label heavy (tests/heavy_tests.cmake): about 3 minutes.
TEST(Vmath, EveryFloatWithinItsBound) {
  constexpr int64_t kChunk = int64_t(1) << 20;
  std::vector<float> x(kChunk), nonpositive(kChunk), s(kChunk), t(kChunk), e(kChunk);
  for (const bool flush : {false, true}) {
    std::optional<SubnormalsFlushed> flushed;
    if (flush) flushed.emplace();
    double worst_s = 0, worst_t = 0, worst_e = 0;
    for (int64_t base = 0; base < (int64_t(1) << 32); base += kChunk) {
      for (int64_t k = 0; k < kChunk; ++k) {
        x[k] = std::bit_cast<float>(static_cast<uint32_t>(base + k));
        nonpositive[k] = -std::abs(x[k]);
      }
      vmath_sigmoid<float>(s.data(), x.data(), kChunk);
      vmath_tanh<float>(t.data(), x.data(), kChunk);
      vmath_exp_nonpositive<float>(e.data(), nonpositive.data(), kChunk);
      for (int64_t k = 0; k < kChunk; ++k) {
        const double v = x[k];
        if (!std::isfinite(v) || (flush && std::abs(v) < std::numeric_limits<float>::min()))
          continue;
        const double rs = sigmoid_ref(v), rt = tanh_ref(v), re = exp_ref(nonpositive[k]);
        if (v >= -87) worst_s = std::max(worst_s, std::abs(s[k] - rs) / rs);
        if (rt != 0) worst_t = std::max(worst_t, std::abs(t[k] - rt) / std::abs(rt));
        if (nonpositive[k] >= -87) worst_e = std::max(worst_e, std::abs(e[k] - re) / re);
      }
    }
    const std::string mode = flush ? "subnormals flushed" : "IEEE";
    EXPECT_LE(worst_s, kSigmoidTanhBound) << "sigmoid, " << mode;
    EXPECT_LE(worst_t, kSigmoidTanhBound) << "tanh, " << mode;
    EXPECT_LE(worst_e, kExpBound) << "exp, " << mode;
  }
}

// Down to the clamp at −87, where e^x is within a factor 8 of 2^-126: the last step, 2^n·(e^r − 1)
// + 2^n, is one fused multiply-add, so flushing subnormals (how attnlab trains) loses nothing. (A
// product then a sum flushed the product there: 41 % off before 2026-12-07.)
TEST(Vmath, AccurateNearTheClampWithSubnormalsFlushed) {
  const SubnormalsFlushed flushed;
  const auto near_clamp = grid(-87, -80, 200000);
  for (const IsaCopy copy : {IsaCopy::generic, IsaCopy::avx2, IsaCopy::avx512}) {
    if (!isa_cpu_has(copy)) continue;
    const test::IsaForced forced(copy);
    EXPECT_LE(worst_rel(near_clamp, vmath_sigmoid<float>, sigmoid_ref), kSigmoidTanhBound)
        << isa_name(copy);
    EXPECT_LE(worst_rel(near_clamp, vmath_exp_nonpositive<float>, exp_ref), kExpBound)
        << isa_name(copy);
  }
}

TEST(Vmath, ExactValuesAtTheEnds) {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{0.0f, -0.0f, inf, -inf, nan, 20.0f, -20.0f}, t(x.size()), s(x.size());
  vmath_tanh<float>(t.data(), x.data(), static_cast<int64_t>(x.size()));
  vmath_sigmoid<float>(s.data(), x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(t[0], 0.0f);
  EXPECT_FALSE(std::signbit(t[0]));
  EXPECT_EQ(t[1], 0.0f);
  EXPECT_TRUE(std::signbit(t[1]));
  EXPECT_EQ(t[2], 1.0f);
  EXPECT_EQ(t[3], -1.0f);
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_EQ(t[5], 1.0f);
  EXPECT_EQ(t[6], -1.0f);
  EXPECT_EQ(s[0], 0.5f);
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_GT(s[3], 0.0f);  // exp(−87)-sized, never a denormal
  EXPECT_LE(s[3], 1.7e-38f);
  EXPECT_TRUE(std::isnan(s[4]));
}

class VmathCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(VmathCopies, GiveTheGenericCopysBits) {
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  auto x = grid(-100, 100, 1000003);
  const auto more = grid(-1e-3f, 1e-3f, 100001);
  x.insert(x.end(), more.begin(), more.end());
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  for (float v :
       {nan, -nan, inf, -inf, 0.0f, -0.0f, 1e-40f, -1e-44f, std::numeric_limits<float>::min(),
        150.0f, -1e30f, 87.0f, -87.0f, 88.5f, std::numeric_limits<float>::max()})
    x.push_back(v);
  std::vector<float> nonpositive;
  for (float v : x) nonpositive.push_back(-std::abs(v));
  using Fn = void (*)(float*, const float*, int64_t);
  const struct {
    Fn f;
    const std::vector<float>* in;
    const char* name;
  } cases[] = {{vmath_sigmoid<float>, &x, "sigmoid"},
               {vmath_tanh<float>, &x, "tanh"},
               {vmath_exp_nonpositive<float>, &nonpositive, "exp"}};
  // With subnormals kept and flushed (how attnlab trains: the generic copy's emulated fma and the
  // FMA instructions must agree in both).
  for (const bool flush : {false, true}) {
    std::optional<SubnormalsFlushed> flushed;
    if (flush) flushed.emplace();
    for (const auto& c : cases) {
      // The whole array, a call of groups of vectors, single vectors and a padded tail (85 = 64
      // + 16 + 5 floats: the AVX-512 copy's group of four, a vector, a tail), and the tail alone.
      for (int64_t n : {static_cast<int64_t>(c.in->size()), int64_t{85}, int64_t{11}}) {
        const auto [generic, other] = test::generic_and(GetParam(), [&] {
          std::vector<float> y(static_cast<size_t>(n));
          c.f(y.data(), c.in->data() + (c.in->size() - static_cast<size_t>(n)), n);
          return y;
        });
        test::expect_same_bits(generic, other,
                               std::string(c.name) + " of " + std::to_string(n) +
                                   (flush ? ", subnormals flushed" : ""));
      }
    }
  }
}

ATTN_ISA_COPIES_INSTANTIATE(VmathCopies);

TEST(Isa, TheActiveCopyIsOneThisCpuCanRun) {
  const IsaCopy active = isa_active();
  EXPECT_NE(active, IsaCopy::automatic);
  EXPECT_TRUE(isa_cpu_has(active)) << isa_name(active);
  EXPECT_TRUE(isa_cpu_has(IsaCopy::generic));
  // Forcing a copy and going back.
  {
    const test::IsaForced forced(IsaCopy::generic);
    EXPECT_EQ(isa_active(), IsaCopy::generic);
  }
  EXPECT_EQ(isa_active(), active);
  if (isa_cpu_has(IsaCopy::avx512)) {
    EXPECT_TRUE(isa_cpu_has(IsaCopy::avx2));
  }
}

// The copies' tests skip where isa_cpu_has says the CPU (or build) cannot run a copy: checked
// here against the kernel's own CPU flags, so a wrong detection cannot hide them.
// A build without copies (not x86-64, or -march=native) reports none whatever the CPU has; a build
// with them is an x86-64 Linux one, whose /proc/cpuinfo always has a flags line.
TEST(Isa, CpuDetectionAgreesWithProcCpuinfo) {
  std::string flags;
  if (ATTN_HAVE_ISA_COPIES) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("flags", 0) == 0) {
        flags = line + " ";
        break;
      }
    ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
  }
  const auto has = [&](const char* f) {
    return flags.find(std::string(" ") + f + " ") != std::string::npos;
  };
  EXPECT_EQ(isa_cpu_has(IsaCopy::avx2), ATTN_HAVE_ISA_COPIES && has("avx2") && has("fma")) << flags;
  EXPECT_EQ(isa_cpu_has(IsaCopy::avx512), ATTN_HAVE_ISA_COPIES && has("avx512f") &&
                                              has("avx512bw") && has("avx512dq") && has("avx512vl"))
      << flags;
}

TEST(Isa, AttnlabIsaValues) {
  // Unset or empty: the default, the widest copy the CPU can run.
  const IsaCopy fallback = isa_cpu_has(IsaCopy::avx512) ? IsaCopy::avx512
                           : isa_cpu_has(IsaCopy::avx2) ? IsaCopy::avx2
                                                        : IsaCopy::generic;
  EXPECT_EQ(isa_choose(nullptr), fallback);
  EXPECT_EQ(isa_choose(""), fallback);
  EXPECT_EQ(isa_choose("generic"), IsaCopy::generic);
  for (IsaCopy copy : {IsaCopy::avx2, IsaCopy::avx512}) {
    if (isa_cpu_has(copy)) {
      EXPECT_EQ(isa_choose(isa_name(copy)), copy);
    } else {
      EXPECT_THROW(isa_choose(isa_name(copy)), UserError);
    }
  }
  for (const char* bad : {"avx", "AVX2", "automatic", "avx512f", " generic"}) {
    try {
      isa_choose(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("ATTNLAB_ISA='") + bad +
                    "' must be generic, avx2 or avx512 (or unset for the default)");
    }
  }
}

}  // namespace
}  // namespace attn
