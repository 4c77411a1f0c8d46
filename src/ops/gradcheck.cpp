// The gradient-check harness (see gradcheck.h).
#include "ops/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"

namespace attn {
namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  ATTN_ASSERT(a.size() == b.size(), "gradcheck: forward output changed size");
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

int64_t elements(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

GradTensor gradcheck_uniform(const std::string& name, std::vector<int64_t> shape, uint64_t seed,
                             double lo, double hi) {
  GradTensor t{name, shape, std::vector<double>(static_cast<size_t>(elements(shape))), true};
  Rng rng(seed, "gradcheck." + name, 0);
  for (auto& x : t.data) x = lo + (hi - lo) * rng.uniform();
  return t;
}

GradTensor gradcheck_away_from_zero(const std::string& name, std::vector<int64_t> shape,
                                    uint64_t seed, double away, double hi) {
  GradTensor t{name, shape, std::vector<double>(static_cast<size_t>(elements(shape))), true};
  Rng rng(seed, "gradcheck." + name, 0);
  for (auto& x : t.data) {
    const double mag = away + (hi - away) * rng.uniform();
    x = rng.uniform() < 0.5 ? -mag : mag;
  }
  return t;
}

std::vector<GradcheckResult> gradcheck_run(const GradcheckRow& row, uint64_t seed) {
  GradcheckProblem p = row.make(seed);
  const std::vector<double> out = p.forward(p.inputs);
  Rng rng(seed, "gradcheck.dout." + row.name, 0);
  std::vector<double> dout(out.size());
  for (auto& g : dout) g = rng.gaussian();
  const auto grads = p.backward(p.inputs, dout);
  ATTN_ASSERT(grads.size() == p.inputs.size(),
              "gradcheck: backward must return one gradient per input");

  std::vector<GradcheckResult> results;
  for (size_t t = 0; t < p.inputs.size(); ++t) {
    if (!p.inputs[t].differentiable) continue;
    GradTensor& x = p.inputs[t];
    const std::vector<double>& g = grads[t];
    ATTN_ASSERT(g.size() == x.data.size(),
                "gradcheck: gradient of " + x.name + " has the wrong size");
    GradcheckResult r;
    r.row = row.name;
    r.tensor = x.name;
    double g_max = 0;
    for (double v : g) g_max = std::max(g_max, std::abs(v));

    // Entries to probe: all, or a random subset.
    std::vector<int64_t> entries(x.data.size());
    std::iota(entries.begin(), entries.end(), 0);
    if (static_cast<int64_t>(entries.size()) > row.max_probes) {
      Rng pick(seed, "gradcheck.probes." + row.name + "." + x.name, 0);
      for (int64_t i = 0; i < row.max_probes; ++i) {
        const int64_t j = i + static_cast<int64_t>(pick.uniform_int(entries.size() - i));
        std::swap(entries[i], entries[j]);
      }
      entries.resize(static_cast<size_t>(row.max_probes));
    }
    auto quotient = [&](int64_t e, double h) {
      const double saved = x.data[e];
      x.data[e] = saved + h;
      const double up = dot(p.forward(p.inputs), dout);
      x.data[e] = saved - h;
      const double down = dot(p.forward(p.inputs), dout);
      x.data[e] = saved;
      return (up - down) / (2 * h);
    };
    for (int64_t e : entries) {
      const double h = row.step * std::max(1.0, std::abs(x.data[e]));
      const double numeric = quotient(e, h);
      const double scale = std::max({std::abs(g[e]), std::abs(numeric), 1e-3 * g_max, 1e-12});
      const double error = std::abs(g[e] - numeric) / scale;
      if (error > row.tolerance) {
        // A kink between x − h and x + h makes the quotient depend on h: skip such probes.
        const double half = quotient(e, h / 2);
        if (std::abs(half - numeric) / scale > row.tolerance) {
          ++r.skipped;
          continue;
        }
      }
      ++r.probes;
      r.max_error = std::max(r.max_error, error);
    }
    r.pass = r.max_error <= row.tolerance && r.skipped * 20 <= r.probes + r.skipped;
    results.push_back(r);
  }
  return results;
}

}  // namespace attn
