// Tests of the float kernels compiled once per instruction set (ops/isa.h): the same computation
// in the generic copy and in each vector copy. A test of the same bits is a TEST_P over
// kVectorCopies (ATTN_ISA_COPIES_INSTANTIATE) comparing the generic copy with GetParam(); it is
// skipped, with a message, where this CPU or build has no such copy.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ops/isa.h"

namespace attn {
// gtest prints a copy by its name ("GetParam() = avx512" in test listings).
inline void PrintTo(IsaCopy copy, std::ostream* os) { *os << isa_name(copy); }
}  // namespace attn

namespace attn::test {

// Runs one copy until it goes out of scope, then restores the automatic choice (also when an
// assertion returns early).
class IsaForced {
 public:
  explicit IsaForced(IsaCopy copy) { isa_force(copy); }
  ~IsaForced() { isa_force(IsaCopy::automatic); }
  IsaForced(const IsaForced&) = delete;
  IsaForced& operator=(const IsaForced&) = delete;
};

// The copies each compared with the generic one (every copy against generic: all alike).
inline constexpr IsaCopy kVectorCopies[] = {IsaCopy::avx2, IsaCopy::avx512};

inline std::string isa_param_name(const testing::TestParamInfo<IsaCopy>& info) {
  return isa_name(info.param);
}

// f() computed with the generic copy and with `copy`: {generic, copy}. The caller has checked
// isa_cpu_has(copy) (ATTN_SKIP_WITHOUT_COPY).
template <class F>
auto generic_and(IsaCopy copy, F f) -> std::pair<decltype(f()), decltype(f())> {
  auto generic = [&] {
    const IsaForced forced(IsaCopy::generic);
    return f();
  }();
  const IsaForced forced(copy);
  auto other = f();
  return std::make_pair(std::move(generic), std::move(other));
}

// a and b hold the same bits (±0 and NaN payloads told apart); the first difference is reported.
inline void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b,
                             const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    if (std::bit_cast<uint32_t>(a[k]) != std::bit_cast<uint32_t>(b[k])) {
      ADD_FAILURE() << what << "[" << k << "]: " << a[k] << " in the generic copy, " << b[k];
      return;
    }
  }
}

}  // namespace attn::test

// Skips the current test (with a message) where this build or CPU cannot run `copy`.
#define ATTN_SKIP_WITHOUT_COPY(copy)                                                        \
  do {                                                                                      \
    if (!::attn::isa_cpu_has(copy))                                                         \
      GTEST_SKIP() << "this " << (ATTN_HAVE_ISA_COPIES ? "CPU" : "build") << " has no "     \
                   << ::attn::isa_name(copy) << " copy of the float kernels to compare";    \
  } while (0)

// Instantiates the TEST_P suite `suite` once per vector copy (…/avx2, …/avx512).
#define ATTN_ISA_COPIES_INSTANTIATE(suite)                                                  \
  INSTANTIATE_TEST_SUITE_P(Copies, suite, testing::ValuesIn(::attn::test::kVectorCopies), \
                           ::attn::test::isa_param_name)
