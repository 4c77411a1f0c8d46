// The assertions every op's gradient-check test makes on its rows (ops/gradcheck.h): each
// row gives results, and every tensor passes with no skipped probe and at least one probe.
// Prints one line per tensor so that `ctest -V` shows the errors.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "ops/gradcheck.h"

namespace attn::test {

inline void gradcheck_expect_pass(const GradcheckRow& row, uint64_t seed) {
  const auto results = gradcheck_run(row, seed);
  ASSERT_FALSE(results.empty()) << row.name;
  for (const auto& r : results) {
    std::printf("  gradcheck %-30s %-7s seed %llu probes %3lld skipped %lld max error %.2e\n",
                r.row.c_str(), r.tensor.c_str(), static_cast<unsigned long long>(seed),
                static_cast<long long>(r.probes), static_cast<long long>(r.skipped), r.max_error);
    EXPECT_TRUE(r.pass) << r.row << " / " << r.tensor << " seed " << seed << ": max error "
                        << r.max_error << ", skipped " << r.skipped;
    EXPECT_EQ(r.skipped, 0) << r.row << " / " << r.tensor;
    EXPECT_GT(r.probes, 0) << r.row << " / " << r.tensor;
  }
}

}  // namespace attn::test
