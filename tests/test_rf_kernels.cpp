// Infinite-width kernels of RFA/BRFA/RFMLP (models/rf_kernels.h) and their Gaussian
// expectations: the arc-cosine kernel against its power series and Monte Carlo; relu with
// means (quadrature) against the closed form at zero mean, Monte Carlo, the 1-D limit and
// the bivariate-CDF method; the bivariate CDF against special values and the ρ-derivative
// of the relu expectation; the kernel matrices against (a) a naive double loop over
// (i, j) key pairs built from the definition's means/variances/covariances and (b) Monte
// Carlo over random heads drawn from the definition; symmetry/PSD; user errors.
// Agreement numbers are printed as "[ measured ]" lines.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/threads.h"
#include "models/gauss_expectations.h"
#include "models/rf_kernels.h"
#include "tasks/task.h"

namespace attn {
namespace {

constexpr double kPi = 3.14159265358979323846;

void measured(const std::string& what, double value) {
  std::printf("[ measured ] %s: %.3g\n", what.c_str(), value);
}

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi); }

// Pairs (g_a, g_b) with variances qa, qb and covariance c from two standard normals.
struct GaussPair {
  double la, lb1, lb2;
  GaussPair(double qa, double qb, double c)
      : la(std::sqrt(qa)), lb1(c / std::sqrt(qa)), lb2(std::sqrt(std::max(0.0, qb - c * c / qa))) {}
};

// Mean and standard error of f(g_a, g_b) over n draws.
template <class F>
std::pair<double, double> monte_carlo(double qa, double qb, double c, int64_t n, uint64_t seed,
                                      F&& f) {
  Rng rng(seed, "test.rf_kernels.mc", 0);
  const GaussPair L(qa, qb, c);
  double sum = 0.0, sum2 = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    const double z1 = rng.gaussian(), z2 = rng.gaussian();
    const double v = f(L.la * z1, L.lb1 * z1 + L.lb2 * z2);
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sum2 / n - mean * mean) / n)};
}

double relu(double x) { return x > 0.0 ? x : 0.0; }

// ------------------------------------------------------------------ scalar expectations

TEST(RfKernelGauss, ArcCosineMatchesItsPowerSeries) {
  // κ(ρ) = 1/(2π) + ρ/4 + Σ_j C(2j, j)/(2π·4^j(2j+1)(2j+2)) ρ^{2j+2}   (spec §3.5)
  double worst = 0.0;
  for (double rho : {-0.95, -0.6, -0.2, 0.0, 0.1, 0.45, 0.8, 0.97}) {
    double series = 1.0 / (2.0 * kPi) + rho / 4.0;
    double binom_over_4j = 1.0;  // C(2j, j)/4^j
    for (int j = 0; j < 20000; ++j) {
      if (j > 0) binom_over_4j *= (2.0 * j - 1.0) / (2.0 * j);
      series += binom_over_4j / (2.0 * kPi * (2.0 * j + 1.0) * (2.0 * j + 2.0)) *
                std::pow(rho, 2 * j + 2);
    }
    const double k = relu_gauss_kernel(1.0, 1.0, rho);
    worst = std::max(worst, std::abs(k - series));
    EXPECT_NEAR(k, series, 1e-12) << "rho " << rho;
  }
  measured("arc-cosine vs series, max abs error", worst);
  // The spec's coefficients: a_0 = 1/(2π), a_2 = 1/(4π).
  EXPECT_NEAR(relu_gauss_kernel(1, 1, 0), 0.15915494309189535, 1e-16);
}

TEST(RfKernelGauss, ArcCosineSymmetryScalingAndSpecialValues) {
  for (double q : {0.01, 0.5, 1.0, 7.0})
    EXPECT_NEAR(relu_gauss_kernel(q, q, q), q / 2.0, 1e-15 * q);
  EXPECT_DOUBLE_EQ(relu_gauss_kernel(1.3, 0.4, 0.2), relu_gauss_kernel(0.4, 1.3, 0.2));
  // positive homogeneity: κ(t qa, t qb, t c) = t κ(qa, qb, c)
  EXPECT_NEAR(relu_gauss_kernel(3 * 1.3, 3 * 0.4, 3 * 0.2), 3 * relu_gauss_kernel(1.3, 0.4, 0.2),
              1e-15);
  EXPECT_NEAR(relu_gauss_kernel(2.0, 2.0, -2.0), 0.0, 1e-16);  // g_b = −g_a
  EXPECT_EQ(relu_gauss_kernel(0.0, 2.0, 0.0), 0.0);
  // ρ rounding past ±1 is clamped
  EXPECT_NEAR(relu_gauss_kernel(1.0, 1.0, 1.0 + 1e-15), 0.5, 1e-15);
}

TEST(RfKernelGauss, ArcCosineMatchesMonteCarlo) {
  const double qa = 1.3, qb = 0.7, c = 0.5;
  const auto [mean, se] =
      monte_carlo(qa, qb, c, 1000000, 1, [](double ga, double gb) { return relu(ga) * relu(gb); });
  const double k = relu_gauss_kernel(qa, qb, c);
  measured("arc-cosine vs Monte Carlo (1e6), |z|", std::abs(k - mean) / se);
  EXPECT_LT(std::abs(k - mean), 4 * se);
}

TEST(RfKernelGauss, PolynomialFunctionsAndRowFunctions) {
  // asin, J (scalar and two-lane rows) against the C library.
  const int64_t n = 200001;
  std::vector<double> rho(n), j_row(n), acc(n, 1.0), c(n), ones(n, 1.0);
  for (int64_t k = 0; k < n; ++k) rho[k] = -1.0 + 2.0 * k / (n - 1);
  detail::arccos_j_row(rho.data(), n, j_row.data());
  for (int64_t k = 0; k < n; ++k) c[k] = 0.5 + 0.5 * rho[k];
  detail::arccos_j_accumulate(c.data(), rho.data(), 0.5, n, acc.data());  // rows of (r·c)
  double worst_asin = 0.0, worst_j = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    const double x = rho[k];
    const double j_exact = 2 * kPi * relu_gauss_kernel(1.0, 1.0, x);
    worst_asin = std::max(worst_asin, std::abs(detail::asin_poly(x) - std::asin(x)));
    worst_j = std::max(worst_j, std::abs(j_row[k] - j_exact));
    worst_j = std::max(worst_j, std::abs(detail::arccos_j(x) - j_exact));
    const double acc_exact = 1.0 + 0.5 * c[k] * 2 * kPi * relu_gauss_kernel(1.0, 1.0, x * c[k]);
    worst_j = std::max(worst_j, std::abs(acc[k] - acc_exact));
  }
  measured("asin_poly vs std::asin, max abs error", worst_asin);
  measured("arc-cosine factor J (scalar and rows) vs std::acos form, max abs error", worst_j);
  EXPECT_LT(worst_asin, 5e-16);
  EXPECT_LT(worst_j, 2e-15);
  EXPECT_EQ(detail::asin_poly(1.0), detail::kHalfPi);
  EXPECT_NEAR(detail::arccos_j(-1.0), 0.0, 1e-16);
  EXPECT_NEAR(detail::arccos_j(1.0 + 1e-13), kPi, 1e-15);  // clamped
  // exp and sin polynomials; the exp row function through exp_accumulate (g = 1).
  double worst_exp = 0.0, worst_sin = 0.0;
  std::vector<double> x(n), zero(n, 0.0), out(n, 0.0);
  for (int64_t k = 0; k < n; ++k) x[k] = -745.0 + 1455.0 * k / (n - 1);
  detail::exp_accumulate(ones.data(), ones.data(), x.data(), zero.data(), 1.0, 0.0, 0.0, n,
                         out.data());
  for (int64_t k = 0; k < n; ++k) {
    const double e = std::exp(x[k]);
    if (x[k] > -708.0 && x[k] < 709.78) {
      worst_exp = std::max(worst_exp, std::abs(out[k] - e) / e);
      worst_exp = std::max(worst_exp, std::abs(detail::exp_poly(x[k]) - e) / e);
    } else if (x[k] < -708.0) {
      EXPECT_EQ(out[k], 0.0);
    }
    const double t = -kPi / 2 + kPi * k / (n - 1);
    worst_sin = std::max(worst_sin, std::abs(detail::sin_poly(t) - std::sin(t)));
  }
  EXPECT_EQ(detail::exp_poly(710.0), HUGE_VAL);
  measured("exp_poly (scalar and rows) vs std::exp, max relative error", worst_exp);
  measured("sin_poly vs std::sin on [-pi/2, pi/2], max abs error", worst_sin);
  EXPECT_LT(worst_exp, 1e-15);
  EXPECT_LT(worst_sin, 1e-15);
}

TEST(RfKernelGauss, MeanQuadratureAtZeroMeanIsTheClosedForm) {
  double worst = 0.0;
  for (double qa : {0.3, 1.0, 2.5}) {
    for (double qb : {0.5, 1.0}) {
      for (double rho :
           {-1.0, -0.999999, -0.93, -0.5, 0.0, 0.2, 0.7, 0.92, 0.99, 1.0 - 1e-9, 1.0}) {
        const double c = rho * std::sqrt(qa * qb);
        const double exact = relu_gauss_kernel(qa, qb, c);
        worst = std::max(worst, std::abs(relu_gauss_kernel_mean(0, 0, qa, qb, c) - exact));
        worst = std::max(worst, std::abs(relu_gauss_kernel_mean_cdf(0, 0, qa, qb, c) - exact));
      }
    }
  }
  measured("relu mean (quadrature and cdf) at zero mean vs closed form, max abs error", worst);
  EXPECT_LT(worst, 1e-14);
}

TEST(RfKernelGauss, MeanMatchesMonteCarlo) {
  struct Case { double ma, mb, qa, qb, c; };
  const Case cases[] = {{0.7, -0.4, 1.0, 1.0, 0.6}, {1.5, 2.0, 0.5, 2.0, 0.9},
                        {-1.0, 0.3, 1.2, 0.8, -0.7}, {0.4, 0.4, 1.0, 1.0, 0.97}};
  double worst_z = 0.0;
  uint64_t seed = 2;
  for (const Case& k : cases) {
    const auto [mean, se] =
        monte_carlo(k.qa, k.qb, k.c, 1000000, seed++,
                    [&](double ga, double gb) { return relu(k.ma + ga) * relu(k.mb + gb); });
    const double quad = relu_gauss_kernel_mean(k.ma, k.mb, k.qa, k.qb, k.c);
    const double z = std::abs(quad - mean) / se;
    worst_z = std::max(worst_z, z);
    EXPECT_LT(z, 4.0) << k.ma << " " << k.mb << " " << k.c;
  }
  measured("relu mean vs Monte Carlo (1e6 each, 4 cases), max |z|", worst_z);
}

TEST(RfKernelGauss, MeanOneDimensionalLimitAndContinuity) {
  // c = qa = qb: g_a = g_b, E[relu(m + g)²] for equal means
  double worst = 0.0;
  for (double m : {-2.0, -0.5, 0.0, 0.3, 1.7}) {
    for (double q : {0.25, 1.0, 3.0}) {
      const double s = std::sqrt(q);
      const double exact = (m * m + q) * Phi(m / s) + m * s * phi(m / s);
      worst = std::max(worst, std::abs(relu_gauss_kernel_mean(m, m, q, q, q) - exact));
      worst = std::max(worst, std::abs(relu_gauss_kernel_mean_cdf(m, m, q, q, q) - exact));
      // c slightly past √(qa qb) by rounding, and just below it
      EXPECT_NEAR(relu_gauss_kernel_mean(m, m, q, q, q * (1 + 1e-15)), exact, 1e-13);
      EXPECT_NEAR(relu_gauss_kernel_mean(m, m, q, q, q * (1 - 1e-12)), exact, 1e-9);
    }
  }
  measured("relu mean, perfect correlation vs 1-D closed form, max abs error", worst);
  EXPECT_LT(worst, 1e-14);
  // Unequal means with ρ → 1 approach the ρ = 1 value continuously.
  const double at1 = relu_gauss_kernel_mean(0.4, -0.2, 1.0, 1.0, 1.0);
  EXPECT_NEAR(relu_gauss_kernel_mean(0.4, -0.2, 1.0, 1.0, 1.0 - 1e-10), at1, 1e-6);
  EXPECT_NEAR(relu_gauss_kernel_mean_cdf(0.4, -0.2, 1.0, 1.0, 1.0 - 1e-10), at1, 1e-6);
  // A zero variance on one side: relu(ma)·E[relu(mb + g_b)].
  EXPECT_NEAR(relu_gauss_kernel_mean(0.8, 0.1, 0.0, 2.0, 0.0),
              0.8 * (0.1 * Phi(0.1 / std::sqrt(2.0)) + std::sqrt(2.0) * phi(0.1 / std::sqrt(2.0))),
              1e-15);
}

TEST(RfKernelGauss, MeanCdfMethodAgreesWithQuadratureOnEveryBand) {
  double worst = 0.0;
  for (double rho : {-1.0, -0.99999, -0.95, -0.925, -0.8, -0.4, -0.1, 0.05, 0.29, 0.31, 0.6,
                     0.749, 0.751, 0.9, 0.924, 0.926, 0.97, 0.999, 1 - 1e-7, 1.0}) {
    for (double a : {-6.0, -2.0, -0.5, 0.0, 0.3, 1.0, 4.0}) {
      for (double b : {-3.0, -0.7, 0.0, 0.3, 0.301, 2.0, 6.0}) {
        const double q = relu_gauss_kernel_mean(a, b, 1.0, 1.0, rho);
        const double f = relu_gauss_kernel_mean_cdf(a, b, 1.0, 1.0, rho);
        worst = std::max(worst, std::abs(q - f) / (1.0 + std::abs(q)));
      }
    }
  }
  measured("relu mean, cdf method vs quadrature, max error / (1 + |value|)", worst);
  EXPECT_LT(worst, 1e-13);
  // Quadrature converged: 48 against 96 nodes per panel.
  EXPECT_NEAR(relu_gauss_kernel_mean(1.0, 1.1, 1.0, 1.0, 0.9999, 48),
              relu_gauss_kernel_mean(1.0, 1.1, 1.0, 1.0, 0.9999, 96), 1e-14);
}

TEST(RfKernelGauss, BivariateNormalCdf) {
  double worst = 0.0;
  for (double rho : {-1.0, -0.97, -0.5, 0.0, 0.3, 0.8, 0.93, 0.999, 1.0}) {
    const double exact = 0.25 + std::asin(rho) / (2 * kPi);  // h = k = 0
    worst = std::max(worst, std::abs(bvn_cdf(0.0, 0.0, rho) - exact));
  }
  for (double rho : {-0.6, 0.0, 0.2})
    EXPECT_NEAR(bvn_cdf(0.0, 0.0, rho), 0.25 + std::asin(rho) / (2 * kPi), 1e-15);
  EXPECT_NEAR(bvn_cdf(0.7, -0.3, 0.0), Phi(0.7) * Phi(-0.3), 1e-16);
  EXPECT_NEAR(bvn_cdf(0.7, -0.3, 1.0), Phi(-0.3), 1e-15);                      // Z₂ = Z₁
  EXPECT_NEAR(bvn_cdf(0.7, -0.3, -1.0), std::max(0.0, Phi(0.7) - Phi(0.3)), 1e-15);  // Z₂ = −Z₁
  // dF/dρ = Φ₂(a, b; ρ): central differences of the (independent) quadrature.
  double worst_fd = 0.0;
  for (double rho : {-0.95, -0.3, 0.5, 0.8, 0.95, 0.99}) {
    for (auto [a, b] : {std::pair{0.4, -0.9}, std::pair{-1.2, 1.5}, std::pair{2.0, 0.7}}) {
      const double h = 1e-5;
      const double dF = (relu_gauss_kernel_mean(a, b, 1, 1, rho + h) -
                         relu_gauss_kernel_mean(a, b, 1, 1, rho - h)) / (2 * h);
      worst_fd = std::max(worst_fd, std::abs(dF - bvn_cdf(a, b, rho)));
      EXPECT_NEAR(dF, bvn_cdf(a, b, rho), 1e-8) << a << " " << b << " " << rho;
    }
  }
  measured("bvn_cdf at h = k = 0 vs 1/4 + asin(ρ)/2π, max abs error", worst);
  measured("bvn_cdf vs central-difference dF/dρ of the quadrature, max abs error", worst_fd);
  EXPECT_LT(worst, 1e-15);
  // Second method: Φ₂(h, k; ρ) = ∫_{−∞}^{h} φ(x) Φ((k − ρx)/√(1−ρ²)) dx, composite
  // 16-point Gauss–Legendre on 4000 panels of [−40, h].
  const detail::GaussLegendre g16 = detail::gauss_legendre(16);
  double worst_int = 0.0;
  for (double rho : {-0.99, -0.95, -0.6, -0.2, 0.1, 0.45, 0.8, 0.93, 0.99}) {
    for (auto [h, k] : {std::pair{0.4, -0.9}, std::pair{-1.7, 1.1}, std::pair{2.5, 2.0},
                        std::pair{-0.3, -0.35}}) {
      const double sd = std::sqrt(1 - rho * rho), lo = -40.0, width = (h - lo) / 4000;
      double integral = 0.0;
      for (int p = 0; p < 4000; ++p)
        for (size_t q = 0; q < g16.x.size(); ++q) {
          const double x = lo + width * (p + 0.5 + 0.5 * g16.x[q]);
          integral += 0.5 * width * g16.w[q] * phi(x) * Phi((k - rho * x) / sd);
        }
      worst_int = std::max(worst_int, std::abs(bvn_cdf(h, k, rho) - integral));
    }
  }
  measured("bvn_cdf vs 1-D integral of the conditional CDF, max abs error", worst_int);
  EXPECT_LT(worst_int, 1e-14);  // includes the summation error of the reference
  const auto [mean, se] = monte_carlo(1.0, 1.0, 0.95, 1000000, 9, [](double x, double y) {
    return (x <= 0.4 && y <= -0.9) ? 1.0 : 0.0;
  });
  EXPECT_LT(std::abs(bvn_cdf(0.4, -0.9, 0.95) - mean), 4 * se);
}

TEST(RfKernelGauss, ExpKernelMatchesMonteCarlo) {
  const double ma = 0.2, mb = -0.3, qa = 0.4, qb = 0.3, c = 0.15;
  const auto [mean, se] = monte_carlo(qa, qb, c, 1000000, 5, [&](double ga, double gb) {
    return std::exp(ma + ga) * std::exp(mb + gb);
  });
  const double k = exp_gauss_kernel(ma, mb, qa, qb, c);
  measured("exp kernel vs Monte Carlo (1e6), |z|", std::abs(k - mean) / se);
  EXPECT_LT(std::abs(k - mean), 4 * se);
}

// ------------------------------------------------------------------ kernel matrices

// n samples of rf_target (unit-sphere tokens): X is n × (N+1) × d.
std::vector<double> rf_samples(int64_t n, int64_t N, int64_t d, uint64_t seed,
                               const std::string& tokens = "sphere") {
  Params p = task_default_params("rf_target");
  p.set_text("N", std::to_string(N));
  p.set_text("d", std::to_string(d));
  p.set_text("tokens", tokens);
  const Batch b = task_generate(*task_make("rf_target", p), seed, 0, n);
  return b.X;
}

std::vector<double> tilde(const double* x, int64_t d, bool augment) {
  std::vector<double> v(x, x + d);
  if (augment) v.push_back(1.0);
  return v;
}
double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

// H(x, y) from the definition's Gaussian parameters, one (i, j) pair at a time.
double rfa_reference(const double* x, const double* y, int64_t T, int64_t d,
                     const RfaKernelConfig& cfg) {
  const int64_t N = T - 1;
  const auto x0 = tilde(x, d, cfg.augment), y0 = tilde(y, d, cfg.augment);
  const double s2 = cfg.w_var, mu = cfg.w_mean;
  double sum = 0.0;
  for (int64_t i = 1; i <= N; ++i) {
    const auto xi = tilde(x + i * d, d, cfg.augment);
    const double mi =
        mu * dot(std::vector<double>(x, x + d), std::vector<double>(x + i * d, x + i * d + d));
    const double qi = s2 * dot(x0, x0) * dot(xi, xi);
    for (int64_t j = 1; j <= N; ++j) {
      const auto yj = tilde(y + j * d, d, cfg.augment);
      const double mj =
          mu * dot(std::vector<double>(y, y + d), std::vector<double>(y + j * d, y + j * d + d));
      const double qj = s2 * dot(y0, y0) * dot(yj, yj);
      const double c = s2 * dot(x0, y0) * dot(xi, yj);
      double e;
      if (cfg.activation == RfaActivation::exp) {
        e = exp_gauss_kernel(mi, mj, qi, qj, c);
      } else if (mu == 0.0) {
        e = relu_gauss_kernel(qi, qj, c);
      } else {
        e = relu_gauss_kernel_mean(mi, mj, qi, qj, c);
      }
      sum += e * dot(xi, yj);
    }
  }
  return sum / static_cast<double>(N * N);
}

std::vector<double> kernel_matrix(const KernelFunction& k, const std::vector<double>& Xa,
                                  int64_t na, const std::vector<double>& Xb, int64_t nb) {
  std::vector<double> K(static_cast<size_t>(na * nb), -1.0);
  k.kernel(Xa.data(), na, Xb.data(), nb, K.data());
  return K;
}

// Symmetric, and smallest eigenvalue ≥ −1e-10·largest. Returns λ_min/λ_max.
double psd_ratio(const std::vector<double>& K, int64_t n) {
  Eigen::MatrixXd M(n, n);
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b) {
      EXPECT_EQ(K[a * n + b], K[b * n + a]) << a << " " << b;
      M(a, b) = K[a * n + b];
    }
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M).eigenvalues();
  return ev.minCoeff() / ev.maxCoeff();
}

struct RfaCase {
  std::string name;
  RfaKernelConfig cfg;
};
std::vector<RfaCase> rfa_cases() {
  std::vector<RfaCase> v;
  auto add = [&](std::string name, std::string act, bool aug, double mu,
                 std::string method = "cdf") {
    RfaKernelConfig c;
    c.activation = choice_parse(act, kRfaActivations, "model.activation");
    c.augment = aug;
    c.w_mean = mu;
    c.mean_method = choice_parse(method, kKernelMeanMethods, "model.mean_method");
    if (act == "exp") c.w_var = 0.1;
    v.push_back({name, c});
  };
  add("relu mu=0 aug", "relu", true, 0.0);
  add("relu mu=0 noaug", "relu", false, 0.0);
  add("relu mu=1.5 aug", "relu", true, 1.5);
  add("relu mu=-0.8 noaug", "relu", false, -0.8);
  add("relu mu=1.5 aug quadrature", "relu", true, 1.5, "quadrature");
  add("exp mu=0 aug", "exp", true, 0.0);
  add("exp mu=0.7 noaug", "exp", false, 0.7);
  return v;
}

TEST(RfKernelRfa, MatchesThePairwiseDefinition) {
  const int64_t N = 3, d = 4, T = N + 1, na = 7, nb = 5;
  const auto Xa = rf_samples(na, N, d, 21), Xb = rf_samples(nb, N, d, 22, "gaussian");
  double worst = 0.0;
  for (const RfaCase& c : rfa_cases()) {
    const RfaKernel k(c.cfg, T, d);
    const auto K = kernel_matrix(k, Xa, na, Xb, nb);
    const auto Ks = kernel_matrix(k, Xa, na, Xa, na);  // symmetric path
    for (int64_t a = 0; a < na; ++a) {
      for (int64_t b = 0; b < nb; ++b) {
        const double ref = rfa_reference(&Xa[a * T * d], &Xb[b * T * d], T, d, c.cfg);
        worst = std::max(worst, std::abs(K[a * nb + b] - ref) / std::max(1.0, std::abs(ref)));
        ASSERT_NEAR(K[a * nb + b], ref, 1e-12 * std::max(1.0, std::abs(ref))) << c.name;
      }
      for (int64_t b = 0; b < na; ++b) {
        const double ref = rfa_reference(&Xa[a * T * d], &Xa[b * T * d], T, d, c.cfg);
        ASSERT_NEAR(Ks[a * na + b], ref, 1e-12 * std::max(1.0, std::abs(ref))) << c.name;
      }
    }
  }
  measured("RfaKernel vs pairwise definition (7 configs), max relative error", worst);
}

TEST(RfKernelRfa, MatchesMonteCarloOverRandomHeads) {
  const int64_t N = 3, d = 4, T = N + 1, n = 3, heads = 20000;
  const auto X = rf_samples(n, N, d, 31);
  double worst_z = 0.0;
  for (const RfaCase& c : rfa_cases()) {
    if (c.cfg.mean_method == KernelMeanMethod::quadrature) continue;  // same expectation as "cdf"
    const RfaKernel k(c.cfg, T, d);
    const auto K = kernel_matrix(k, X, n, X, n);
    const int64_t D = d + (c.cfg.augment ? 1 : 0);
    const bool relu_act = c.cfg.activation == RfaActivation::relu;
    std::vector<double> sum(n * n, 0.0), sum2(n * n, 0.0), W(D * D);
    std::vector<std::vector<double>> phis(n, std::vector<double>(D));
    Rng rng(7, "test.rf_kernels.heads", 0);
    for (int64_t m = 0; m < heads; ++m) {
      rng_gaussian(rng, W.data(), D * D);
      for (int64_t r = 0; r < D; ++r)
        for (int64_t s = 0; s < D; ++s) {
          W[r * D + s] *= std::sqrt(c.cfg.w_var);
          if (r == s && r < d) W[r * D + s] += c.cfg.w_mean;  // μ·blockdiag(I_d, 0)
        }
      for (int64_t a = 0; a < n; ++a) {  // Φ_m(x) = (1/N) Σ_i σ(x̃_0ᵀ W x̃_i) x̃_i
        const double* x = &X[a * T * d];
        const auto x0 = tilde(x, d, c.cfg.augment);
        std::fill(phis[a].begin(), phis[a].end(), 0.0);
        for (int64_t i = 1; i <= N; ++i) {
          const auto xi = tilde(x + i * d, d, c.cfg.augment);
          double s = 0.0;
          for (int64_t r = 0; r < D; ++r)
            for (int64_t q = 0; q < D; ++q) s += x0[r] * W[r * D + q] * xi[q];
          const double act = (relu_act ? relu(s) : std::exp(s)) / N;
          for (int64_t q = 0; q < D; ++q) phis[a][q] += act * xi[q];
        }
      }
      for (int64_t a = 0; a < n; ++a)
        for (int64_t b = 0; b < n; ++b) {
          const double v = dot(phis[a], phis[b]);
          sum[a * n + b] += v;
          sum2[a * n + b] += v * v;
        }
    }
    for (int64_t e = 0; e < n * n; ++e) {
      const double mean = sum[e] / heads;
      const double se = std::sqrt((sum2[e] / heads - mean * mean) / heads);
      const double z = std::abs(K[e] - mean) / se;
      worst_z = std::max(worst_z, z);
      EXPECT_LT(z, 4.0) << c.name << " entry " << e << ": kernel " << K[e] << " MC " << mean
                        << " ± " << se;
    }
  }
  measured("RfaKernel vs Monte Carlo over 20000 heads (6 configs × 9 entries), max |z|",
           worst_z);
}

TEST(RfKernelRfa, SpecReferenceScale) {
  // §4.3: d = 6, N = 3, unit sphere, relu, s² = 1/4: ≈ 0.2569 off-diagonal, ≈ 0.567 diagonal
  // (for the spec's own tokens; ours differ, so only the scale and ordering are checked).
  const int64_t N = 3, d = 6, n = 40;
  const auto X = rf_samples(n, N, d, 41);
  const RfaKernel k(RfaKernelConfig{}, N + 1, d);
  const auto K = kernel_matrix(k, X, n, X, n);
  double diag = 0.0, off = 0.0;
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b) (a == b ? diag : off) += K[a * n + b];
  diag /= n;
  off /= n * (n - 1);
  measured("spec scale: mean diagonal", diag);
  measured("spec scale: mean off-diagonal", off);
  EXPECT_GT(diag, 0.567 / 3);
  EXPECT_LT(diag, 0.567 * 3);
  EXPECT_GT(off, 0.2569 / 3);
  EXPECT_LT(off, 0.2569 * 3);
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b)
      if (a != b) {
        EXPECT_GT(K[a * n + a] + K[b * n + b], 2 * K[a * n + b]);
      }
}

TEST(RfKernelRfa, ZeroNoiseVarianceIsTheExplicitFeatureMap) {
  const int64_t N = 4, d = 3, T = N + 1, n = 6;
  const auto X = rf_samples(n, N, d, 51, "gaussian");
  for (const char* act : {"relu", "exp"}) {
    RfaKernelConfig cfg;
    cfg.activation = choice_parse(act, kRfaActivations, "model.activation");
    cfg.w_var = 0.0;
    cfg.w_mean = 0.9;
    const auto K = kernel_matrix(RfaKernel(cfg, T, d), X, n, X, n);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < n; ++b) {
        const double ref = rfa_reference(&X[a * T * d], &X[b * T * d], T, d, cfg);
        EXPECT_NEAR(K[a * n + b], ref, 1e-12 * std::max(1.0, std::abs(ref))) << act;
      }
  }
}

TEST(RfKernelRfa, ThreadCountAndSymmetricPathDoNotChangeResults) {
  const int64_t N = 5, d = 3, T = N + 1, n = 130;  // several tiles (tile = 51 samples)
  const auto X = rf_samples(n, N, d, 61);
  RfaKernelConfig cfg;
  cfg.w_mean = 1.0;
  const RfaKernel k(cfg, T, d);
  const auto K1 = kernel_matrix(k, X, n, X, n);
  const auto Kab = kernel_matrix(k, X, n, std::vector<double>(X), n);  // not the same pointer
  const int before = threads_count();
  threads_configure(2);
  const auto K2 = kernel_matrix(k, X, n, X, n);
  threads_configure(before);
  double worst = 0.0;
  for (size_t e = 0; e < K1.size(); ++e) {
    ASSERT_EQ(K1[e], K2[e]);
    worst = std::max(worst, std::abs(K1[e] - Kab[e]));
  }
  EXPECT_LT(worst, 1e-14);
}

// ------------------------------------------------------------------ RFMLP

TEST(RfKernelRfmlp, MatchesMonteCarloAndDefault) {
  const int64_t N = 3, d = 4, T = N + 1, n = 3, width = 200000;
  const auto X = rf_samples(n, N, d, 71);
  const RfmlpKernel k(RfmlpKernelConfig{}, T, d);
  EXPECT_DOUBLE_EQ(k.w_var(), 1.0 / (N + 2));
  const auto K = kernel_matrix(k, X, n, X, n);
  const int64_t P = T * d + 1;
  std::vector<double> w(P), sum(n * n, 0.0), sum2(n * n, 0.0), f(n);
  Rng rng(8, "test.rf_kernels.rfmlp", 0);
  for (int64_t m = 0; m < width; ++m) {
    rng_gaussian(rng, w.data(), P);
    for (int64_t a = 0; a < n; ++a) {
      double s = w[P - 1];  // the constant coordinate
      for (int64_t q = 0; q < T * d; ++q) s += w[q] * X[a * T * d + q];
      f[a] = relu(std::sqrt(k.w_var()) * s);
    }
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < n; ++b) {
        sum[a * n + b] += f[a] * f[b];
        sum2[a * n + b] += f[a] * f[b] * f[a] * f[b];
      }
  }
  double worst_z = 0.0;
  for (int64_t e = 0; e < n * n; ++e) {
    const double mean = sum[e] / width, se = std::sqrt((sum2[e] / width - mean * mean) / width);
    worst_z = std::max(worst_z, std::abs(K[e] - mean) / se);
    EXPECT_LT(std::abs(K[e] - mean), 4 * se) << e;
  }
  measured("RfmlpKernel vs Monte Carlo (2e5 features, 9 entries), max |z|", worst_z);
  // Without augment, against the scalar arc-cosine kernel.
  RfmlpKernelConfig cfg;
  cfg.augment = false;
  cfg.w_var = 0.3;
  const auto K2 = kernel_matrix(RfmlpKernel(cfg, T, d), X, n, X, n);
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b) {
      const std::vector<double> za(&X[a * T * d], &X[(a + 1) * T * d]);
      const std::vector<double> zb(&X[b * T * d], &X[(b + 1) * T * d]);
      EXPECT_NEAR(K2[a * n + b],
                  relu_gauss_kernel(0.3 * dot(za, za), 0.3 * dot(zb, zb), 0.3 * dot(za, zb)),
                  1e-15);
    }
}

// ------------------------------------------------------------------ PSD and errors

TEST(RfKernelPsd, EveryKernelIsSymmetricPositiveSemidefinite) {
  const int64_t N = 3, d = 4, T = N + 1, n = 30;
  const auto X = rf_samples(n, N, d, 81);
  double worst = 1.0;
  for (const RfaCase& c : rfa_cases()) {
    const double r = psd_ratio(kernel_matrix(RfaKernel(c.cfg, T, d), X, n, X, n), n);
    worst = std::min(worst, r);
    EXPECT_GE(r, -1e-10) << c.name;
  }
  for (bool aug : {true, false}) {
    RfmlpKernelConfig cfg;
    cfg.augment = aug;
    const double r = psd_ratio(kernel_matrix(RfmlpKernel(cfg, T, d), X, n, X, n), n);
    worst = std::min(worst, r);
    EXPECT_GE(r, -1e-10) << "rfmlp augment " << aug;
  }
  measured("PSD: smallest λ_min/λ_max over 9 kernels", worst);
}

TEST(RfKernelErrors, BadConfigsNameTheKey) {
  auto message = [](const RfaKernelConfig& c, int64_t T) -> std::string {
    try {
      RfaKernel k(c, T, 4);
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  };
  RfaKernelConfig c;
  c.activation = RfaActivation::softmax;
  EXPECT_NE(message(c, 4).find("model.activation"), std::string::npos);
  EXPECT_NE(message(c, 4).find("softmax"), std::string::npos);
  EXPECT_THROW(choice_parse("tanh", kRfaActivations, "model.activation"), UserError);
  c = RfaKernelConfig{};
  c.w_var = -1;
  EXPECT_NE(message(c, 4).find("model.w_var"), std::string::npos);
  c = RfaKernelConfig{};
  try {
    choice_parse("gh", kKernelMeanMethods, "model.mean_method");
    ADD_FAILURE() << "mean_method gh was accepted";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "unknown model.mean_method 'gh'; choices: cdf, quadrature");
  }
  c = RfaKernelConfig{};
  c.quadrature_nodes = 1;
  EXPECT_NE(message(c, 4).find("model.quadrature_nodes"), std::string::npos);
  EXPECT_NE(message(RfaKernelConfig{}, 1).find("at least one key"), std::string::npos);
  RfmlpKernelConfig m;
  m.w_var = -0.5;
  EXPECT_THROW(RfmlpKernel(m, 4, 4), UserError);
}

}  // namespace
}  // namespace attn
