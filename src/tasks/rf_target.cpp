// rf_target: permutation-invariant pairwise targets of Fu et al. (2023), spec §1.1, §2.2.
#include "tasks/rf_target.h"

#include <cmath>
#include <string>

#include "core/choice.h"
#include "core/error.h"
#include "core/rng.h"

namespace attn {
namespace {

enum class Target { PairPower, PairValue, KeysPower, QueryPower, CorrExp, CorrCos, CorrPoly };

constexpr Choice<Target> kTargets[] = {
    {Target::PairPower, "pair_power"}, {Target::PairValue, "pair_value"},
    {Target::KeysPower, "keys_power"}, {Target::QueryPower, "query_power"},
    {Target::CorrExp, "corr_exp"},     {Target::CorrCos, "corr_cos"},
    {Target::CorrPoly, "corr_poly"}};

enum class RfTokens { sphere, sphere_sqrt_d, gaussian };
constexpr Choice<RfTokens> kRfTokens[] = {{RfTokens::sphere, "sphere"},
                                           {RfTokens::sphere_sqrt_d, "sphere_sqrt_d"},
                                           {RfTokens::gaussian, "gaussian"}};

struct RfConfig {
  int64_t N, d, p;
  double gamma, noise_std;
  Target target;
  RfTokens tokens;
  bool self_key;
  double ip_scale;    // multiplies <x_0, x_i>
  double beta_scale;  // multiplies <β, x>
  double radius;      // sphere radius (unused for gaussian)
};

RfConfig rf_config(const Params& params) {
  RfConfig c;
  c.N = params.get_int("N");
  c.d = params.get_int("d");
  c.p = params.get_int("p");
  c.gamma = params.get_real("gamma");
  c.noise_std = params.get_real("label_noise_std");
  c.target = choice_parse(params.get_string("target"), kTargets, "task.target");
  c.tokens = choice_parse(params.get_string("tokens"), kRfTokens, "task.tokens");
  c.self_key = params.get_bool("self_key");
  const double d = static_cast<double>(c.d);
  c.radius = c.tokens == RfTokens::sphere_sqrt_d ? std::sqrt(d) : 1.0;
  const bool normalize = params.get_bool("normalize");
  if (!normalize) {
    c.ip_scale = c.beta_scale = 1.0;
  } else if (c.tokens == RfTokens::gaussian) {
    c.ip_scale = 1.0 / std::sqrt(d);  // E<x, x'>^2 = d
    c.beta_scale = 1.0;               // E<β, x>^2 = 1
  } else {
    const double r2 = c.radius * c.radius;
    c.ip_scale = std::sqrt(d) / r2;           // E<x, x'>^2 = r^4 / d
    c.beta_scale = std::sqrt(d) / c.radius;   // E<β, x>^2 = r^2 / d
  }
  return c;
}

double ipow(double x, int64_t p) {
  double r = 1.0;
  for (int64_t k = 0; k < p; ++k) r *= x;
  return r;
}

double dot(const double* a, const double* b, int64_t d) {
  double s = 0.0;
  for (int64_t k = 0; k < d; ++k) s += a[k] * b[k];
  return s;
}

// F(x_0, x_i) given the scaled inner products u = s<x_0, x_i>, bi = b<β, x_i>, b0 = b<β, x_0>.
double pair_term(const RfConfig& c, double u, double bi, double b0) {
  switch (c.target) {
    case Target::PairPower: return ipow(u, c.p);
    case Target::PairValue: return ipow(u, c.p) * bi;
    case Target::KeysPower: return ipow(bi, c.p);
    case Target::QueryPower: return ipow(b0, c.p);
    case Target::CorrExp: return std::exp(c.gamma * u);
    case Target::CorrCos: return std::cos(c.gamma * u);
    case Target::CorrPoly: return ipow(u + c.gamma, c.p);
  }
  return 0.0;
}

class RfTargetTask final : public Task {
 public:
  explicit RfTargetTask(const Params& params) : c_(rf_config(params)) {
    const int64_t keys = c_.N + (c_.self_key ? 1 : 0);
    shape_.T = keys + 1;
    shape_.d_in = c_.d;
    shape_.T_out = 1;
    shape_.d_out = 1;
    shape_.target = TargetKind::real;
    if (c_.noise_std > 0) shape_.raw.push_back({"f_star", {}, false});
    shape_.constants.push_back({"beta", {c_.d}, false});
  }

  const TaskShape& shape() const override { return shape_; }

  void fill_constants(uint64_t seed, Batch& out) const override {
    beta_draw(seed, out.constants[0].f64.data());
  }

  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override {
    std::vector<double> beta(c_.d);
    beta_draw(seed, beta.data());
    const int64_t d = c_.d, keys = shape_.T - 1;
    for (int64_t s = 0; s < count; ++s) {
      const uint64_t index = static_cast<uint64_t>(first + s);
      double* x = out.x(row + s);
      Rng rng(seed, "rf_target.tokens", index);
      for (int64_t t = 0; t <= c_.N; ++t) token_draw(rng, x + t * d);
      if (c_.self_key)
        for (int64_t k = 0; k < d; ++k) x[(c_.N + 1) * d + k] = x[k];
      const double b0 = c_.beta_scale * dot(beta.data(), x, d);
      double sum = 0.0;
      for (int64_t i = 1; i <= keys; ++i) {
        const double* xi = x + i * d;
        sum += pair_term(c_, c_.ip_scale * dot(x, xi, d), c_.beta_scale * dot(beta.data(), xi, d),
                         b0);
      }
      const double f = sum / static_cast<double>(keys);
      if (c_.noise_std > 0) {
        Rng noise(seed, "rf_target.noise", index);
        out.raw_f64(0, row + s)[0] = f;
        out.y(row + s)[0] = f + c_.noise_std * noise.gaussian();
      } else {
        out.y(row + s)[0] = f;
      }
    }
  }

 private:
  void token_draw(Rng& rng, double* x) const {
    if (c_.tokens == RfTokens::gaussian)
      rng_gaussian(rng, x, c_.d);
    else
      rng_sphere(rng, x, c_.d, c_.radius);
  }
  void beta_draw(uint64_t seed, double* beta) const {
    Rng rng(seed, "rf_target.beta", 0);
    rng_sphere(rng, beta, c_.d, 1.0);
  }

  RfConfig c_;
  TaskShape shape_;
};

}  // namespace

std::vector<ParamSpec> rf_target_schema() {
  return {
      param_int("N", 8, "number of keys (the query is separate)", 1, 1 << 20),
      param_int("d", 8, "token dimension", 1, 1 << 16),
      // target and p change the labels only (tests: LabelOnlyKeys.*).
      param_label_only(param_choice("target", "pair_power", choice_names(kTargets),
                                    "target family F(x_0, x_i), averaged over the keys")),
      param_label_only(param_int("p", 2, "degree of the power targets", 0, 64)),
      param_real("gamma", 1.0, "γ of corr_exp / corr_cos / corr_poly"),
      param_bool("normalize", true,
                 "scale each inner product to unit variance (√d on the unit sphere)"),
      param_choice("tokens", choice_name(RfTokens::sphere, kRfTokens), choice_names(kRfTokens),
                   "token distribution: unit sphere, sphere of radius √d, or N(0, I)"),
      param_bool("self_key", false, "append the query to the keys (average over N + 1)"),
      param_real("label_noise_std", 0.0, "std of Gaussian noise added to the labels", 0.0),
  };
}

std::unique_ptr<Task> rf_target_make(const Params& params) {
  return std::make_unique<RfTargetTask>(params);
}

double rf_target_reference(const Params& params, const double* x, const double* beta) {
  // Direct transcription of the definition, with std::pow and no shared helpers.
  const RfConfig c = rf_config(params);
  const int64_t d = c.d;
  const int64_t keys = c.N + (c.self_key ? 1 : 0);
  const std::string& name = params.get_string("target");
  double b0 = 0.0;
  for (int64_t k = 0; k < d; ++k) b0 += beta[k] * x[k];
  b0 *= c.beta_scale;
  double total = 0.0;
  for (int64_t i = 1; i <= keys; ++i) {
    double t = 0.0, bi = 0.0;
    for (int64_t k = 0; k < d; ++k) {
      t += x[k] * x[i * d + k];
      bi += beta[k] * x[i * d + k];
    }
    const double u = c.ip_scale * t;
    bi *= c.beta_scale;
    const double pd = static_cast<double>(c.p);
    double term = 0.0;
    if (name == "pair_power") term = std::pow(u, pd);
    if (name == "pair_value") term = std::pow(u, pd) * bi;
    if (name == "keys_power") term = std::pow(bi, pd);
    if (name == "query_power") term = std::pow(b0, pd);
    if (name == "corr_exp") term = std::exp(c.gamma * u);
    if (name == "corr_cos") term = std::cos(c.gamma * u);
    if (name == "corr_poly") term = std::pow(u + c.gamma, pd);
    total += term;
  }
  return total / static_cast<double>(keys);
}

void rf_target_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y) {
  y[0] = rf_target_reference(params, batch.x(row), batch.find("beta").f64.data());
}

}  // namespace attn
