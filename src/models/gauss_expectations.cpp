// Gaussian expectations for the infinite-width kernels (rf_kernels.h, spec §3.5):
// arc-cosine kernel, relu with means (reference quadrature and closed form via the
// bivariate normal CDF), bivariate normal CDF, exp kernel. All scalar, double precision.
#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/error.h"
#include "models/gauss_expectations.h"
#include "models/rf_kernels.h"

namespace attn {
namespace detail {

// ---------------------------------------------------------------- SIMD row functions
// Two lanes of the scalar polynomials in gauss_expectations.h, same operations in the same
// order. Hand-written because GCC does not vectorise sqrt or FP selects without
// -fno-math-errno / -fno-trapping-math, which the build does not use.
#if defined(__SSE2__)
namespace {

inline __m128d sel_pd(__m128d mask, __m128d a, __m128d b) {  // mask ? a : b
  return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b));
}

inline __m128d exp_pd(__m128d x) {
  const __m128d shift = _mm_set1_pd(0x1.8p52);
  const __m128d xc = _mm_min_pd(_mm_max_pd(x, _mm_set1_pd(-708.0)), _mm_set1_pd(709.78));
  const __m128d t = _mm_add_pd(_mm_mul_pd(xc, _mm_set1_pd(1.4426950408889634074)), shift);
  const __m128d k = _mm_sub_pd(t, shift);
  const __m128d r =
      _mm_sub_pd(_mm_sub_pd(xc, _mm_mul_pd(k, _mm_set1_pd(6.93147180369123816490e-01))),
                 _mm_mul_pd(k, _mm_set1_pd(1.90821492927058770002e-10)));
  __m128d p = _mm_set1_pd(1.0 / 6227020800.0);
  for (const double c : {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                         1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
                         1.0 / 6.0, 0.5, 1.0, 1.0})
    p = _mm_add_pd(_mm_mul_pd(p, r), _mm_set1_pd(c));
  const __m128i bits = _mm_slli_epi64(
      _mm_add_epi64(_mm_castpd_si128(t), _mm_set1_epi64x(1022)), 52);
  __m128d y = _mm_mul_pd(_mm_mul_pd(p, _mm_castsi128_pd(bits)), _mm_set1_pd(2.0));
  y = _mm_andnot_pd(_mm_cmplt_pd(x, _mm_set1_pd(-708.0)), y);
  return sel_pd(_mm_cmpgt_pd(x, _mm_set1_pd(709.78)), _mm_set1_pd(HUGE_VAL), y);
}

inline __m128d sin_pd(__m128d x) {
  const __m128d z = _mm_mul_pd(x, x);
  __m128d p = _mm_set1_pd(kSinCoef[0]);
  for (int k = 1; k < 9; ++k) p = _mm_add_pd(_mm_mul_pd(p, z), _mm_set1_pd(kSinCoef[k]));
  return _mm_add_pd(x, _mm_mul_pd(_mm_mul_pd(x, z), p));
}

inline __m128d arccos_j_pd(__m128d rho) {
  const __m128d one = _mm_set1_pd(1.0), half = _mm_set1_pd(0.5);
  const __m128d sign = _mm_set1_pd(-0.0);
  const __m128d r = _mm_min_pd(_mm_max_pd(rho, _mm_set1_pd(-1.0)), one);
  const __m128d t = _mm_andnot_pd(sign, r);
  const __m128d big = _mm_cmpgt_pd(t, half);
  const __m128d z = sel_pd(big, _mm_mul_pd(half, _mm_sub_pd(one, t)), _mm_mul_pd(t, t));
  __m128d p = _mm_set1_pd(kAsinP[5]);
  for (int k = 4; k >= 0; --k) p = _mm_add_pd(_mm_set1_pd(kAsinP[k]), _mm_mul_pd(z, p));
  p = _mm_mul_pd(z, p);
  __m128d q = _mm_set1_pd(kAsinQ[3]);
  for (int k = 2; k >= 0; --k) q = _mm_add_pd(_mm_set1_pd(kAsinQ[k]), _mm_mul_pd(z, q));
  q = _mm_add_pd(one, _mm_mul_pd(z, q));
  const __m128d rr = _mm_div_pd(p, q);
  const __m128d s = _mm_sqrt_pd(z);
  const __m128d v_big = _mm_sub_pd(_mm_set1_pd(kHalfPi),
                                   _mm_mul_pd(_mm_set1_pd(2.0), _mm_add_pd(s, _mm_mul_pd(s, rr))));
  const __m128d v_small = _mm_add_pd(t, _mm_mul_pd(t, rr));
  const __m128d as = _mm_or_pd(sel_pd(big, v_big, v_small), _mm_and_pd(sign, r));
  const __m128d root = _mm_sqrt_pd(_mm_mul_pd(_mm_sub_pd(one, r), _mm_add_pd(one, r)));
  return _mm_add_pd(root, _mm_mul_pd(r, _mm_add_pd(_mm_set1_pd(kHalfPi), as)));
}

}  // namespace
#endif

void arccos_j_row(const double* rho, int64_t n, double* out) {
  int64_t k = 0;
#if defined(__SSE2__)
  for (; k + 2 <= n; k += 2) _mm_storeu_pd(out + k, arccos_j_pd(_mm_loadu_pd(rho + k)));
#endif
  for (; k < n; ++k) out[k] = arccos_j(rho[k]);
}

void arccos_j_accumulate(const double* c, const double* r, double w, int64_t n, double* acc) {
  int64_t k = 0;
#if defined(__SSE2__)
  const __m128d wv = _mm_set1_pd(w);
  for (; k + 2 <= n; k += 2) {
    const __m128d cv = _mm_loadu_pd(c + k);
    const __m128d j = arccos_j_pd(_mm_mul_pd(_mm_loadu_pd(r + k), cv));
    _mm_storeu_pd(acc + k, _mm_add_pd(_mm_loadu_pd(acc + k), _mm_mul_pd(_mm_mul_pd(wv, cv), j)));
  }
#endif
  for (; k < n; ++k) acc[k] += w * c[k] * arccos_j(r[k] * c[k]);
}

void exp_accumulate(const double* c, const double* v, const double* e, const double* r, double u,
                    double e0, double s, int64_t n, double* acc) {
  int64_t k = 0;
#if defined(__SSE2__)
  const __m128d uv = _mm_set1_pd(u), e0v = _mm_set1_pd(e0), sv = _mm_set1_pd(s);
  for (; k + 2 <= n; k += 2) {
    const __m128d g = _mm_mul_pd(_mm_mul_pd(uv, _mm_loadu_pd(v + k)), _mm_loadu_pd(c + k));
    const __m128d x = _mm_add_pd(_mm_add_pd(e0v, _mm_loadu_pd(e + k)),
                                 _mm_mul_pd(_mm_mul_pd(sv, _mm_loadu_pd(r + k)), g));
    _mm_storeu_pd(acc + k, _mm_add_pd(_mm_loadu_pd(acc + k), _mm_mul_pd(exp_pd(x), g)));
  }
#endif
  for (; k < n; ++k) {
    const double g = u * v[k] * c[k];
    acc[k] += exp_poly(e0 + e[k] + s * r[k] * g) * g;
  }
}

GaussLegendre gauss_legendre(int n) {
  ATTN_ASSERT(n >= 1, "gauss_legendre needs n >= 1");
  GaussLegendre rule;
  rule.x.assign(static_cast<size_t>(n), 0.0);
  rule.w.assign(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double x = std::cos(kPi * (i + 0.75) / (n + 0.5));  // i-th largest root, initial guess
    double dp = 1.0;
    int settled = 0;  // Newton until |dx| is at rounding level, then one more step
    for (int iter = 0; iter < 100 && settled < 2; ++iter) {
      double p0 = 1.0, p1 = x;  // P_0, P_1; recurrence up to P_n
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      if (n == 1) p0 = 1.0;
      dp = n * (x * p1 - p0) / (x * x - 1.0);  // P_n'(x)
      const double dx = p1 / dp;
      x -= dx;
      if (std::fabs(dx) < 1e-14) ++settled;
    }
    {  // final P_n' at the converged root for the weight
      double p0 = 1.0, p1 = x;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      if (n == 1) p0 = 1.0;
      dp = n * (x * p1 - p0) / (x * x - 1.0);
    }
    const double w = 2.0 / ((1.0 - x * x) * dp * dp);
    rule.x[static_cast<size_t>(n - 1 - i)] = x;
    rule.x[static_cast<size_t>(i)] = -x;
    rule.w[static_cast<size_t>(n - 1 - i)] = w;
    rule.w[static_cast<size_t>(i)] = w;
  }
  if (n % 2 == 1) rule.x[static_cast<size_t>(n / 2)] = 0.0;
  return rule;
}

namespace {

// Gauss–Legendre rules with n = 2, 4, …, 20 nodes, built once.
const GaussLegendre& gl_rule(int n) {
  static const std::vector<GaussLegendre> rules = [] {
    std::vector<GaussLegendre> r(11);
    for (int k = 1; k <= 10; ++k) r[static_cast<size_t>(k)] = gauss_legendre(2 * k);
    return r;
  }();
  ATTN_ASSERT(n >= 2 && n <= 20 && n % 2 == 0, "gl_rule: unsupported node count");
  return rules[static_cast<size_t>(n / 2)];
}

// P(X > h, Y > k) for |r| ≥ 0.925 (Genz 2004, after Drezner & Wesolowsky 1990): an
// asymptotic expansion of the singular part near |r| = 1 plus a 20-point correction.
double bvn_upper_high(double h, double k, double r) {
  const GaussLegendre& g = gl_rule(20);
  if (r < 0.0) k = -k;
  const double hk = h * k;
  double bvn = 0.0;
  if (std::fabs(r) < 1.0) {
    const double as = (1.0 - r) * (1.0 + r);
    double a = std::sqrt(as);
    const double bs = (h - k) * (h - k);
    const double c = (4.0 - hk) / 8.0, d = (12.0 - hk) / 16.0;
    const double e0 = -(bs / as + hk) / 2.0;
    if (e0 > -100.0) {
      bvn = a * std::exp(e0) *
            (1.0 - c * (bs - as) * (1.0 - d * bs / 5.0) / 3.0 + c * d * as * as / 5.0);
    }
    if (-hk < 100.0) {
      const double b = std::sqrt(bs);
      bvn -= std::exp(-hk / 2.0) * std::sqrt(kTwoPi) * normal_cdf(-b / a) * b *
             (1.0 - c * bs * (1.0 - d * bs / 5.0) / 3.0);
    }
    a /= 2.0;
    for (size_t i = 0; i < g.x.size(); ++i) {
      const double y = a * (g.x[i] + 1.0);
      const double xs = y * y;
      const double rs = std::sqrt(1.0 - xs);
      const double e = -(bs / xs + hk) / 2.0;
      if (e > -100.0) {
        bvn += a * g.w[i] * std::exp(e) *
               (std::exp(-hk * (1.0 - rs) / (2.0 * (1.0 + rs))) / rs -
                (1.0 + c * xs * (1.0 + d * xs)));
      }
    }
    bvn = -bvn / kTwoPi;
  }
  if (r > 0.0) return bvn + normal_cdf(-std::max(h, k));
  return -bvn + std::max(0.0, normal_cdf(-h) - normal_cdf(-k));
}

// I(a, b, ρ) = (1/2π) ∫_0^{asin ρ} (ρ − sin θ) exp(−(a² + b² − 2ab sin θ)/(2cos²θ)) dθ
//            = (1/2π) ∫_0^{asin|ρ|} (|ρ| − sin φ) exp(−δ²/(2cos²φ) − p/(1 + sin φ)) dφ   (θ =
//            sgn(ρ)φ)
// with δ = a − sgn(ρ)b, p = sgn(ρ)ab (stable: no cancellation as cos φ → 0).
// The integrand, the same without the (|ρ| − sin φ) factor, integrates to Φ₂ − Φ(a)Φ(b).
template <bool kWeighted, int kNodes>
double plackett_gl_n(double a, double b, double rho) {
  static_assert(kNodes % 2 == 0);
  const GaussLegendre& g = gl_rule(kNodes);
  const double sgn = rho < 0.0 ? -1.0 : 1.0, ar = std::fabs(rho);
  // −δ²/(2cos²φ) − p/(1 + sin φ) = −(δ² + 2p(1 − s))/(2(1 − s)(1 + s)), s = sin φ ≤ 0.925
  const double delta2 = (a - sgn * b) * (a - sgn * b), p2 = 2.0 * sgn * a * b;
  const double half = 0.5 * asin_poly(ar);
  const double* x = g.x.data();
  const double* w = g.w.data();
  double sum = 0.0;
#if defined(__SSE2__)
  const __m128d one = _mm_set1_pd(1.0), hv = _mm_set1_pd(half), arv = _mm_set1_pd(ar);
  const __m128d d2 = _mm_set1_pd(delta2), pv = _mm_set1_pd(p2);
  __m128d acc = _mm_setzero_pd();
#pragma GCC unroll 16
  for (int i = 0; i < kNodes; i += 2) {  // unrolled: independent node chains overlap
    const __m128d sn = sin_pd(_mm_mul_pd(hv, _mm_add_pd(_mm_loadu_pd(x + i), one)));
    const __m128d om = _mm_sub_pd(one, sn);
    const __m128d num = _mm_add_pd(d2, _mm_mul_pd(pv, om));
    const __m128d den = _mm_mul_pd(_mm_mul_pd(_mm_set1_pd(2.0), om), _mm_add_pd(one, sn));
    const __m128d ex = exp_pd(_mm_sub_pd(_mm_setzero_pd(), _mm_div_pd(num, den)));
    const __m128d wt = kWeighted ? _mm_mul_pd(_mm_loadu_pd(w + i), _mm_sub_pd(arv, sn))
                                 : _mm_loadu_pd(w + i);
    acc = _mm_add_pd(acc, _mm_mul_pd(wt, ex));
  }
  double lanes[2];
  _mm_storeu_pd(lanes, acc);
  sum = lanes[0] + lanes[1];
#else
  for (int i = 0; i < kNodes; ++i) {
    const double s = sin_poly(half * (x[i] + 1.0));
    const double e = -((delta2 + p2 * (1.0 - s)) / (2.0 * (1.0 - s) * (1.0 + s)));
    sum += w[i] * (kWeighted ? (ar - s) : 1.0) * exp_poly(e);
  }
#endif
  // θ = sgn·φ: dθ = sgn·dφ and (ρ − sin θ) = sgn·(|ρ| − sin φ), so the weighted form
  // needs no sign.
  return (kWeighted ? 1.0 : sgn) * sum * half / kTwoPi;
}

template <bool kWeighted>
double plackett_gl(double a, double b, double rho, int n) {
  switch (n) {
    case 4: return plackett_gl_n<kWeighted, 4>(a, b, rho);
    case 6: return plackett_gl_n<kWeighted, 6>(a, b, rho);
    case 8: return plackett_gl_n<kWeighted, 8>(a, b, rho);
    case 10: return plackett_gl_n<kWeighted, 10>(a, b, rho);
    case 12: return plackett_gl_n<kWeighted, 12>(a, b, rho);
    case 14: return plackett_gl_n<kWeighted, 14>(a, b, rho);
    case 16: return plackett_gl_n<kWeighted, 16>(a, b, rho);
    default: return plackett_gl_n<kWeighted, 20>(a, b, rho);
  }
}

// Nodes for the relu integral by |ρ| band: the fewest with error ≤ ~4e-16·(1 + |F|) for
// |a|, |b| ≤ 10 (measured against a 30-digit adaptive quadrature).
int plackett_nodes_relu(double abs_rho) {
  if (abs_rho < 0.1) return 4;
  if (abs_rho < 0.3) return 6;
  if (abs_rho < 0.5) return 8;
  if (abs_rho < 0.6) return 10;
  if (abs_rho < 0.75) return 12;
  if (abs_rho < 0.85) return 14;
  if (abs_rho < 0.9) return 16;
  return 20;
}

// Nodes for Φ₂ (Genz's bands).
int plackett_nodes_bvn(double abs_rho) { return abs_rho < 0.3 ? 6 : (abs_rho < 0.75 ? 12 : 20); }

// F at |ρ| = 1: Z₂ = ±Z₁.
double relu_std_perfect(double a, double b, double rho) {
  if (rho > 0.0) {  // E[(a+Z)₊(b+Z)₊] = (ab + 1)Φ(m) + Mφ(m), m = min, M = max
    const double m = std::min(a, b), M = std::max(a, b);
    return (a * b + 1.0) * normal_cdf(m) + M * normal_pdf(m);
  }
  if (a + b <= 0.0) return 0.0;  // E[(a+Z)₊(b−Z)₊] over −a < Z < b
  const double P = normal_cdf(b) - normal_cdf(-a);
  return (a * b - 1.0) * P + b * normal_pdf(a) + a * normal_pdf(b);
}

double clamp_rho(double rho) { return std::clamp(rho, -1.0, 1.0); }

}  // namespace

double relu_std_cdf(const GaussKey& ka, const GaussKey& kb, double rho) {
  rho = clamp_rho(rho);
  const double a = ka.a, b = kb.a, ar = std::fabs(rho);
  if (ar < 0.925) {
    const double base = ka.c0 * kb.c0 + rho * ka.cdf * kb.cdf;
    if (rho == 0.0) return base;
    return base + plackett_gl<true>(a, b, rho, plackett_nodes_relu(ar));
  }
  if (ar >= 1.0) return relu_std_perfect(a, b, rho);
  // b − ρa and a − ρb without cancellation: 1 − |ρ| is exact here (Sterbenz), so
  // b − ρa = (b ∓ a) ± (1 − |ρ|)a keeps full relative accuracy as ρ → ±1.
  const double e = 1.0 - ar, sigma = std::sqrt(e * (1.0 + ar));
  const double A = (rho > 0.0 ? (b - a) + e * a : (b + a) - e * a) / sigma;
  const double B = (rho > 0.0 ? (a - b) + e * b : (a + b) - e * b) / sigma;
  const double phi2 = bvn_upper_high(-a, -b, rho);  // P(Z₁ > −a, Z₂ > −b) = Φ₂(a, b; ρ)
  return (a * b + rho) * phi2 + a * kb.pdf * normal_cdf(B) + b * ka.pdf * normal_cdf(A) +
         sigma * ka.pdf * normal_pdf(A);
}

double relu_std_quadrature(double a, double b, double rho, const GaussLegendre& g) {
  rho = clamp_rho(rho);
  const double base = (a * normal_cdf(a) + normal_pdf(a)) * (b * normal_cdf(b) + normal_pdf(b)) +
                      rho * normal_cdf(a) * normal_cdf(b);
  if (rho == 0.0) return base;
  // In ψ = π/2 − φ ∈ [ψ_min, π/2], ψ_min = arccos|ρ|:
  //   (|ρ| − cos ψ)·exp(−δ²/(2 sin²ψ) − p/(1 + cos ψ)),
  // panels [π/2^{k+1}, π/2^k] (k = 1, 2, …) resolve the layer near ψ = 0 at every scale.
  const double sgn = rho < 0.0 ? -1.0 : 1.0, ar = std::fabs(rho);
  const double delta2 = (a - sgn * b) * (a - sgn * b), p = sgn * a * b;
  const double psi_min = std::acos(ar);
  double sum = 0.0, hi = kHalfPi;
  for (int k = 0; k < 48 && hi > psi_min; ++k) {
    const double lo = std::max(psi_min, 0.5 * hi);
    const double mid = 0.5 * (hi + lo), half = 0.5 * (hi - lo);
    double panel = 0.0;
    for (size_t i = 0; i < g.x.size(); ++i) {
      const double psi = mid + half * g.x[i];
      const double sn = std::sin(psi);
      // |ρ| − cos ψ = cos ψ_min − cos ψ = 2 sin((ψ + ψ_min)/2) sin((ψ − ψ_min)/2)
      const double weight = 2.0 * std::sin(0.5 * (psi + psi_min)) * std::sin(0.5 * (psi - psi_min));
      const double e = -delta2 / (2.0 * sn * sn) - p / (1.0 + std::cos(psi));
      panel += g.w[i] * weight * std::exp(e);
    }
    sum += panel * half;
    hi = lo;
  }
  // What is left below ψ = π/2^49 is bounded by ψ³ and dropped.
  return base + sum / kTwoPi;
}

}  // namespace detail

using detail::normal_cdf;
using detail::normal_pdf;

double relu_gauss_kernel(double qa, double qb, double c) {
  ATTN_ASSERT(qa >= 0.0 && qb >= 0.0, "relu_gauss_kernel: negative variance");
  if (qa == 0.0 || qb == 0.0) return 0.0;
  const double s = std::sqrt(qa * qb);
  const double rho = std::clamp(c / s, -1.0, 1.0);
  return s / detail::kTwoPi *
         (std::sqrt((1.0 - rho) * (1.0 + rho)) + rho * (detail::kPi - std::acos(rho)));
}

namespace {

// E[relu(m + s Z)] for s ≥ 0.
double relu_mean_1d(double m, double s) {
  if (s == 0.0) return std::max(m, 0.0);
  return m * normal_cdf(m / s) + s * normal_pdf(m / s);
}

// Shared front end of the two methods: degenerate variances, then the standardised F.
template <class StdF>
double relu_gauss_mean_with(double ma, double mb, double qa, double qb, double c, StdF&& f) {
  ATTN_ASSERT(qa >= 0.0 && qb >= 0.0, "relu_gauss_kernel_mean: negative variance");
  const double sa = std::sqrt(qa), sb = std::sqrt(qb);
  if (sa == 0.0) return std::max(ma, 0.0) * relu_mean_1d(mb, sb);
  if (sb == 0.0) return std::max(mb, 0.0) * relu_mean_1d(ma, sa);
  return sa * sb * f(ma / sa, mb / sb, std::clamp(c / (sa * sb), -1.0, 1.0));
}

}  // namespace

double relu_gauss_kernel_mean(double ma, double mb, double qa, double qb, double c, int nodes) {
  ATTN_ASSERT(nodes >= 1, "relu_gauss_kernel_mean: nodes must be >= 1");
  thread_local int cached_nodes = 0;
  thread_local detail::GaussLegendre rule;
  if (cached_nodes != nodes) {
    rule = detail::gauss_legendre(nodes);
    cached_nodes = nodes;
  }
  return relu_gauss_mean_with(ma, mb, qa, qb, c, [](double a, double b, double rho) {
    return detail::relu_std_quadrature(a, b, rho, rule);
  });
}

double relu_gauss_kernel_mean_cdf(double ma, double mb, double qa, double qb, double c) {
  return relu_gauss_mean_with(ma, mb, qa, qb, c, [](double a, double b, double rho) {
    return detail::relu_std_cdf(detail::gauss_key(a), detail::gauss_key(b), rho);
  });
}

double bvn_cdf(double h, double k, double rho) {
  rho = std::clamp(rho, -1.0, 1.0);
  const double ar = std::fabs(rho);
  if (ar < 0.925) {
    const double base = normal_cdf(h) * normal_cdf(k);
    if (rho == 0.0) return base;
    return base + detail::plackett_gl<false>(h, k, rho, detail::plackett_nodes_bvn(ar));
  }
  return detail::bvn_upper_high(-h, -k, rho);  // P(X > −h, Y > −k) = P(X ≤ h, Y ≤ k)
}

double exp_gauss_kernel(double ma, double mb, double qa, double qb, double c) {
  return std::exp(ma + mb + 0.5 * (qa + qb + 2.0 * c));
}

}  // namespace attn
