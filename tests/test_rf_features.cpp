// RFA / BRFA / RFMLP random features: fast path against the scalar reference, key
// permutation (spec claim C1), nesting in heads / width, the weight distribution and the
// pre-activation scale, determinism across seeds, threads and block layouts, user errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/threads.h"
#include "models/rfa_features.h"
#include "models/rfmlp_features.h"
#include "tasks/task.h"

namespace attn {
namespace {

// n rf_target samples (unit-sphere tokens): X is n × (N + 1) × d.
std::vector<double> rf_inputs(int64_t N, int64_t d, int64_t n, uint64_t seed = 5) {
  Params p = task_default_params("rf_target");
  p.set_text("N", std::to_string(N));
  p.set_text("d", std::to_string(d));
  return task_generate(*task_make("rf_target", p), seed, 0, n).X;
}

// max over samples of ‖a_j − b_j‖_∞ / ‖b_j‖_∞ (rows of length dim; absolute if b_j = 0).
double rel_diff(const std::vector<double>& a, const std::vector<double>& b, int64_t dim) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (size_t lo = 0; lo < b.size(); lo += dim) {
    double diff = 0.0, scale = 0.0;
    for (int64_t k = 0; k < dim; ++k) {
      diff = std::max(diff, std::abs(a[lo + k] - b[lo + k]));
      scale = std::max(scale, std::abs(b[lo + k]));
    }
    worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
  }
  return worst;
}

std::vector<double> rfa_run(const RfaFeatures& f, const std::vector<double>& X, int64_t n) {
  std::vector<double> Phi(n * f.dim());
  f.features(X.data(), n, Phi.data());
  return Phi;
}

std::vector<double> rfmlp_run(const RfmlpFeatures& f, const std::vector<double>& X, int64_t n) {
  std::vector<double> Phi(n * f.dim());
  f.features(X.data(), n, Phi.data());
  return Phi;
}

// Permutes the keys (rows 1..N) of every sample with a sample-specific random permutation.
std::vector<double> permute_keys(std::vector<double> X, int64_t N, int64_t d, int64_t n) {
  const int64_t T = N + 1;
  for (int64_t j = 0; j < n; ++j) {
    Rng rng(99, "test.perm", j);
    double* keys = X.data() + (j * T + 1) * d;
    for (int64_t i = N - 1; i > 0; --i) {  // Fisher-Yates on rows
      const int64_t r = static_cast<int64_t>(rng.uniform_int(i + 1));
      for (int64_t k = 0; k < d; ++k) std::swap(keys[i * d + k], keys[r * d + k]);
    }
  }
  return X;
}

struct Shape {
  int64_t N, d, M;
};

// ---------------------------------------------------------------- RFA / BRFA

TEST(RfaFeatures, FastMatchesReference) {
  const std::vector<Shape> shapes = {{1, 1, 3}, {1, 4, 5}, {3, 2, 7}, {8, 5, 13}, {16, 8, 33}};
  const int64_t n = 37;  // blocks of 8: four full blocks and a partial one
  double worst = 0.0;
  for (const Shape& s : shapes) {
    const std::vector<double> X = rf_inputs(s.N, s.d, n);
    for (const char* act : {"relu", "exp", "softmax"}) {
      for (bool augment : {true, false}) {
        for (double mu : {0.0, 1.5}) {
          RfaConfig c;
          c.heads = s.M;
          c.activation = choice_parse(act, kRfaActivations, "model.activation");
          c.augment = augment;
          c.w_mean = mu;
          c.block = 8;
          const RfaFeatures f(c, s.N + 1, s.d, 17);
          ASSERT_EQ(f.dim(), s.M * (augment ? s.d + 1 : s.d));
          ASSERT_EQ(f.token_dim(), augment ? s.d + 1 : s.d);
          const std::vector<double> fast = rfa_run(f, X, n);
          std::vector<double> ref(fast.size());
          rfa_features_reference(c, f.weights(), s.N + 1, s.d, X.data(), n, ref.data());
          const double r = rel_diff(fast, ref, f.dim());
          worst = std::max(worst, r);
          EXPECT_LE(r, 1e-12) << act << " augment=" << augment << " mu=" << mu << " N=" << s.N
                              << " d=" << s.d << " M=" << s.M;
        }
      }
    }
  }
  std::printf("[ measured ] RFA fast vs reference: max relative difference %.2e\n", worst);
}

TEST(RfaFeatures, AutomaticBlockWithPartialLastBlock) {
  const int64_t N = 4, d = 3;
  RfaConfig c;
  c.heads = 20;
  const RfaFeatures f(c, N + 1, d, 3);
  const int64_t B = f.block_size();
  ASSERT_GE(B, 16);
  const int64_t n = B + 3;
  const std::vector<double> X = rf_inputs(N, d, n);
  const std::vector<double> fast = rfa_run(f, X, n);
  std::vector<double> ref(fast.size());
  rfa_features_reference(c, f.weights(), N + 1, d, X.data(), n, ref.data());
  EXPECT_LE(rel_diff(fast, ref, f.dim()), 1e-12);
}

TEST(RfaFeatures, ExactlyInvariantToKeyPermutation) {
  // Spec claim C1: Φ depends on the key set only.
  const int64_t N = 9, d = 6, n = 40;
  const std::vector<double> X = rf_inputs(N, d, n);
  const std::vector<double> Xp = permute_keys(X, N, d, n);
  ASSERT_NE(X, Xp);
  double worst = 0.0;
  for (const char* act : {"relu", "exp", "softmax"}) {
    for (double mu : {0.0, 2.0}) {
      RfaConfig c;
      c.heads = 64;
      c.activation = choice_parse(act, kRfaActivations, "model.activation");
      c.w_mean = mu;
      const RfaFeatures f(c, N + 1, d, 8);
      const double r = rel_diff(rfa_run(f, Xp, n), rfa_run(f, X, n), f.dim());
      worst = std::max(worst, r);
      EXPECT_LE(r, 1e-12) << act << " mu=" << mu;
    }
  }
  std::printf("[ measured ] RFA key permutation: max relative difference %.2e\n", worst);
}

TEST(RfaFeatures, NestedInHeads) {
  const int64_t N = 5, d = 4, n = 30, e = d + 1;
  const std::vector<double> X = rf_inputs(N, d, n);
  for (double mu : {0.0, 1.0}) {
    RfaConfig small, large;
    small.heads = 7;
    large.heads = 40;
    small.w_mean = large.w_mean = mu;
    const RfaFeatures fs(small, N + 1, d, 21), fl(large, N + 1, d, 21);
    for (int64_t k = 0; k < 7 * e * e; ++k) ASSERT_EQ(fs.weights()[k], fl.weights()[k]);
    const std::vector<double> Ps = rfa_run(fs, X, n), Pl = rfa_run(fl, X, n);
    std::vector<double> head(Ps.size());
    for (int64_t j = 0; j < n; ++j)
      std::copy_n(Pl.begin() + j * fl.dim(), fs.dim(), head.begin() + j * fs.dim());
    const double r = rel_diff(head, Ps, fs.dim());
    std::printf("[ measured ] RFA nested heads (mu = %.0f): max relative difference %.2e\n", mu, r);
    EXPECT_LE(r, 1e-14) << "mu=" << mu;
  }
}

TEST(RfaFeatures, BiasedWeightsAreRfaWeightsPlusTheMean) {
  const int64_t N = 3, d = 5, e = d + 1, M = 50;
  RfaConfig rfa;
  rfa.heads = M;
  RfaConfig brfa = rfa;
  // (w_mean = 0 giving RFA is checked at the model level: RfModels.BrfaWithZeroMeanScaleIsRfa.)
  // w_mean = μ adds μ·blockdiag(I_d, 0) to the same Gaussian draw.
  const RfaFeatures f0(rfa, N + 1, d, 4);
  brfa.w_mean = 1.7;
  const RfaFeatures f1(brfa, N + 1, d, 4);
  double worst = 0.0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t a = 0; a < e; ++a)
      for (int64_t b = 0; b < e; ++b) {
        const int64_t k = (m * e + a) * e + b;
        const double expected = (a == b && a < d) ? 1.7 : 0.0;
        worst = std::max(worst, std::abs(f1.weights()[k] - f0.weights()[k] - expected));
      }
  EXPECT_LE(worst, 1e-14);
}

TEST(RfaFeatures, WeightDrawHasTheRequestedMeanAndVariance) {
  const int64_t d = 4, e = d + 1, M = 4000;
  const double mu = 0.7, var = 0.25;
  RfaConfig c;
  c.heads = M;
  c.w_mean = mu;
  c.w_var = var;
  const RfaFeatures f(c, 3, d, 12);
  const std::vector<double>& W = f.weights();
  double diag = 0, off = 0, aug = 0, ss = 0;
  int64_t n_diag = 0, n_off = 0, n_aug = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t a = 0; a < e; ++a)
      for (int64_t b = 0; b < e; ++b) {
        const double w = W[(m * e + a) * e + b];
        const double mean = (a == b && a < d) ? mu : 0.0;
        ss += (w - mean) * (w - mean);
        if (a == d || b == d) {
          aug += w;
          ++n_aug;
        } else if (a == b) {
          diag += w;
          ++n_diag;
        } else {
          off += w;
          ++n_off;
        }
      }
  // Standard errors: 0.5/sqrt(16000) = 0.004, 0.5/sqrt(48000) = 0.0023, 0.5/sqrt(36000) = 0.0026;
  // variance 0.25·sqrt(2/100000) = 0.0011.
  EXPECT_NEAR(diag / n_diag, mu, 0.02);
  EXPECT_NEAR(off / n_off, 0.0, 0.015);
  EXPECT_NEAR(aug / n_aug, 0.0, 0.015);
  EXPECT_NEAR(ss / (M * e * e), var, 0.25 * 0.03);
  // Without augment W_m is d × d with mean μ·I_d.
  c.augment = false;
  c.heads = 2000;
  const RfaFeatures g(c, 3, d, 12);
  ASSERT_EQ(static_cast<int64_t>(g.weights().size()), 2000 * d * d);
  double gdiag = 0;
  for (int64_t m = 0; m < 2000; ++m)
    for (int64_t a = 0; a < d; ++a) gdiag += g.weights()[(m * d + a) * d + a] / (2000.0 * d);
  EXPECT_NEAR(gdiag, mu, 0.03);
}

TEST(RfaFeatures, PreActivationHasUnitVarianceOnTheSphere) {
  // Unit-sphere tokens, s² = 1/4, augment: x̃_0ᵀ W x̃_i ~ N(0, 1) (‖x̃‖² = 2).
  const int64_t N = 1, d = 8, e = d + 1, M = 20000, n = 3;
  RfaConfig c;
  c.heads = M;
  const RfaFeatures f(c, N + 1, d, 31);
  const std::vector<double> X = rf_inputs(N, d, n);
  const std::vector<double> Phi = rfa_run(f, X, n);
  for (int64_t j = 0; j < n; ++j) {
    const double* x0 = X.data() + j * 2 * d;
    const double* x1 = x0 + d;
    double s1 = 0, s2 = 0, relu2 = 0;
    for (int64_t m = 0; m < M; ++m) {
      const double* W = f.weights().data() + m * e * e;
      double s = 0;
      for (int64_t a = 0; a < e; ++a)
        for (int64_t b = 0; b < e; ++b)
          s += (a < d ? x0[a] : 1.0) * W[a * e + b] * (b < d ? x1[b] : 1.0);
      s1 += s;
      s2 += s * s;
      // N = 1, relu: the augmented coordinate of Φ_m is relu(s_m), E relu(s)² = 1/2.
      const double last = Phi[j * f.dim() + m * e + d];
      relu2 += last * last;
    }
    const double mean = s1 / M, variance = s2 / M - mean * mean;
    EXPECT_NEAR(mean, 0.0, 0.04) << "sample " << j;
    EXPECT_NEAR(variance, 1.0, 0.05) << "sample " << j;
    EXPECT_NEAR(relu2 / M, 0.5, 0.05 * 0.5) << "sample " << j;
  }
}

TEST(RfaFeatures, DeterministicInSeedThreadsAndBlocks) {
  const int64_t N = 6, d = 5, n = 70;
  const std::vector<double> X = rf_inputs(N, d, n);
  RfaConfig c;
  c.heads = 33;
  c.block = 16;
  const RfaFeatures a(c, N + 1, d, 1), b(c, N + 1, d, 1), other(c, N + 1, d, 2);
  EXPECT_EQ(a.weights(), b.weights());
  const std::vector<double> Pa = rfa_run(a, X, n);
  EXPECT_EQ(Pa, rfa_run(b, X, n));
  EXPECT_NE(a.weights(), other.weights());
  EXPECT_GT(rel_diff(rfa_run(other, X, n), Pa, a.dim()), 0.1);
  // Bit-identical on 1 and 2 threads.
  const int before = threads_count();
  threads_configure(2);
  const std::vector<double> P2 = rfa_run(a, X, n);
  threads_configure(before);
  EXPECT_EQ(Pa, P2);
  // Another grouping of the samples into blocks (the call starts 5 samples later) agrees
  // to rounding: a row's place in its block may change the last bits of BLAS sums.
  const int64_t skip = 5;
  std::vector<double> shifted((n - skip) * a.dim());
  a.features(X.data() + skip * (N + 1) * d, n - skip, shifted.data());
  const std::vector<double> tail(Pa.begin() + skip * a.dim(), Pa.end());
  const double r = rel_diff(shifted, tail, a.dim());
  std::printf("[ measured ] RFA regrouped samples: max relative difference %.2e\n", r);
  EXPECT_LE(r, 1e-14);
}

TEST(RfaFeatures, BadConfigIsAUserError) {
  RfaConfig c;
  c.heads = 0;
  EXPECT_THROW(RfaFeatures(c, 5, 3, 1), UserError);
  c = RfaConfig{};
  EXPECT_THROW(choice_parse("tanh", kRfaActivations, "model.activation"), UserError);
  c = RfaConfig{};
  c.w_var = -1.0;
  EXPECT_THROW(RfaFeatures(c, 5, 3, 1), UserError);
  c = RfaConfig{};
  EXPECT_THROW(RfaFeatures(c, 1, 3, 1), UserError);  // no keys
  EXPECT_THROW(RfaFeatures(c, 5, 0, 1), UserError);
}

// ---------------------------------------------------------------- RFMLP

TEST(RfmlpFeatures, FastMatchesReference) {
  const std::vector<Shape> shapes = {{1, 1, 3}, {1, 4, 25}, {3, 2, 7}, {8, 5, 60}, {16, 8, 153}};
  const int64_t n = 37;
  double worst = 0.0;
  for (const Shape& s : shapes) {
    const std::vector<double> X = rf_inputs(s.N, s.d, n);
    for (bool augment : {true, false}) {
      for (double var : {0.0, 0.3}) {
        RfmlpConfig c;
        c.width = s.M;
        c.augment = augment;
        c.w_var = var;
        c.block = 8;
        const RfmlpFeatures f(c, s.N + 1, s.d, 17);
        ASSERT_EQ(f.dim(), s.M);
        ASSERT_EQ(f.input_dim(), (s.N + 1) * s.d + (augment ? 1 : 0));
        const std::vector<double> fast = rfmlp_run(f, X, n);
        std::vector<double> ref(fast.size());
        rfmlp_features_reference(c, f.weights(), s.N + 1, s.d, X.data(), n, ref.data());
        const double r = rel_diff(fast, ref, f.dim());
        worst = std::max(worst, r);
        EXPECT_LE(r, 1e-12) << "augment=" << augment << " var=" << var << " N=" << s.N;
      }
    }
  }
  // The automatic block with a partial last block.
  RfmlpConfig c;
  c.width = 10;
  const RfmlpFeatures f(c, 3, 2, 5);
  const int64_t m = f.block_size() + 3;
  const std::vector<double> X = rf_inputs(2, 2, m);
  std::vector<double> ref(m * 10);
  rfmlp_features_reference(c, f.weights(), 3, 2, X.data(), m, ref.data());
  const double r = rel_diff(rfmlp_run(f, X, m), ref, 10);
  worst = std::max(worst, r);
  EXPECT_LE(r, 1e-12);
  std::printf("[ measured ] RFMLP fast vs reference: max relative difference %.2e\n", worst);
}

TEST(RfmlpFeatures, NotInvariantToKeyPermutation) {
  // Spec claim C1, the other half: permuting keys changes RFMLP features at O(1).
  const int64_t N = 9, d = 6, n = 40;
  const std::vector<double> X = rf_inputs(N, d, n);
  RfmlpConfig c;
  c.width = rfmlp_matched_width(64, d, true);
  const RfmlpFeatures f(c, N + 1, d, 8);
  const double r = rel_diff(rfmlp_run(f, permute_keys(X, N, d, n), n), rfmlp_run(f, X, n), f.dim());
  std::printf("[ measured ] RFMLP key permutation: relative difference %.2f\n", r);
  EXPECT_GT(r, 0.1);
}

TEST(RfmlpFeatures, NestedInWidth) {
  const int64_t N = 4, d = 3, n = 25;
  const std::vector<double> X = rf_inputs(N, d, n);
  RfmlpConfig small, large;
  small.width = 11;
  large.width = 90;
  const RfmlpFeatures fs(small, N + 1, d, 6), fl(large, N + 1, d, 6);
  for (int64_t k = 0; k < 11 * fs.input_dim(); ++k) ASSERT_EQ(fs.weights()[k], fl.weights()[k]);
  const std::vector<double> Ps = rfmlp_run(fs, X, n), Pl = rfmlp_run(fl, X, n);
  std::vector<double> head(Ps.size());
  for (int64_t j = 0; j < n; ++j) std::copy_n(Pl.begin() + j * 90, 11, head.begin() + j * 11);
  const double r = rel_diff(head, Ps, 11);
  std::printf("[ measured ] RFMLP nested width: max relative difference %.2e\n", r);
  EXPECT_LE(r, 1e-14);
}

TEST(RfmlpFeatures, DefaultVarianceGivesUnitPreActivations) {
  // w_var = 0 means 1/(N + 2): with unit-sphere tokens and augment, ‖z̃‖² = N + 2, so
  // <w, z̃> ~ N(0, 1) and E relu(<w, z̃>)² = 1/2.
  const int64_t N = 6, d = 4, width = 20000, n = 2;
  RfmlpConfig c;
  c.width = width;
  const RfmlpFeatures f(c, N + 1, d, 9);
  EXPECT_DOUBLE_EQ(f.weight_var(), 1.0 / (N + 2));
  double ss = 0;
  for (double w : f.weights()) ss += w * w;
  EXPECT_NEAR(ss / f.weights().size(), 1.0 / (N + 2), 0.02 / (N + 2));
  const std::vector<double> X = rf_inputs(N, d, n);
  const std::vector<double> Phi = rfmlp_run(f, X, n);
  for (int64_t j = 0; j < n; ++j) {
    double relu2 = 0;
    for (int64_t m = 0; m < width; ++m) relu2 += Phi[j * width + m] * Phi[j * width + m] / width;
    EXPECT_NEAR(relu2, 0.5, 0.05 * 0.5) << "sample " << j;
  }
}

TEST(RfmlpFeatures, MatchedWidthEqualsRfaParameterCount) {
  EXPECT_EQ(rfmlp_matched_width(512, 8, true), 4608);
  EXPECT_EQ(rfmlp_matched_width(512, 8, false), 4096);
  RfaConfig c;
  c.heads = 12;
  EXPECT_EQ(RfaFeatures(c, 4, 5, 1).dim(), rfmlp_matched_width(12, 5, true));
  c.augment = false;
  EXPECT_EQ(RfaFeatures(c, 4, 5, 1).dim(), rfmlp_matched_width(12, 5, false));
}

TEST(RfmlpFeatures, DeterministicInSeedThreadsAndBlocks) {
  const int64_t N = 5, d = 3, n = 70;
  const std::vector<double> X = rf_inputs(N, d, n);
  RfmlpConfig c;
  c.width = 50;
  c.block = 16;
  const RfmlpFeatures a(c, N + 1, d, 1), b(c, N + 1, d, 1), other(c, N + 1, d, 2);
  const std::vector<double> Pa = rfmlp_run(a, X, n);
  EXPECT_EQ(Pa, rfmlp_run(b, X, n));
  EXPECT_GT(rel_diff(rfmlp_run(other, X, n), Pa, 50), 0.1);
  const int before = threads_count();
  threads_configure(2);
  const std::vector<double> P2 = rfmlp_run(a, X, n);
  threads_configure(before);
  EXPECT_EQ(Pa, P2);
  const int64_t skip = 5;  // another grouping into blocks: equal to rounding
  std::vector<double> shifted((n - skip) * 50);
  a.features(X.data() + skip * (N + 1) * d, n - skip, shifted.data());
  const std::vector<double> tail(Pa.begin() + skip * 50, Pa.end());
  const double r = rel_diff(shifted, tail, 50);
  std::printf("[ measured ] RFMLP regrouped samples: max relative difference %.2e\n", r);
  EXPECT_LE(r, 1e-14);
}

TEST(RfmlpFeatures, BadConfigIsAUserError) {
  RfmlpConfig c;  // no width set: width 0
  EXPECT_THROW(RfmlpFeatures(c, 5, 3, 1), UserError);
  RfmlpConfig ok;
  ok.width = 4;
  EXPECT_NO_THROW(RfmlpFeatures(ok, 5, 3, 1));
  c = ok;
  c.w_var = -0.5;
  EXPECT_THROW(RfmlpFeatures(c, 5, 3, 1), UserError);
  c = ok;
  EXPECT_THROW(RfmlpFeatures(c, 5, 0, 1), UserError);
}

}  // namespace
}  // namespace attn
