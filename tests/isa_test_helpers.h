// Tests of the float kernels compiled twice (ops/isa.h): the same computation in both copies.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <utility>

#include "ops/isa.h"

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

// f() computed with the generic copy and with the AVX2 copy: {generic, avx2}. Where this build or
// CPU has no AVX2 copy there is no second result to compare; what must hold there is that the
// generic copy is the one in use, which is checked, and the result is empty.
template <class F>
auto in_both_copies(F f) -> std::optional<std::pair<decltype(f()), decltype(f())>> {
  if (!isa_cpu_has_avx2()) {
    EXPECT_FALSE(isa_use_avx2()) << "the AVX2 copy is chosen on a CPU or build without one";
    return std::nullopt;
  }
  auto generic = [&] {
    const IsaForced forced(IsaCopy::generic);
    return f();
  }();
  const IsaForced forced(IsaCopy::avx2);
  auto avx2 = f();
  return std::make_pair(std::move(generic), std::move(avx2));
}

}  // namespace attn::test
