// MlpBlock (nn/mlp_block.h) against the naive loops of ops/linear.h and ops/activation.h: the
// forward and every gradient, with a dense input (the GEMM path) and with a mostly-zero one
// (the first layer on its non-zeros, ops/sparse_rows.h), in float and double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "nn/mlp_block.h"
#include "ops/activation.h"
#include "ops/linear.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

// rows × cols with `nonzeros_per_row` entries of each row non-zero (at distinct random columns;
// all entries when it is cols), uniform in [−1, 1].
template <class T>
std::vector<T> rows_with_nonzeros(int64_t rows, int64_t cols, int64_t nonzeros_per_row,
                                  uint64_t seed) {
  Rng rng(seed, "test.mlp_block.x", 0);
  std::vector<T> x(static_cast<size_t>(rows * cols), T(0));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t placed = 0;
    while (placed < nonzeros_per_row) {
      const int64_t c = nonzeros_per_row == cols ? placed : rng.uniform_int(cols);
      T& e = x[r * cols + c];
      if (e != T(0)) continue;
      e = static_cast<T>(2 * rng.uniform() - 1);
      if (e == T(0)) e = T(0.5);
      ++placed;
    }
  }
  return x;
}

template <class T>
struct Reference {
  std::vector<T> out, dw0, db0, dw1, db1, dinp;
};

// out = relu(x·w0 + b0)·w1 + b1 and the gradients of Σ out ∘ dout, by the naive loops.
template <class T>
Reference<T> reference(const std::vector<T>& x, const std::vector<T>& w0, const std::vector<T>& b0,
                       const std::vector<T>& w1, const std::vector<T>& b1,
                       const std::vector<T>& dout, int64_t rows, int64_t in, int64_t hidden,
                       int64_t out_dim) {
  Reference<T> r;
  std::vector<T> pre(rows * hidden), post(rows * hidden), g(rows * hidden, T(0));
  r.out.resize(rows * out_dim);
  linear_forward_ref(pre.data(), x.data(), w0.data(), b0.data(), rows, in, hidden);
  activation_forward(post.data(), pre.data(), rows * hidden, Activation::relu);
  linear_forward_ref(r.out.data(), post.data(), w1.data(), b1.data(), rows, hidden, out_dim);
  r.dw1.assign(hidden * out_dim, T(0));
  r.db1.assign(out_dim, T(0));
  std::vector<T> dpost(rows * hidden, T(0));
  linear_backward_ref(dpost.data(), r.dw1.data(), r.db1.data(), dout.data(), post.data(),
                      w1.data(), rows, hidden, out_dim);
  activation_backward(g.data(), dpost.data(), pre.data(), post.data(), rows * hidden,
                      Activation::relu);
  r.dw0.assign(in * hidden, T(0));
  r.db0.assign(hidden, T(0));
  r.dinp.assign(rows * in, T(0));
  linear_backward_ref(r.dinp.data(), r.dw0.data(), r.db0.data(), g.data(), x.data(), w0.data(),
                      rows, in, hidden);
  return r;
}

// got against the naive loops' want, by the norm-wise relative error of the op tests.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, double tol,
                  const char* what) {
  EXPECT_LE(test_ops_basic::rel_err(got, std::vector<double>(want.begin(), want.end())), tol)
      << what;
}

// Runs a 2-layer block (in → hidden → out, relu) on x with and without dinp and compares it
// with the naive loops; returns whether the first layer took the sparse path.
template <class T>
bool check_block(int64_t rows, int64_t in, int64_t nonzeros_per_row, double tol) {
  const int64_t hidden = 40, out_dim = 5;
  ParamSet<T> ps;
  MlpBlock<T> block;
  block.declare(ps, "phi", {in, hidden, out_dim}, Activation::relu);
  ps.allocate();
  block.init(ps, 3, "test.mlp_block");
  // Non-zero biases, so that the sparse path's bias row is tested.
  for (int l = 0; l < 2; ++l) {
    const std::string name = "phi.b" + std::to_string(l);
    T* b = ps.value(ps.find(name));
    for (int64_t j = 0; j < ps.entry(ps.find(name)).size; ++j) b[j] = T(0.01) * T(j % 7) - T(0.02);
  }
  const std::vector<T> x = rows_with_nonzeros<T>(rows, in, nonzeros_per_row, 11);
  Rng rng(5, "test.mlp_block.dout", 0);
  std::vector<T> dout(rows * out_dim);
  for (T& v : dout) v = static_cast<T>(rng.gaussian());
  auto tensor = [&](const char* name) {
    const int id = ps.find(name);
    const T* v = ps.value(id);
    return std::vector<T>(v, v + ps.entry(id).size);
  };
  const Reference<T> want = reference(x, tensor("phi.w0"), tensor("phi.b0"), tensor("phi.w1"),
                                      tensor("phi.b1"), dout, rows, in, hidden, out_dim);
  std::vector<T> out(rows * out_dim), dinp(rows * in, T(0));
  block.forward(ps, x.data(), rows, out.data());
  ps.zero_grad();
  block.backward(ps, dout.data(), dinp.data());
  expect_close(out, want.out, tol, "out");
  expect_close(dinp, want.dinp, tol, "dinp");
  const std::pair<const char*, const std::vector<T>*> grads[] = {
      {"phi.w0", &want.dw0}, {"phi.b0", &want.db0}, {"phi.w1", &want.dw1}, {"phi.b1", &want.db1}};
  for (const auto& [name, w] : grads) {
    const int id = ps.find(name);
    const std::vector<T> got(ps.grad(id), ps.grad(id) + ps.entry(id).size);
    expect_close(got, *w, tol, name);
  }
  // Without dinp (the models' φ): the same parameter gradients.
  ps.zero_grad();
  block.backward(ps, dout.data(), static_cast<T*>(nullptr));
  const int w0 = ps.find("phi.w0");
  expect_close(std::vector<T>(ps.grad(w0), ps.grad(w0) + ps.entry(w0).size), want.dw0, tol,
               "phi.w0 without dinp");
  return block.first_layer_sparse();
}

TEST(MlpBlock, MostlyZeroInputTakesTheSparsePathAndMatchesTheNaiveLoops) {
  // 132 columns, 7 non-zero a row (qsa at N = 64: 5 %).
  EXPECT_TRUE(check_block<double>(64, 132, 7, 1e-12));
  EXPECT_TRUE(check_block<float>(64, 132, 7, 2e-5));
  // One row, one non-zero; and a row count that is not a multiple of any vector width.
  EXPECT_TRUE(check_block<double>(1, 20, 1, 1e-12));
  EXPECT_TRUE(check_block<float>(37, 68, 7, 2e-5));
  // 36 columns, 7 non-zero a row (qsa at N = 16: 19 %): short rows, sparse up to 25 %.
  EXPECT_TRUE(check_block<double>(64, 36, 7, 1e-12));
  EXPECT_TRUE(check_block<float>(64, 36, 7, 2e-5));
}

TEST(MlpBlock, DenseInputTakesTheGemmPathAndMatchesTheNaiveLoops) {
  // 20 columns, 7 non-zero a row (qsa at N = 8: 35 %), 576 columns at 19 % (the MLP's flattened
  // qsa input at N = 16: wide rows, sparse only up to 15 %), and all.
  EXPECT_FALSE(check_block<double>(64, 20, 7, 1e-12));
  EXPECT_FALSE(check_block<double>(16, 576, 112, 1e-12));
  EXPECT_FALSE(check_block<float>(64, 36, 36, 2e-5));
}

TEST(MlpBlock, ThePathFollowsEachCallsInput) {
  // One linear block fed a sparse batch, a dense one, then a sparse one: each forward decides
  // its path and each backward's weight gradient (xᵀ·dout) uses its own forward's input.
  const int64_t rows = 16, in = 100, out_dim = 8;
  ParamSet<double> ps;
  MlpBlock<double> block;
  block.declare(ps, "lin", {in, out_dim}, Activation::identity);
  ps.allocate();
  block.init(ps, 1, "test.mlp_block");
  const int w = ps.find("lin.w0");
  std::vector<double> out(rows * out_dim), dout(rows * out_dim);
  for (size_t i = 0; i < dout.size(); ++i) dout[i] = 0.1 * static_cast<double>(i % 11) - 0.3;
  const std::vector<double> sparse = rows_with_nonzeros<double>(rows, in, 3, 1);
  const std::vector<double> dense = rows_with_nonzeros<double>(rows, in, in, 2);
  const std::pair<const std::vector<double>*, bool> calls[] = {
      {&sparse, true}, {&dense, false}, {&sparse, true}};
  for (const auto& [x, is_sparse] : calls) {
    block.forward(ps, x->data(), rows, out.data());
    EXPECT_EQ(block.first_layer_sparse(), is_sparse);
    ps.zero_grad();
    block.backward(ps, dout.data(), static_cast<double*>(nullptr));
    std::vector<double> want_out(rows * out_dim), want_dw(in * out_dim, 0.0);
    linear_forward_ref(want_out.data(), x->data(), ps.value(w), ps.value(ps.find("lin.b0")), rows,
                       in, out_dim);
    double* none = nullptr;
    linear_backward_ref(none, want_dw.data(), none, dout.data(), x->data(), ps.value(w), rows, in,
                        out_dim);
    expect_close(out, want_out, 1e-12, "out");
    expect_close(std::vector<double>(ps.grad(w), ps.grad(w) + in * out_dim), want_dw, 1e-12,
                 "lin.w0");
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Σ out ∘ dout of a block (the loss whose gradients backward() gives).
double block_loss(MlpBlock<double>& block, ParamSet<double>& ps, const std::vector<double>& x,
                  const std::vector<double>& dout, int64_t rows) {
  std::vector<double> out(dout.size());
  block.forward(ps, x.data(), rows, out.data());
  double s = 0;
  for (size_t i = 0; i < out.size(); ++i) s += out[i] * dout[i];
  return s;
}

TEST(MlpBlock, ThreeLayerBlocksMatchFiniteDifferences) {
  // Three layers: the backward hands its gradient from one scratch to the other twice (relu:
  // the fused product, mask and bias sum of ops/linear_relu_backward.h; the others: product,
  // then the activation). Every parameter and the input against central differences.
  const int64_t rows = 5, in = 6;
  for (const Activation act : {Activation::relu, Activation::gelu, Activation::tanh}) {
    SCOPED_TRACE(activation_name(act));
    ParamSet<double> ps;
    MlpBlock<double> block;
    block.declare(ps, "blk", {in, 9, 7, 3}, act);
    ps.allocate();
    block.init(ps, 4, "test.mlp_block.deep");
    const std::vector<double> x = rows_with_nonzeros<double>(rows, in, in, 6);
    Rng rng(8, "test.mlp_block.deep.dout", 0);
    std::vector<double> dout(rows * 3), dinp(rows * in, 0.0);
    for (double& v : dout) v = rng.gaussian();
    block_loss(block, ps, x, dout, rows);
    ps.zero_grad();
    block.backward(ps, dout.data(), dinp.data());
    const double h = 1e-6;
    for (const ParamEntry& e : ps.entries()) {
      const int id = ps.find(e.name);
      for (int64_t k = 0; k < e.size; ++k) {
        double& p = ps.value(id)[k];
        const double keep = p;
        p = keep + h;
        const double up = block_loss(block, ps, x, dout, rows);
        p = keep - h;
        const double down = block_loss(block, ps, x, dout, rows);
        p = keep;
        EXPECT_NEAR(ps.grad(id)[k], (up - down) / (2 * h), 1e-6) << e.name << "[" << k << "]";
      }
    }
    for (int64_t k = 0; k < rows * in; ++k) {
      std::vector<double> xp = x, xm = x;
      xp[k] += h;
      xm[k] -= h;
      const double fd =
          (block_loss(block, ps, xp, dout, rows) - block_loss(block, ps, xm, dout, rows)) / (2 * h);
      EXPECT_NEAR(dinp[k], fd, 1e-6) << "dinp[" << k << "]";
    }
  }
}

}  // namespace
}  // namespace attn
