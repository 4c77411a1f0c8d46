// Internal to the kernels (rf_kernels.cpp, gauss_expectations.cpp): standardised Gaussian
// expectations in the forms the kernel loops want, polynomial exp/sin/asin, and row
// functions that evaluate the arc-cosine and exp factors over a row of (i, j) pairs.
//
//   F(a, b, ρ) = E[(a + Z₁)₊ (b + Z₂)₊],  (Z₁, Z₂) standard bivariate normal, correlation ρ,
// so E[relu(ma + g_a) relu(mb + g_b)] = √(qa qb)·F(ma/√qa, mb/√qb, c/√(qa qb)).
// Per-key quantities (Φ(a), φ(a), c₀(a) = aΦ(a) + φ(a)) are computed once in a GaussKey.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace attn::detail {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kTwoPi = 6.28318530717958647692;
inline constexpr double kHalfPi = 1.57079632679489661923;
inline constexpr double kInvSqrt2 = 0.70710678118654752440;
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;

inline double normal_cdf(double x) { return 0.5 * std::erfc(-x * kInvSqrt2); }
inline double normal_pdf(double x) { return kInvSqrt2Pi * std::exp(-0.5 * x * x); }

// Gauss–Legendre rule on [−1, 1] with n nodes (Newton on P_n; nodes ascending).
struct GaussLegendre {
  std::vector<double> x, w;
};
GaussLegendre gauss_legendre(int n);

struct GaussKey {
  double a;    // standardised mean
  double cdf;  // Φ(a)
  double pdf;  // φ(a)
  double c0;   // E[(a + Z)₊] = aΦ(a) + φ(a)
};
inline GaussKey gauss_key(double a) {
  const double cdf = normal_cdf(a), pdf = normal_pdf(a);
  return {a, cdf, pdf, a * cdf + pdf};
}

// F(a, b, ρ), fast method (see relu_gauss_kernel_mean_cdf); ρ is clamped to [−1, 1].
double relu_std_cdf(const GaussKey& ka, const GaussKey& kb, double rho);
// F(a, b, ρ), reference quadrature with the given Gauss–Legendre rule on each panel.
double relu_std_quadrature(double a, double b, double rho, const GaussLegendre& rule);

// Scalar polynomial kernels of the row functions below (the SSE2 versions in
// gauss_expectations.cpp run the same operations two lanes at a time).
//
// exp(x): Cody–Waite reduction x = k·ln2 + r, |r| ≤ ln2/2, Taylor polynomial of degree 13,
// 2^k through the exponent bits. Relative error ≤ ~2 ulp; 0 below −708 (where exp is
// subnormal) and +inf above 709.78.
inline double exp_poly(double x) {
  constexpr double kLog2e = 1.4426950408889634074, kShift = 0x1.8p52;
  constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  if (x < -708.0) return 0.0;
  if (x > 709.78) return HUGE_VAL;
  const double xc = x;
  const double t = xc * kLog2e + kShift;  // k = round(x/ln2) in the low mantissa bits
  const double k = t - kShift;
  const double r = (xc - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  for (const double c : {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                         1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
                         1.0 / 6.0, 0.5, 1.0, 1.0})
    p = p * r + c;
  // 2^(k−1)·2 keeps the exponent field in range up to k = 1024 (x ≤ 709.78)
  return p * std::bit_cast<double>((std::bit_cast<uint64_t>(t) + 1022u) << 52) * 2.0;
}

// sin(x) for |x| ≤ π/2: odd Taylor polynomial to x¹⁹ (truncation < 1e-17 on the range).
inline constexpr double kSinCoef[9] = {
    -1.0 / 121645100408832000.0, 1.0 / 355687428096000.0, -1.0 / 1307674368000.0,
    1.0 / 6227020800.0,          -1.0 / 39916800.0,       1.0 / 362880.0,
    -1.0 / 5040.0,               1.0 / 120.0,             -1.0 / 6.0};
inline double sin_poly(double x) {
  const double z = x * x;
  double p = kSinCoef[0];
  for (int k = 1; k < 9; ++k) p = p * z + kSinCoef[k];
  return x + x * z * p;
}

// asin on [−1, 1]: the fdlibm/musl rational approximation x + x·R(x²) on |x| ≤ 1/2 and
// asin|x| = π/2 − 2 asin(√((1 − |x|)/2)) above. Error ≤ ~2 ulp.
inline constexpr double kAsinP[6] = {1.66666666666666657415e-01, -3.25565818622400915405e-01,
                                     2.01212532134862925881e-01, -4.00555345006794114027e-02,
                                     7.91534994289814532176e-04, 3.47933107596021167570e-05};
inline constexpr double kAsinQ[4] = {-2.40339491173441421878e+00, 2.02094576023350569471e+00,
                                     -6.88283971605453293030e-01, 7.70381505559019352791e-02};
inline double asin_poly(double x) {
  const double t = std::fabs(x);
  const bool big = t > 0.5;
  const double z = big ? 0.5 * (1.0 - t) : t * t;
  const double p =
      z * (kAsinP[0] +
           z * (kAsinP[1] + z * (kAsinP[2] + z * (kAsinP[3] + z * (kAsinP[4] + z * kAsinP[5])))));
  const double q = 1.0 + z * (kAsinQ[0] + z * (kAsinQ[1] + z * (kAsinQ[2] + z * kAsinQ[3])));
  const double r = p / q;
  const double s = std::sqrt(z);
  const double v = big ? kHalfPi - 2.0 * (s + s * r) : t + t * r;
  return x < 0.0 ? -v : v;
}

// J(ρ) = √(1 − ρ²) + ρ(π − arccos ρ) = 2π·F(0, 0, ρ), for ρ clamped to [−1, 1].
inline double arccos_j(double rho) {
  const double r = rho > 1.0 ? 1.0 : (rho < -1.0 ? -1.0 : rho);
  return std::sqrt((1.0 - r) * (1.0 + r)) + r * (kHalfPi + asin_poly(r));
}

// Row functions for the kernel loops (SSE2 two lanes at a time where available):
// out[k] = J(rho[k]).
void arccos_j_row(const double* rho, int64_t n, double* out);
// acc[k] += w·c[k]·J(r[k]·c[k]).
void arccos_j_accumulate(const double* c, const double* r, double w, int64_t n, double* acc);
// acc[k] += exp(e0 + e[k] + s·r[k]·g[k])·g[k] with g[k] = u·v[k]·c[k].
void exp_accumulate(const double* c, const double* v, const double* e, const double* r, double u,
                    double e0, double s, int64_t n, double* acc);

}  // namespace attn::detail
