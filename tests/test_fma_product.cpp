// fma_product (ops/fma_product.h) against the definition it promises, written here from the
// unpacked matrices: every entry one float accumulator from 0, std::fma over the terms in order,
// then stored or added to c. On ragged shapes (rows across the 8-, 6-, 4-, 2- and 1-row tiles,
// columns across whole and masked panels), B packed from a row-major or a transposed matrix or
// read in place, A row-major or transposed; entries outside the m × n block are never written, nor
// read without accumulate; buffers of exactly the matrices' sizes suffice; every ISA copy gives
// the generic copy's bits, with panels of 16 and of 32 columns; and the products are products
// (against double).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "isa_test_helpers.h"
#include "ops/fma_product.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

struct Shape {
  int64_t m, n, k;
};
constexpr Shape kShapes[] = {{1, 1, 1},   {3, 5, 2},  {8, 32, 7},   {13, 17, 40}, {21, 70, 5},
                             {7, 31, 64}, {6, 33, 3}, {29, 16, 12}, {9, 96, 1},   {4, 64, 0}};

// How B reaches the product.
enum class BForm { packed, packed_from_transposed, in_place };
constexpr BForm kForms[] = {BForm::packed, BForm::packed_from_transposed, BForm::in_place};

std::vector<float> uniform(int64_t n, uint64_t seed, const char* stream) {
  return test_ops_basic::cast<float>(test_ops_basic::random_vec(n, seed, stream));
}

// One product's operands with padded strides: A (m × k) stored row-major (row stride k + 3) or
// transposed (k × m, row stride m + 2); B (k × n) row-major (row stride n + 5) and its transpose
// (n × k, row stride k + 1); c (m × n) in rows of n + 4 floats, the padding a sentinel.
struct Case {
  Shape s;
  bool a_transposed;
  BForm form;
  bool accumulate;
  int64_t lda, ldb, ldbt, ldc;
  std::vector<float> a, b, bt, c;

  Case(Shape s_, bool at, BForm f, bool acc, uint64_t seed)
      : s(s_),
        a_transposed(at),
        form(f),
        accumulate(acc),
        lda(at ? s_.m + 2 : s_.k + 3),
        ldb(s_.n + 5),
        ldbt(s_.k + 1),
        ldc(s_.n + 4) {
    a = uniform((at ? s.k : s.m) * lda, seed, "a");
    b = uniform(s.k * ldb, seed, "b");
    bt.assign(static_cast<size_t>(s.n * ldbt), 0.f);
    for (int64_t t = 0; t < s.k; ++t)
      for (int64_t j = 0; j < s.n; ++j) bt[j * ldbt + t] = b[t * ldb + j];
    c = uniform(s.m * ldc, seed, "c");
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t j = s.n; j < ldc; ++j) c[r * ldc + j] = kSentinel;
  }
  static constexpr float kSentinel = -7.25f;

  float a_at(int64_t r, int64_t t) const { return a_transposed ? a[t * lda + r] : a[r * lda + t]; }

  FmaOperandA operand_a() const {
    return a_transposed ? FmaOperandA{a.data(), 1, lda} : FmaOperandA{a.data(), lda, 1};
  }

  // B as the product reads it, packed in `panels` for the packed forms (panels as wide as the
  // packers make them in the copy in use: its tile width, or 16 for a B of at most 16 columns).
  FmaPanels operand_b(std::vector<float>& panels) const {
    switch (form) {
      case BForm::packed: return fma_pack_panels(panels, b.data(), ldb, false, s.k, s.n);
      case BForm::packed_from_transposed:
        return fma_pack_panels(panels, bt.data(), ldbt, true, s.k, s.n);
      case BForm::in_place: break;
    }
    return fma_panels_in_place(b.data(), ldb, s.n);
  }

  // The product of B as given, in the copy in use (c's copy returned).
  std::vector<float> run_with(const FmaPanels& bp) const {
    std::vector<float> out = c;
    fma_product(out.data(), ldc, operand_a(), bp, s.m, s.k, accumulate);
    return out;
  }

  // The product by fma_product in the copy in use (c's copy returned).
  std::vector<float> run() const {
    std::vector<float> panels;
    return run_with(operand_b(panels));
  }

  // The definition, entry by entry.
  std::vector<float> expected() const {
    std::vector<float> out = c;
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t j = 0; j < s.n; ++j) {
        float acc = 0.f;
        for (int64_t t = 0; t < s.k; ++t) acc = std::fma(a_at(r, t), b[t * ldb + j], acc);
        float& e = out[r * ldc + j];
        e = accumulate ? e + acc : acc;
      }
    return out;
  }

  std::string name() const {
    return "m " + std::to_string(s.m) + ", n " + std::to_string(s.n) + ", k " +
           std::to_string(s.k) + (a_transposed ? ", A transposed" : "") + ", B form " +
           std::to_string(static_cast<int>(form)) + (accumulate ? ", accumulating" : "");
  }
};

// Every case: shapes × A's layout × B's form × accumulate.
template <class F>
void for_each_case(F f) {
  uint64_t seed = 1;
  for (const Shape& s : kShapes)
    for (bool at : {false, true})
      for (BForm form : kForms)
        for (bool acc : {false, true}) f(Case(s, at, form, acc, seed++));
}

TEST(FmaProduct, GivesTheFmaChainOfEveryEntryBitForBit) {
  for_each_case([](const Case& cs) {
    // The expectation keeps c's row padding (the sentinel): compared bit for bit, so a write
    // outside the m × n block fails too.
    test::expect_same_bits(cs.expected(), cs.run(), cs.name());
  });
}

TEST(FmaProduct, IsTheMatrixProductWithinRounding) {
  // Against double: |c − A·B − c₀| ≤ (k + 2)·2⁻²⁴·(Σ|a||b| + |c₀|) (each fma rounds once, then the
  // final add).
  for_each_case([](const Case& cs) {
    const std::vector<float> got = cs.run();
    for (int64_t r = 0; r < cs.s.m; ++r)
      for (int64_t j = 0; j < cs.s.n; ++j) {
        double exact = cs.accumulate ? cs.c[r * cs.ldc + j] : 0.0;
        double mag = std::abs(exact);
        for (int64_t t = 0; t < cs.s.k; ++t) {
          const double term = double(cs.a_at(r, t)) * cs.b[t * cs.ldb + j];
          exact += term;
          mag += std::abs(term);
        }
        const double bound = double(cs.s.k + 2) * std::ldexp(1.0, -24) * mag;
        ASSERT_LE(std::abs(got[r * cs.ldc + j] - exact), bound)
            << cs.name() << " (" << r << ", " << j << ")";
      }
  });
}

TEST(FmaProduct, EntriesDependOnlyOnTheirRowAndColumn) {
  // A row computed alone (m = 1, a one-row tile) gives the bits it gets inside 21 rows (8-row
  // tiles), and one column alone (n = 1, a masked panel) the bits it gets among 70.
  const Case whole(Shape{21, 70, 40}, false, BForm::packed, true, 99);
  const std::vector<float> all = whole.run();
  for (int64_t r : {0, 7, 8, 20}) {
    Case row = whole;
    row.s.m = 1;
    row.a.erase(row.a.begin(), row.a.begin() + r * whole.lda);
    row.c.erase(row.c.begin(), row.c.begin() + r * whole.ldc);
    const std::vector<float> got = row.run();
    for (int64_t j = 0; j < 70; ++j)
      ASSERT_EQ(std::bit_cast<uint32_t>(got[j]), std::bit_cast<uint32_t>(all[r * whole.ldc + j]))
          << "row " << r << " column " << j;
  }
  for (int64_t j : {0, 31, 32, 69}) {
    // Column j alone: B's column j as a k × 1 matrix, c's column j as an m × 1 one.
    std::vector<float> bj(static_cast<size_t>(whole.s.k)), cj(static_cast<size_t>(whole.s.m)),
        panels;
    for (int64_t t = 0; t < whole.s.k; ++t) bj[t] = whole.b[t * whole.ldb + j];
    for (int64_t r = 0; r < whole.s.m; ++r) cj[r] = whole.c[r * whole.ldc + j];
    fma_product(cj.data(), 1, whole.operand_a(),
                fma_pack_panels(panels, bj.data(), 1, false, whole.s.k, 1), whole.s.m, whole.s.k,
                true);
    for (int64_t r = 0; r < whole.s.m; ++r)
      ASSERT_EQ(std::bit_cast<uint32_t>(cj[r]), std::bit_cast<uint32_t>(all[r * whole.ldc + j]))
          << "row " << r << " column " << j;
  }
}

TEST(FmaProduct, NoTermsGiveZerosOrLeaveCAsItWas) {
  std::vector<float> c = {std::numeric_limits<float>::quiet_NaN(), 2.f, 3.f, 4.f}, panels;
  const std::vector<float> b(8, 1.f);
  const FmaPanels bp = fma_pack_panels(panels, b.data(), 2, false, 0, 2);
  fma_product(c.data(), 2, FmaOperandA{nullptr, 0, 1}, bp, 2, 0, true);
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(c[3], 4.f);
  fma_product(c.data(), 2, FmaOperandA{nullptr, 0, 1}, bp, 2, 0, false);
  EXPECT_EQ(c, std::vector<float>(4, 0.f));
}

TEST(FmaProduct, COnlyWrittenWithoutAccumulateAndTightBuffersSuffice) {
  // Buffers of exactly the matrices' sizes (strides = widths, so a read past a row's end would
  // leave the buffer: the ASan build checks it), the last panel partial; c full of NaNs, which
  // a product that does not accumulate must never read.
  const int64_t m = 7, n = 17, k = 5;
  const std::vector<float> a = uniform(m * k, 5, "a"), b = uniform(k * n, 5, "b");
  std::vector<float> expected(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int64_t t = 0; t < k; ++t) acc = std::fma(a[r * k + t], b[t * n + j], acc);
      expected[r * n + j] = acc;
    }
  std::vector<float> panels;
  for (const FmaPanels& bp :
       {fma_panels_in_place(b.data(), n, n), fma_pack_panels(panels, b.data(), n, false, k, n)}) {
    std::vector<float> c(static_cast<size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
    fma_product(c.data(), n, FmaOperandA{a.data(), k, 1}, bp, m, k, false);
    test::expect_same_bits(expected, c, bp.packed ? "packed" : "in place");
  }
}

TEST(FmaProduct, TheGenericCopyRoundsEachTermOnceEvenAtATie) {
  // The generic copy sums a·b + acc in double and rounds to float where that is the fused
  // result; here 2⁻⁸⁰ + 0x1.329cp+0 · 0x1.7acp+0 lies 2⁻⁸⁰ above a point halfway between two
  // floats, so rounding twice (to double, losing the 2⁻⁸⁰, then to float, ties to even) would give
  // 0x1.c5a04cp+0 instead of fma's 0x1.c5a04ep+0. The chain: acc = fma(2⁻⁴⁰, 2⁻⁴⁰, 0) = 2⁻⁸⁰,
  // then fma(0x1.329cp+0, 0x1.7acp+0, acc). Also a result in float's subnormal range.
  const float a[] = {0x1p-40f, 0x1.329cp+0f}, b[] = {0x1p-40f, 0x1.7acp+0f};
  ASSERT_EQ(std::fma(a[1], b[1], std::fma(a[0], b[0], 0.f)), 0x1.c5a04ep+0f);
  ASSERT_NE(static_cast<float>(double(a[1]) * double(b[1]) + 0x1p-80), 0x1.c5a04ep+0f);
  const float sa[] = {0x1.8p-70f, 0x1.4p-70f}, sb[] = {0x1.2p-60f, -0x1.1p-60f};  // ~1e-39
  const float tiny = std::fma(sa[1], sb[1], std::fma(sa[0], sb[0], 0.f));
  ASSERT_LT(std::abs(tiny), std::numeric_limits<float>::min());
  const test::IsaForced forced(IsaCopy::generic);
  for (const auto& [x, y, want] : {std::tuple{a, b, 0x1.c5a04ep+0f}, std::tuple{sa, sb, tiny}}) {
    std::vector<float> panels, c(1, 0.f);
    fma_product(c.data(), 1, FmaOperandA{x, 2, 1}, fma_pack_panels(panels, y, 1, false, 2, 1), 1, 2,
                false);
    EXPECT_EQ(std::bit_cast<uint32_t>(c[0]), std::bit_cast<uint32_t>(want)) << c[0];
  }
}

TEST(FmaProduct, TheGenericCopyMatchesStdFmaOnAMillionTriples) {
  // acc = fma(a0, b0, 0), then fma(a1, b1, acc) for 1 000 × 1 000 entries: a1 and b1 of random
  // significands and exponents 2⁻²⁰ … 2²⁰, and in every other row a0·b0 ≈ −a1·b1 (cancellation,
  // where the double sum keeps the fewest spare bits). The generic copy's double sum with
  // std::fma at ties must give std::fma's bits everywhere (the vector copies' FMA instructions
  // are checked against it by the tests above).
  const int64_t m = 1000, n = 1000;
  Rng rng(7, "test.fma_product.triples", 0);
  auto random_float = [&] {
    const double significand = 1 + rng.uniform(), sign = rng.uniform() < 0.5 ? -1 : 1;
    return static_cast<float>(sign * std::ldexp(significand, int(rng.uniform() * 41) - 20));
  };
  std::vector<float> a(static_cast<size_t>(m * 2)), b(static_cast<size_t>(2 * n));
  for (int64_t j = 0; j < n; ++j) b[n + j] = random_float();
  for (int64_t j = 0; j < n; ++j) b[j] = random_float();
  for (int64_t r = 0; r < m; ++r) {
    a[r * 2 + 1] = random_float();
    // Odd rows: a0 chosen so that a0·b0 is near −a1·b1 for the first column's b.
    a[r * 2] = r % 2 ? -a[r * 2 + 1] * b[n] / b[0] * (1 + 0x1p-20f) : random_float();
  }
  std::vector<float> expected(static_cast<size_t>(m * n)), panels, c(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j)
      expected[r * n + j] = std::fma(a[r * 2 + 1], b[n + j], std::fma(a[r * 2], b[j], 0.f));
  const test::IsaForced forced(IsaCopy::generic);
  fma_product(c.data(), n, FmaOperandA{a.data(), 2, 1},
              fma_pack_panels(panels, b.data(), n, false, 2, n), m, 2, false);
  test::expect_same_bits(expected, c, "a million triples");
}

class FmaProductCopies : public testing::TestWithParam<IsaCopy> {};

// B's panels of `width` columns laid out by hand (the packed form: panel p's row t at
// p·k·width + t·width), whatever width the copy in use would pick.
FmaPanels panels_of_width(std::vector<float>& out, const Case& cs, int64_t width) {
  const int64_t panels = (cs.s.n + width - 1) / width;
  out.assign(static_cast<size_t>(panels * cs.s.k * width), 0.f);
  for (int64_t t = 0; t < cs.s.k; ++t)
    for (int64_t j = 0; j < cs.s.n; ++j)
      out[(j / width) * cs.s.k * width + t * width + j % width] = cs.b[t * cs.ldb + j];
  return FmaPanels{.data = out.data(),
                   .width = width,
                   .ldb = width,
                   .panel_stride = cs.s.k * width,
                   .n = cs.s.n,
                   .packed = true};
}

TEST_P(FmaProductCopies, PanelsOf16And32ColumnsGiveTheChainsBitsInEveryCopy) {
  const IsaCopy copy = GetParam();
  ATTN_SKIP_WITHOUT_COPY(copy);
  for_each_case([copy](const Case& cs) {
    const std::vector<float> expected = cs.expected();
    for (IsaCopy run_in : {IsaCopy::generic, copy})
      for (int64_t width : {16, 32}) {
        std::vector<float> panels;
        const FmaPanels bp = panels_of_width(panels, cs, width);
        const test::IsaForced forced(run_in);
        test::expect_same_bits(
            expected, cs.run_with(bp),
            cs.name() + ", width " + std::to_string(width) + " in " + isa_name(run_in));
      }
  });
}

TEST_P(FmaProductCopies, GiveTheGenericCopysBits) {
  const IsaCopy copy = GetParam();
  ATTN_SKIP_WITHOUT_COPY(copy);
  for_each_case([copy](const Case& cs) {
    const auto [generic, other] = test::generic_and(copy, [&] { return cs.run(); });
    test::expect_same_bits(generic, other, cs.name());
  });
}

TEST_P(FmaProductCopies, PanelsOfTheOtherCopysWidthGiveTheSameBits) {
  // Panels packed (or framed in place) while one copy runs, multiplied while the other runs: the
  // generic copy's 16 columns in the vector copy and the vector copy's panels in the generic one.
  const IsaCopy copy = GetParam();
  ATTN_SKIP_WITHOUT_COPY(copy);
  for_each_case([copy](const Case& cs) {
    const std::vector<float> expected = cs.expected();
    for (const auto& [pack_in, run_in] :
         {std::pair{IsaCopy::generic, copy}, std::pair{copy, IsaCopy::generic}}) {
      std::vector<float> panels;
      FmaPanels bp;
      {
        const test::IsaForced forced(pack_in);
        bp = cs.operand_b(panels);
      }
      const test::IsaForced forced(run_in);
      test::expect_same_bits(
          expected, cs.run_with(bp),
          cs.name() + ", packed in " + isa_name(pack_in) + ", run in " + isa_name(run_in));
    }
  });
}

ATTN_ISA_COPIES_INSTANTIATE(FmaProductCopies);

}  // namespace
}  // namespace attn
