// RfaKernel and RfmlpKernel: infinite-width kernels of RFA/BRFA and RFMLP (rf_kernels.h).
//
// RFA, per pair of samples (x, x') and keys (i, j), with unit vectors û = x̃/‖x̃‖:
//   ρ_ij = ⟨û_0, û'_0⟩·⟨û_i, û'_j⟩,  ⟨x̃_i, x̃'_j⟩ = ‖x̃_i‖‖x̃'_j‖⟨û_i, û'_j⟩,
//   relu: H = (s²‖x̃_0‖‖x̃'_0‖/N²) Σ_ij ‖x̃_i‖²‖x̃'_j‖² ⟨û_i, û'_j⟩ F(a_i, b_j, ρ_ij),
//         a_i = μ⟨x_0, x_i⟩/(s‖x̃_0‖‖x̃_i‖), F(0, 0, ρ) = J(ρ)/2π (arc-cosine, μ = 0);
//   exp:  H = (1/N²) Σ_ij exp(α_i + α'_j + s²⟨x̃_0, x̃'_0⟩⟨x̃_i, x̃'_j⟩) ⟨x̃_i, x̃'_j⟩,
//         α_i = μ⟨x_0, x_i⟩ + s²‖x̃_0‖²‖x̃_i‖²/2.
// Work is done in tiles of samples (≈ 256 keys × 256 keys): two small GEMMs give the
// query cosines (tile_a × tile_b) and key cosines (tile_a·N × tile_b·N); each row of key
// cosines is then reduced against the column quantities of the b samples.
// s² = 0 (W = μW_0 exactly) has explicit features Φ(x) = (1/N) Σ_i σ(μ⟨x_0, x_i⟩) x̃_i.
#include "models/rf_kernels.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/eigen_rows.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/threads.h"
#include "models/gauss_expectations.h"

namespace attn {
namespace {

using detail::GaussKey;

enum class RfaMode { ReluZeroMean, ReluCdf, ReluQuadrature, Exp };

// Per-sample quantities of one input set (n samples, N keys, D = augmented dim).
struct RfaPrep {
  int64_t n = 0, N = 0, D = 0;
  RowMatrix u0;                 // n × D unit queries (0 rows for a zero query)
  RowMatrix uk;                 // n·N × D unit keys
  std::vector<double> q0;       // n: ‖x̃_0‖
  std::vector<double> kn;       // n·N: ‖x̃_i‖
  std::vector<double> kn2;      // n·N: ‖x̃_i‖²
  std::vector<GaussKey> gk;     // n·N (relu, μ ≠ 0): standardised means
  std::vector<double> alpha;    // n·N (exp): α_i
};

RfaPrep rfa_prepare(const double* X, int64_t n, int64_t T, int64_t d, bool augment, double s2,
                    double mu, RfaMode mode) {
  RfaPrep p;
  p.n = n;
  p.N = T - 1;
  p.D = d + (augment ? 1 : 0);
  const int64_t N = p.N, D = p.D;
  p.u0.setZero(n, D);
  p.uk.setZero(n * N, D);
  p.q0.assign(static_cast<size_t>(n), 0.0);
  p.kn.assign(static_cast<size_t>(n * N), 0.0);
  p.kn2.assign(static_cast<size_t>(n * N), 0.0);
  if (mode == RfaMode::ReluCdf || mode == RfaMode::ReluQuadrature)
    p.gk.resize(static_cast<size_t>(n * N));
  if (mode == RfaMode::Exp) p.alpha.assign(static_cast<size_t>(n * N), 0.0);
  const double s = std::sqrt(s2);
  for (int64_t a = 0; a < n; ++a) {
    const double* x = X + a * T * d;
    auto unit = [&](const double* row, double* out) {  // writes û, returns ‖x̃‖
      double nrm2 = augment ? 1.0 : 0.0;
      for (int64_t k = 0; k < d; ++k) nrm2 += row[k] * row[k];
      const double nrm = std::sqrt(nrm2);
      const double inv = nrm > 0.0 ? 1.0 / nrm : 0.0;
      for (int64_t k = 0; k < d; ++k) out[k] = row[k] * inv;
      if (augment) out[d] = inv;
      return nrm;
    };
    const double q0 = unit(x, p.u0.row(a).data());
    p.q0[static_cast<size_t>(a)] = q0;
    for (int64_t i = 0; i < N; ++i) {
      const int64_t r = a * N + i;
      const double* xi = x + (i + 1) * d;
      const double ki = unit(xi, p.uk.row(r).data());
      p.kn[static_cast<size_t>(r)] = ki;
      p.kn2[static_cast<size_t>(r)] = ki * ki;
      double m = 0.0;  // μ⟨x_0, x_i⟩ (the mean block sees the first d coordinates only)
      for (int64_t k = 0; k < d; ++k) m += x[k] * xi[k];
      m *= mu;
      const double sd = s * q0 * ki;
      if (!p.gk.empty()) p.gk[static_cast<size_t>(r)] = detail::gauss_key(sd > 0.0 ? m / sd : 0.0);
      if (!p.alpha.empty()) p.alpha[static_cast<size_t>(r)] = m + 0.5 * sd * sd;
    }
  }
  return p;
}

// Scratch of one tile: query cosines, key cosines, per-row accumulators.
struct RfaTile {
  RowMatrix r0, c;
  std::vector<double> r0e, acc;
};

struct RfaPlan {
  RfaMode mode;
  double s2;
  detail::GaussLegendre rule;  // ReluQuadrature only
};

// acc[col] += row-weighted values of row (a, i) over columns col ∈ [c0, c1).
void rfa_row(const RfaPlan& plan, const RfaPrep& A, int64_t ra, const RfaPrep& B, int64_t b_key0,
             const double* crow, const double* r0e, int64_t c0, int64_t c1, double* acc) {
  const size_t ia = static_cast<size_t>(ra);
  switch (plan.mode) {
    case RfaMode::ReluZeroMean: {
      detail::arccos_j_accumulate(crow + c0, r0e + c0, A.kn2[ia], c1 - c0, acc + c0);
      break;
    }
    case RfaMode::ReluCdf: {
      const double w = A.kn2[ia];
      const GaussKey& ka = A.gk[ia];
      const GaussKey* kb = B.gk.data() + b_key0;
      for (int64_t col = c0; col < c1; ++col) {
        const double c = crow[col];
        acc[col] += w * c * detail::relu_std_cdf(ka, kb[col], r0e[col] * c);
      }
      break;
    }
    case RfaMode::ReluQuadrature: {
      const double w = A.kn2[ia], a = A.gk[ia].a;
      const GaussKey* kb = B.gk.data() + b_key0;
      for (int64_t col = c0; col < c1; ++col) {
        const double c = crow[col];
        acc[col] += w * c * detail::relu_std_quadrature(a, kb[col].a, r0e[col] * c, plan.rule);
      }
      break;
    }
    case RfaMode::Exp: {  // here r0e holds ⟨x̃_0, x̃'_0⟩ (not a cosine)
      // g = ⟨x̃_i, x̃'_j⟩ = ‖x̃_i‖‖x̃'_j‖⟨û_i, û'_j⟩
      detail::exp_accumulate(crow + c0, B.kn.data() + b_key0 + c0, B.alpha.data() + b_key0 + c0,
                             r0e + c0, A.kn[ia], A.alpha[ia], plan.s2, c1 - c0, acc + c0);
      break;
    }
  }
}

// K entries for samples [a0, a1) × [b0, b1). In symmetric mode only b ≥ a is computed and
// mirrored; K has leading dimension ldk.
void rfa_tile(const RfaPlan& plan, const RfaPrep& A, int64_t a0, int64_t a1, const RfaPrep& B,
              int64_t b0, int64_t b1, bool symmetric, RfaTile& t, double* K, int64_t ldk) {
  const int64_t N = A.N, ta = a1 - a0, tb = b1 - b0;
  const bool exp_mode = plan.mode == RfaMode::Exp;
  t.r0.noalias() = A.u0.middleRows(a0, ta) * B.u0.middleRows(b0, tb).transpose();
  t.c.noalias() = A.uk.middleRows(a0 * N, ta * N) * B.uk.middleRows(b0 * N, tb * N).transpose();
  t.r0e.resize(static_cast<size_t>(tb * N));
  t.acc.resize(static_cast<size_t>(tb * N));
  double pref;
  switch (plan.mode) {
    case RfaMode::ReluZeroMean: pref = plan.s2 / (detail::kTwoPi * N * N); break;
    case RfaMode::Exp: pref = 1.0 / (static_cast<double>(N) * N); break;
    default: pref = plan.s2 / (static_cast<double>(N) * N);
  }
  for (int64_t a = a0; a < a1; ++a) {
    const int64_t first_b = symmetric ? std::max(b0, a) : b0;  // b ≥ a in symmetric mode
    if (first_b >= b1) continue;
    const int64_t c0 = (first_b - b0) * N, c1 = tb * N;
    const double q0a = A.q0[static_cast<size_t>(a)];
    for (int64_t b = first_b; b < b1; ++b) {
      double r = t.r0(a - a0, b - b0);
      if (exp_mode) r *= q0a * B.q0[static_cast<size_t>(b)];  // ⟨x̃_0, x̃'_0⟩
      for (int64_t j = 0; j < N; ++j) t.r0e[static_cast<size_t>((b - b0) * N + j)] = r;
    }
    std::fill(t.acc.begin() + c0, t.acc.end(), 0.0);
    for (int64_t i = 0; i < N; ++i) {
      rfa_row(plan, A, a * N + i, B, b0 * N, t.c.row((a - a0) * N + i).data(), t.r0e.data(), c0,
              c1, t.acc.data());
    }
    for (int64_t b = first_b; b < b1; ++b) {
      double sum = 0.0;
      const double* acc = t.acc.data() + (b - b0) * N;
      if (exp_mode) {
        for (int64_t j = 0; j < N; ++j) sum += acc[j];
      } else {
        const double* kn2 = B.kn2.data() + b * N;
        for (int64_t j = 0; j < N; ++j) sum += kn2[j] * acc[j];
        sum *= q0a * B.q0[static_cast<size_t>(b)];
      }
      K[a * ldk + b] = pref * sum;
      if (symmetric) K[b * ldk + a] = pref * sum;
    }
  }
}

// s² = 0: H = ⟨Φ(x), Φ(x')⟩ with Φ(x) = (1/N) Σ_i σ(μ⟨x_0, x_i⟩) x̃_i.
RowMatrix rfa_explicit_features(const double* X, int64_t n, int64_t T, int64_t d, bool augment,
                                double mu, bool relu) {
  const int64_t N = T - 1, D = d + (augment ? 1 : 0);
  RowMatrix phi = RowMatrix::Zero(n, D);
  for (int64_t a = 0; a < n; ++a) {
    const double* x = X + a * T * d;
    for (int64_t i = 1; i <= N; ++i) {
      const double* xi = x + i * d;
      double m = 0.0;
      for (int64_t k = 0; k < d; ++k) m += x[k] * xi[k];
      m *= mu;
      const double act = (relu ? std::max(m, 0.0) : std::exp(m)) / static_cast<double>(N);
      for (int64_t k = 0; k < d; ++k) phi(a, k) += act * xi[k];
      if (augment) phi(a, d) += act;
    }
  }
  return phi;
}

void check_shape(int64_t T, int64_t d, const std::string& model) {
  ATTN_CHECK(T >= 2, "model '" + model + "' needs a query and at least one key per sample (T = " +
                         std::to_string(T) + "); use a task with N >= 1 keys");
  ATTN_CHECK(d >= 1, "model '" + model + "' needs token dimension d >= 1 (got " +
                         std::to_string(d) + ")");
}

}  // namespace

RfaKernel::RfaKernel(const RfaKernelConfig& config, int64_t T, int64_t d)
    : config_(config), T_(T), d_(d) {
  check_shape(T, d, "rfa");
  ATTN_CHECK(config.activation != RfaActivation::softmax,
             "model.activation = 'softmax' has no infinite-width kernel here (the softmax "
             "normaliser couples all keys); use relu or exp, or the finite-width model");
  ATTN_CHECK(std::isfinite(config.w_var) && config.w_var >= 0.0,
             "model.w_var = " + std::to_string(config.w_var) + " must be a finite number >= 0");
  ATTN_CHECK(std::isfinite(config.w_mean),
             "model.w_mean = " + std::to_string(config.w_mean) + " must be finite");
  ATTN_CHECK(config.quadrature_nodes >= 2 && config.quadrature_nodes <= 1000,
             "model.quadrature_nodes = " + std::to_string(config.quadrature_nodes) +
                 " must be between 2 and 1000 (48 is accurate to ~1e-15)");
}

void RfaKernel::kernel(const double* Xa, int64_t na, const double* Xb, int64_t nb,
                       double* K) const {
  ATTN_ASSERT(na >= 0 && nb >= 0, "RfaKernel::kernel: negative sample count");
  if (na == 0 || nb == 0) return;
  const bool relu = config_.activation == RfaActivation::relu, augment = config_.augment;
  const double s2 = config_.w_var, mu = config_.w_mean;
  const int64_t N = T_ - 1, D = d_ + (augment ? 1 : 0);
  const bool symmetric = Xa == Xb && na == nb;
  RowMap Kmap(K, na, nb);

  if (s2 == 0.0) {
    const RowMatrix fa = rfa_explicit_features(Xa, na, T_, d_, augment, mu, relu);
    if (symmetric) {
      Kmap.noalias() = fa * fa.transpose();
    } else {
      Kmap.noalias() = fa * rfa_explicit_features(Xb, nb, T_, d_, augment, mu, relu).transpose();
    }
    return;
  }

  RfaPlan plan;
  plan.s2 = s2;
  if (!relu) {
    plan.mode = RfaMode::Exp;
  } else if (mu == 0.0) {
    plan.mode = RfaMode::ReluZeroMean;
  } else if (config_.mean_method == KernelMeanMethod::cdf) {
    plan.mode = RfaMode::ReluCdf;
  } else {
    plan.mode = RfaMode::ReluQuadrature;
    plan.rule = detail::gauss_legendre(config_.quadrature_nodes);
  }

  // Working memory: the per-key tables of both sets, plus one tile per thread.
  const double per_key = static_cast<double>(D + 8);
  const int64_t tile = std::max<int64_t>(1, 256 / N);
  const double tile_bytes = 8.0 * (tile * N) * (tile * N + 2) + 8.0 * tile * tile;
  const double bytes = 8.0 * per_key * static_cast<double>((na + (symmetric ? 0 : nb)) * N) +
                       tile_bytes * threads_count();
  memory_check(static_cast<uint64_t>(bytes), "the RFA kernel tables (" + std::to_string(na) +
                                                 " × " + std::to_string(nb) + " samples)",
               "compute the kernel in blocks of fewer samples");

  const RfaPrep A = rfa_prepare(Xa, na, T_, d_, augment, s2, mu, plan.mode);
  RfaPrep B_own;
  if (!symmetric) B_own = rfa_prepare(Xb, nb, T_, d_, augment, s2, mu, plan.mode);
  const RfaPrep& B = symmetric ? A : B_own;

  const int64_t tiles_a = (na + tile - 1) / tile, tiles_b = (nb + tile - 1) / tile;
  parallel_for(0, tiles_a, 1, [&](int64_t lo, int64_t hi) {
    RfaTile scratch;
    for (int64_t ta = lo; ta < hi; ++ta) {
      const int64_t a0 = ta * tile, a1 = std::min(na, a0 + tile);
      for (int64_t tb = symmetric ? ta : 0; tb < tiles_b; ++tb) {
        const int64_t b0 = tb * tile, b1 = std::min(nb, b0 + tile);
        rfa_tile(plan, A, a0, a1, B, b0, b1, symmetric, scratch, K, nb);
      }
    }
  });
}

RfmlpKernel::RfmlpKernel(const RfmlpKernelConfig& config, int64_t T, int64_t d)
    : augment_(config.augment), T_(T), d_(d) {
  check_shape(T, d, "rfmlp");
  ATTN_CHECK(std::isfinite(config.w_var) && config.w_var >= 0.0,
             "model.w_var = " + std::to_string(config.w_var) +
                 " must be a finite number >= 0 (0 = the default 1/(N+2))");
  w_var_ = config.w_var > 0.0 ? config.w_var : 1.0 / static_cast<double>(T + 1);  // N + 2
}

void RfmlpKernel::kernel(const double* Xa, int64_t na, const double* Xb, int64_t nb,
                         double* K) const {
  ATTN_ASSERT(na >= 0 && nb >= 0, "RfmlpKernel::kernel: negative sample count");
  if (na == 0 || nb == 0) return;
  const int64_t P = T_ * d_;
  const double one = augment_ ? 1.0 : 0.0;
  ConstRowMap Za(Xa, na, P), Zb(Xb, nb, P);
  RowMap Kmap(K, na, nb);
  Kmap.noalias() = Za * Zb.transpose();  // ⟨z, z'⟩ without the constant
  const Eigen::VectorXd norm_a = (Za.rowwise().squaredNorm().array() + one).sqrt();
  const Eigen::VectorXd norm_b = (Zb.rowwise().squaredNorm().array() + one).sqrt();
  Eigen::VectorXd inv_b(nb);
  for (int64_t b = 0; b < nb; ++b) inv_b[b] = norm_b[b] > 0.0 ? 1.0 / norm_b[b] : 0.0;
  const double scale = w_var_ / detail::kTwoPi;
  parallel_for(0, na, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t a = lo; a < hi; ++a) {  // H = w‖z‖‖z'‖ J(cos)/2π
      double* row = K + a * nb;
      const double inv_a = norm_a[a] > 0.0 ? 1.0 / norm_a[a] : 0.0;
      for (int64_t b = 0; b < nb; ++b) row[b] = (row[b] + one) * inv_a * inv_b[b];
      detail::arccos_j_row(row, nb, row);
      const double sa = scale * norm_a[a];
      for (int64_t b = 0; b < nb; ++b) row[b] *= sa * norm_b[b];
    }
  });
  if (Xa == Xb && na == nb) {  // exact symmetry: mirror the upper triangle
    for (int64_t a = 0; a < na; ++a)
      for (int64_t b = a + 1; b < nb; ++b) K[b * nb + a] = K[a * nb + b];
  }
}

}  // namespace attn
