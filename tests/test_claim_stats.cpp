// The statistics behind claim verdicts against closed forms: Student-t quantiles (df = 1 and
// 2 have closed forms; large df tends to the normal; table values from scipy), least-squares slopes
// and their standard errors by hand, intervals and the seeds-to-decide count.
#include <gtest/gtest.h>

#include <cmath>

#include "experiment/claim_stats.h"

namespace attn {
namespace {

TEST(ClaimStats, StudentQuantilesMatchClosedForms) {
  for (double p : {0.6, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999}) {
    EXPECT_NEAR(student_t_quantile(p, 1), std::tan(M_PI * (p - 0.5)),
                1e-9 * (1 + std::tan(M_PI * (p - 0.5))));
    EXPECT_NEAR(student_t_quantile(p, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-9);
    EXPECT_NEAR(student_t_cdf(student_t_quantile(p, 7.5), 7.5), p, 1e-12);
  }
  // Lower quantiles (p < 0.5) and more table values (scipy.stats.t.ppf), checked as numbers:
  // the code takes a lower quantile by symmetry, so comparing it with its own mirror could not
  // fail. The quantile is solved to about 1e-9 (at p = 0.2, df = 30 it is 1.6e-9 from scipy's).
  EXPECT_NEAR(student_t_quantile(0.975, 3), 3.182446305284263, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.05, 3), -2.3533634348018273, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.2, 3), -0.9784723118282994, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.5705818366147395, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.05, 5), -2.0150483726691575, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0422724563012373, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.2, 30), -0.853767259839686, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.95, 1e8), 1.6448536269514722, 1e-6);  // normal
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.2281388519649385, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.95, 4), 2.1318467863266495, 1e-9);
  EXPECT_DOUBLE_EQ(student_t_cdf(0, 5), 0.5);
}

TEST(ClaimStats, IntervalsOverSeedsAndFromOneSeedsStandardError) {
  Sample s{{0.88, 0.90, 0.92}};
  Interval iv = sample_interval(s, 0.95);
  ASSERT_TRUE(iv.ok);
  EXPECT_NEAR(iv.mean, 0.90, 1e-15);
  EXPECT_NEAR(iv.se, 0.02 / std::sqrt(3.0), 1e-15);
  EXPECT_NEAR(iv.hi - iv.mean, student_t_quantile(0.95, 2) * 0.02 / std::sqrt(3.0), 1e-15);
  EXPECT_NEAR(iv.mean - iv.lo, iv.hi - iv.mean, 1e-15);
  // One seed: nothing to go by, unless its own standard error is known.
  iv = sample_interval(Sample{{0.5}}, 0.95);
  EXPECT_FALSE(iv.ok);
  iv = sample_interval(Sample{{0.5}, 0.01, 999}, 0.95);
  ASSERT_TRUE(iv.ok);
  EXPECT_NEAR(iv.hi, 0.5 + student_t_quantile(0.95, 999) * 0.01, 1e-15);
  // Identical seeds: a point.
  iv = sample_interval(Sample{{1, 1, 1}}, 0.95);
  ASSERT_TRUE(iv.ok);
  EXPECT_EQ(iv.lo, 1);
  EXPECT_EQ(iv.hi, 1);
}

TEST(ClaimStats, SlopeAndItsStandardErrorByHand) {
  // y = 1.0, 1.04, 0.5 on x = 0, 1, 2: mean 2.54 / 3, slope (0.5 - 1.0) / 2 = -0.25,
  // residuals -0.29/3, 0.58/3, -0.29/3, rss 0.5046 / 9, se = sqrt(rss / 1 / 2).
  const Slope s = slope_fit({0, 1, 2}, {1.0, 1.04, 0.5});
  EXPECT_NEAR(s.slope, -0.25, 1e-15);
  EXPECT_NEAR(s.se, std::sqrt(0.5046 / 9 / 2), 1e-12);
  EXPECT_EQ(s.df, 1);
  const Slope two = slope_fit({3, 5}, {1, 2});
  EXPECT_NEAR(two.slope, 0.5, 1e-15);
  EXPECT_LT(two.se, 0);  // two points: no residuals
}

TEST(ClaimStats, SeedsToDecideIsTheFirstCountWhoseBoundClearsTheBar) {
  // mean 0.9, sd 0.02 over 3 seeds, bar 0.89: need t(0.95, k-1) * 0.02 / sqrt(k) < 0.01.
  const Interval iv = sample_interval(Sample{{0.88, 0.90, 0.92}}, 0.95);
  const int k = seeds_to_decide(iv, 0.89, 0.95);
  EXPECT_LT(student_t_quantile(0.95, k - 1) * 0.02 / std::sqrt(k), 0.01);
  EXPECT_GE(student_t_quantile(0.95, k - 2) * 0.02 / std::sqrt(k - 1), 0.01);
  EXPECT_EQ(k, 13);
  EXPECT_EQ(seeds_to_decide(iv, 0.9, 0.95), 0);  // on the bar: no count decides it
}

}  // namespace
}  // namespace attn

TEST(ClaimStats, FractionStandardErrorIsNeverZeroAtTheEnds) {
  // 0 of 1 000: p̃ = 2/1004, sqrt(p̃(1 − p̃)/1004) = 0.0014072; the samples' own 0 does not win.
  EXPECT_NEAR(attn::fraction_standard_error(0.0, 1000, 0.0), 0.0014072, 1e-6);
  EXPECT_NEAR(attn::fraction_standard_error(1.0, 1000, 0.0), 0.0014072, 1e-6);
  // Mid-range the samples' own error (0.0158 at 0.5 of 1 000) is kept: the floor is 0.01578.
  EXPECT_DOUBLE_EQ(attn::fraction_standard_error(0.5, 1000, 0.0158), 0.0158);
}
