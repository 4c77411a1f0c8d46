// Gradient-check rows for the basic ops: linear (with and without bias), every activation,
// layernorm, every loss, embedding. Each row runs the fast op in double on small shapes.
//
// Rows and inputs (shapes):
//   linear, linear/no_bias      inp (3, 5), weight (5, 4), bias (4)     → out (3, 4)
//   activation/<name>           inp (2, 7), |x| ∈ [0.05, 2.5] (relu's kink at 0 never probed)
//   layernorm                   inp (3, 6), gamma (6), beta (6)          → out (3, 6)
//   layernorm/no_affine         inp (3, 6), null gamma / beta (1 / 0)   → out (3, 6)
//   loss/mse, loss/bce          pred (2, 5), target (2, 5) not probed   → L (1), dpred scaled by
//   dout loss/cross_entropy          logits (3, 4) (3 positions of 4 classes), target (3, 4) not
//                               probed: a one-hot row, a soft row, an ignored (all-zero) row
//   embedding                   table (5, 3), index (6) with repeats, not probed → out (6, 3)
// All rows use the harness's default tolerance 1e-6 and step h = 1e-5 (kGradcheckStep)
// instead of the default 1e-6: the central difference's truncation error is O(h²) ≈ 1e-10
// relative here, and its rounding error O(ε·|L|/h) is 10× smaller than at h = 1e-6, where
// it reaches ~1e-6 on the losses' smallest gradients (measured over seeds 1..300: worst
// probe error 1.1e-6 at h = 1e-6, 2e-7 at h = 1e-5, truncation-limited 1e-6 at h = 1e-4).
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/activation.h"
#include "ops/embedding.h"
#include "ops/gradcheck.h"
#include "ops/layernorm.h"
#include "ops/linear.h"
#include "ops/loss.h"

namespace attn {
namespace {

using Grads = std::vector<std::vector<double>>;

constexpr double kGradcheckStep = 1e-5;

std::vector<double> zeros_like(const GradTensor& t) {
  return std::vector<double>(t.data.size(), 0.0);
}

GradcheckRow linear_row(bool with_bias) {
  GradcheckRow row;
  row.name = with_bias ? "linear" : "linear/no_bias";
  row.group = "op";
  row.step = kGradcheckStep;
  row.make = [with_bias](uint64_t seed) {
    const int64_t rows = 3, in = 5, out = 4;
    GradcheckProblem p;
    p.inputs.push_back(gradcheck_uniform("inp", {rows, in}, seed, -1, 1));
    p.inputs.push_back(gradcheck_uniform("weight", {in, out}, seed, -1, 1));
    if (with_bias) p.inputs.push_back(gradcheck_uniform("bias", {out}, seed, -1, 1));
    p.forward = [=](const GradInputs& in_) {
      std::vector<double> y(static_cast<size_t>(rows * out));
      linear_forward<double>(y.data(), in_[0].data.data(), in_[1].data.data(),
                             with_bias ? in_[2].data.data() : nullptr, rows, in, out);
      return y;
    };
    p.backward = [=](const GradInputs& in_, const std::vector<double>& dout) {
      Grads g;
      for (const auto& t : in_) g.push_back(zeros_like(t));
      linear_backward<double>(g[0].data(), g[1].data(), with_bias ? g[2].data() : nullptr,
                              dout.data(), in_[0].data.data(), in_[1].data.data(), rows, in, out);
      return g;
    };
    return p;
  };
  return row;
}

GradcheckRow activation_row(Activation a) {
  GradcheckRow row;
  row.name = std::string("activation/") + activation_name(a);
  row.group = "op";
  row.step = kGradcheckStep;
  row.make = [a](uint64_t seed) {
    const int64_t n = 14;
    GradcheckProblem p;
    p.inputs.push_back(gradcheck_away_from_zero("inp", {2, 7}, seed, 0.05, 2.5));
    p.forward = [=](const GradInputs& in) {
      std::vector<double> y(static_cast<size_t>(n));
      activation_forward<double>(y.data(), in[0].data.data(), n, a);
      return y;
    };
    p.backward = [=](const GradInputs& in, const std::vector<double>& dout) {
      // Backward as a model calls it: with the forward's output at hand.
      std::vector<double> y(static_cast<size_t>(n));
      activation_forward<double>(y.data(), in[0].data.data(), n, a);
      Grads g{zeros_like(in[0])};
      activation_backward<double>(g[0].data(), dout.data(), in[0].data.data(), y.data(), n, a);
      return g;
    };
    return p;
  };
  return row;
}

GradcheckRow layernorm_row(bool affine) {
  GradcheckRow row;
  row.name = affine ? "layernorm" : "layernorm/no_affine";
  row.group = "op";
  row.step = kGradcheckStep;
  row.make = [affine](uint64_t seed) {
    const int64_t rows = 3, dim = 6;
    const double eps = 1e-5;
    GradcheckProblem p;
    p.inputs.push_back(gradcheck_uniform("inp", {rows, dim}, seed, -2, 2));
    if (affine) {
      p.inputs.push_back(gradcheck_uniform("gamma", {dim}, seed, 0.5, 1.5));
      p.inputs.push_back(gradcheck_uniform("beta", {dim}, seed, -0.5, 0.5));
    }
    // Forward into y with the cache; gamma/beta null without the affine part.
    auto run = [=](const GradInputs& in, std::vector<double>& y, std::vector<double>& mean,
                   std::vector<double>& rstd) {
      layernorm_forward<double>(y.data(), mean.data(), rstd.data(), in[0].data.data(),
                                affine ? in[1].data.data() : nullptr,
                                affine ? in[2].data.data() : nullptr, rows, dim, eps);
    };
    p.forward = [=](const GradInputs& in) {
      std::vector<double> y(static_cast<size_t>(rows * dim)), mean(rows), rstd(rows);
      run(in, y, mean, rstd);
      return y;
    };
    p.backward = [=](const GradInputs& in, const std::vector<double>& dout) {
      std::vector<double> y(static_cast<size_t>(rows * dim)), mean(rows), rstd(rows);
      run(in, y, mean, rstd);
      Grads g;
      for (const auto& t : in) g.push_back(zeros_like(t));
      layernorm_backward<double>(g[0].data(), affine ? g[1].data() : nullptr,
                                 affine ? g[2].data() : nullptr, dout.data(), in[0].data.data(),
                                 affine ? in[1].data.data() : nullptr, mean.data(), rstd.data(),
                                 rows, dim);
      return g;
    };
    return p;
  };
  return row;
}

// The target of a loss row: real values (mse), probabilities (bce), or rows of a one-hot, a
// soft and an ignored position (cross_entropy).
GradTensor loss_row_target(Loss loss, uint64_t seed) {
  switch (loss) {
    case Loss::mse: return gradcheck_uniform("target", {2, 5}, seed, -1, 1);
    case Loss::bce_logits: return gradcheck_uniform("target", {2, 5}, seed, 0, 1);
    case Loss::cross_entropy: {
      GradTensor t = gradcheck_uniform("target", {3, 4}, seed, 0.1, 1);
      double mass = 0;
      for (int64_t k = 4; k < 8; ++k) mass += t.data[k];
      for (int64_t k = 0; k < 4; ++k) {
        t.data[k] = k == 2 ? 1.0 : 0.0;  // one-hot, class 2
        t.data[4 + k] /= mass;           // soft, sums to 1
        t.data[8 + k] = 0.0;             // ignored
      }
      return t;
    }
  }
  ATTN_ASSERT(false, "loss_row_target: unknown loss");
}

GradcheckRow loss_row(Loss loss) {
  GradcheckRow row;
  row.name = std::string("loss/") + loss_name(loss);
  row.group = "op";
  row.step = kGradcheckStep;
  row.make = [base = loss](uint64_t seed) {
    const LossSpec loss{base, base == Loss::cross_entropy ? 4 : 0};
    GradcheckProblem p;
    GradTensor target = loss_row_target(base, seed);
    const int64_t n = static_cast<int64_t>(target.data.size());
    p.inputs.push_back(gradcheck_uniform("pred", target.shape, seed, -3, 3));
    target.differentiable = false;
    p.inputs.push_back(target);
    p.forward = [=](const GradInputs& in) {
      return std::vector<double>{
          loss_forward<double>(loss, in[0].data.data(), in[1].data.data(), n)};
    };
    p.backward = [=](const GradInputs& in, const std::vector<double>& dout) {
      // The harness's random dout doubles as the loss scale: checks `scale` too.
      Grads g{zeros_like(in[0]), {}};
      loss_backward<double>(loss, g[0].data(), in[0].data.data(), in[1].data.data(), n, dout[0]);
      return g;
    };
    return p;
  };
  return row;
}

GradcheckRow embedding_row() {
  GradcheckRow row;
  row.name = "embedding";
  row.group = "op";
  row.step = kGradcheckStep;
  row.make = [](uint64_t seed) {
    const int64_t vocab = 5, dim = 3;
    const std::vector<int64_t> index{3, 0, 3, 4, 1, 3};  // repeats: accumulation is checked
    const int64_t rows = static_cast<int64_t>(index.size());
    GradcheckProblem p;
    p.inputs.push_back(gradcheck_uniform("table", {vocab, dim}, seed, -1, 1));
    p.inputs.push_back(
        GradTensor{"index", {rows}, std::vector<double>(index.begin(), index.end()), false});
    p.forward = [=](const GradInputs& in) {
      std::vector<double> y(static_cast<size_t>(rows * dim));
      embedding_forward<double>(y.data(), index.data(), in[0].data.data(), rows, vocab, dim);
      return y;
    };
    p.backward = [=](const GradInputs& in, const std::vector<double>& dout) {
      Grads g{zeros_like(in[0]), {}};
      embedding_backward<double>(g[0].data(), dout.data(), index.data(), rows, dim);
      return g;
    };
    return p;
  };
  return row;
}

}  // namespace

void gradcheck_rows_basic(std::vector<GradcheckRow>& table) {
  table.push_back(linear_row(true));
  table.push_back(linear_row(false));
  for (const std::string& name : activation_names())
    table.push_back(activation_row(activation_parse(name)));
  table.push_back(layernorm_row(true));
  table.push_back(layernorm_row(false));
  table.push_back(loss_row(Loss::mse));
  table.push_back(loss_row(Loss::bce_logits));
  table.push_back(loss_row(Loss::cross_entropy));
  table.push_back(embedding_row());
}

}  // namespace attn
