// core/memory.h: size arithmetic, byte formatting, the memory check, and the huge-page hint
// (which must never change what a buffer holds).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/memory.h"

namespace attn {
namespace {

TEST(CoreMemory, FormatBytes) {
  EXPECT_EQ(format_bytes(17), "17 B");
  EXPECT_EQ(format_bytes(12 * 1024), "12.0 KiB");
  EXPECT_EQ(format_bytes(3ull << 29), "1.5 GiB");
}

TEST(CoreMemory, CheckedMulDetectsOverflow) {
  uint64_t out = 0;
  EXPECT_TRUE(checked_mul(1ull << 31, 1ull << 31, &out));
  EXPECT_EQ(out, 1ull << 62);
  EXPECT_FALSE(checked_mul(1ull << 32, 1ull << 32, &out));
}

TEST(CoreMemory, CheckRefusesMoreThanIsAvailableNamingWhatAndHow) {
  EXPECT_NO_THROW(memory_check(1024, "a small buffer", "n/a"));
  try {
    memory_check(~uint64_t{0} / 2, "a huge buffer", "lower the size");
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("a huge buffer"), std::string::npos) << m;
    EXPECT_NE(m.find("lower the size"), std::string::npos) << m;
  }
}

TEST(CoreMemory, HugePageHintKeepsContentsAndAcceptsAnyRange) {
  // 40 MiB of doubles from std::vector (not 2 MiB aligned): hint before and after writing,
  // on an unaligned interior range, a small range and a null pointer.
  std::vector<double> v(5 << 20);
  memory_advise_huge_pages(v.data(), v.size() * sizeof(double));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.5;
  memory_advise_huge_pages(v.data() + 3, (v.size() - 7) * sizeof(double));
  memory_advise_huge_pages(v.data(), 4096);
  memory_advise_huge_pages(nullptr, 1 << 30);
  for (size_t i = 0; i < v.size(); i += 4099) ASSERT_EQ(v[i], static_cast<double>(i) * 0.5) << i;
  EXPECT_EQ(v.back(), static_cast<double>(v.size() - 1) * 0.5);
}

}  // namespace
}  // namespace attn
