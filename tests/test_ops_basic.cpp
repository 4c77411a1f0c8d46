// Basic ops, part 1: linear and activations against the naive references (double ≤ 1e-12
// relative, float ≤ 1e-5), odd shapes, accumulation into existing gradient buffers, bad-input
// errors, and every gradient-check row of the group (linear, activations, layernorm, losses,
// embedding). Part 2 (layernorm, losses, embedding) is test_ops_basic_norm.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/activation.h"
#include "ops/gradcheck.h"
#include "ops/linear.h"
#include "ops/vmath.h"
#include "gradcheck_test_helpers.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

using test_ops_basic::cast;
using test_ops_basic::random_vec;
using test_ops_basic::rel_err;

// ---------------------------------------------------------------- linear

struct LinearShape {
  int64_t rows, in, out;
};
const LinearShape kLinearShapes[] = {{1, 1, 1}, {1, 7, 3},   {13, 5, 11},
                                     {4, 1, 9}, {17, 31, 2}, {3, 2, 1}};

// Runs forward and backward (into pre-filled buffers) with the fast or the reference path.
template <class T>
struct LinearRun {
  std::vector<T> out, dinp, dweight, dbias;
};

template <class T>
LinearRun<T> linear_run(const LinearShape& s, bool bias, bool ref, uint64_t seed) {
  const auto inp = cast<T>(random_vec(s.rows * s.in, seed, "inp"));
  const auto w = cast<T>(random_vec(s.in * s.out, seed, "w"));
  const auto b = cast<T>(random_vec(s.out, seed, "b"));
  const auto dout = cast<T>(random_vec(s.rows * s.out, seed, "dout"));
  LinearRun<T> r;
  r.out.assign(static_cast<size_t>(s.rows * s.out), T(0));
  r.dinp = cast<T>(random_vec(s.rows * s.in, seed, "dinp0"));
  r.dweight = cast<T>(random_vec(s.in * s.out, seed, "dw0"));
  r.dbias = cast<T>(random_vec(s.out, seed, "db0"));
  const T* bp = bias ? b.data() : nullptr;
  T* dbp = bias ? r.dbias.data() : nullptr;
  if (ref) {
    linear_forward_ref<T>(r.out.data(), inp.data(), w.data(), bp, s.rows, s.in, s.out);
    linear_backward_ref<T>(r.dinp.data(), r.dweight.data(), dbp, dout.data(), inp.data(), w.data(),
                           s.rows, s.in, s.out);
  } else {
    linear_forward<T>(r.out.data(), inp.data(), w.data(), bp, s.rows, s.in, s.out);
    linear_backward<T>(r.dinp.data(), r.dweight.data(), dbp, dout.data(), inp.data(), w.data(),
                       s.rows, s.in, s.out);
  }
  return r;
}

TEST(OpsBasicLinear, FastMatchesRefDoubleAndFloat) {
  for (const auto& s : kLinearShapes) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE("rows " + std::to_string(s.rows) + " in " + std::to_string(s.in) + " out " +
                   std::to_string(s.out) + (bias ? " bias" : " no bias"));
      const auto ref = linear_run<double>(s, bias, true, 3);
      const auto fast = linear_run<double>(s, bias, false, 3);
      const auto fast32 = linear_run<float>(s, bias, false, 3);
      EXPECT_LE(rel_err(fast.out, ref.out), 1e-12);
      EXPECT_LE(rel_err(fast.dinp, ref.dinp), 1e-12);
      EXPECT_LE(rel_err(fast.dweight, ref.dweight), 1e-12);
      EXPECT_LE(rel_err(fast.dbias, ref.dbias), 1e-12);
      EXPECT_LE(rel_err(fast32.out, ref.out), 1e-5);
      EXPECT_LE(rel_err(fast32.dinp, ref.dinp), 1e-5);
      EXPECT_LE(rel_err(fast32.dweight, ref.dweight), 1e-5);
      EXPECT_LE(rel_err(fast32.dbias, ref.dbias), 1e-5);
    }
  }
}

TEST(OpsBasicLinear, BackwardAccumulatesAndSkipsNullBuffers) {
  const LinearShape s{5, 3, 4};
  const auto inp = random_vec(s.rows * s.in, 1, "inp");
  const auto w = random_vec(s.in * s.out, 1, "w");
  const auto dout = random_vec(s.rows * s.out, 1, "dout");
  std::vector<double> dinp1(15, 0.0), dw1(12, 0.0), db1(4, 0.0);
  linear_backward<double>(dinp1.data(), dw1.data(), db1.data(), dout.data(), inp.data(), w.data(),
                          s.rows, s.in, s.out);
  // Pre-filled with 1: the result is 1 + the gradient.
  std::vector<double> dinp2(15, 1.0), dw2(12, 1.0), db2(4, 1.0);
  linear_backward<double>(dinp2.data(), dw2.data(), db2.data(), dout.data(), inp.data(), w.data(),
                          s.rows, s.in, s.out);
  for (size_t k = 0; k < dinp1.size(); ++k) EXPECT_NEAR(dinp2[k], 1.0 + dinp1[k], 1e-14);
  for (size_t k = 0; k < dw1.size(); ++k) EXPECT_NEAR(dw2[k], 1.0 + dw1[k], 1e-14);
  for (size_t k = 0; k < db1.size(); ++k) EXPECT_NEAR(db2[k], 1.0 + db1[k], 1e-14);
  // Only dweight requested.
  std::vector<double> dw3(12, 0.0);
  linear_backward<double>(nullptr, dw3.data(), nullptr, dout.data(), inp.data(), w.data(), s.rows,
                          s.in, s.out);
  EXPECT_EQ(dw3, dw1);
}

// The input gradient set (not added) equals, bit for bit but for the sign of a zero, the one
// added into a zeroed buffer, whatever the buffer held before; out_dim 0 sets zeros.
template <class T>
void check_input_gradient_set() {
  std::vector<LinearShape> shapes(std::begin(kLinearShapes), std::end(kLinearShapes));
  shapes.push_back({6, 4, 0});
  for (const LinearShape& s : shapes) {
    const auto w = cast<T>(random_vec(s.in * s.out, 2, "w"));
    const auto dout = cast<T>(random_vec(s.rows * s.out, 2, "dout"));
    std::vector<T> added(static_cast<size_t>(s.rows * s.in), T(0));
    linear_backward<T>(added.data(), nullptr, nullptr, dout.data(), nullptr, w.data(), s.rows,
                       s.in, s.out);
    auto set = cast<T>(random_vec(s.rows * s.in, 2, "garbage"));
    linear_backward_input_set<T>(set.data(), dout.data(), w.data(), s.rows, s.in, s.out);
    EXPECT_EQ(set, added) << s.rows << " x " << s.in << " -> " << s.out;
  }
}

TEST(OpsBasicLinear, InputGradientSetEqualsTheOneAddedToZeros) {
  check_input_gradient_set<float>();
  check_input_gradient_set<double>();
}

TEST(OpsBasicLinear, EmptyInputGivesBiasAndZeroRowsDoNothing) {
  const std::vector<double> bias{1.5, -2.0, 0.25};
  std::vector<double> out(6, 99.0);
  linear_forward<double>(out.data(), nullptr, nullptr, bias.data(), 2, 0, 3);
  EXPECT_EQ(out, (std::vector<double>{1.5, -2.0, 0.25, 1.5, -2.0, 0.25}));
  linear_forward<double>(out.data(), nullptr, nullptr, nullptr, 2, 0, 3);
  EXPECT_EQ(out, std::vector<double>(6, 0.0));
  std::vector<double> dw(6, 1.0), db(3, 1.0);
  linear_backward<double>(nullptr, dw.data(), db.data(), nullptr, nullptr, nullptr, 0, 2, 3);
  EXPECT_EQ(dw, std::vector<double>(6, 1.0));
  EXPECT_EQ(db, std::vector<double>(3, 1.0));
}

TEST(OpsBasicLinear, NegativeSizeIsUserError) {
  std::vector<double> a(4);
  EXPECT_THROW(linear_forward<double>(a.data(), a.data(), a.data(), nullptr, -1, 2, 2), UserError);
  EXPECT_THROW(linear_backward<double>(a.data(), a.data(), nullptr, a.data(), a.data(), a.data(), 2,
                                       -2, 2),
               UserError);
}

// ---------------------------------------------------------------- activations

const Activation kActivations[] = {Activation::identity, Activation::relu, Activation::gelu,
                                   Activation::tanh, Activation::sigmoid};

std::vector<double> activation_points() {
  std::vector<double> x{0.0, 1e-8, -1e-8, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 8.0, -8.0, 30.0, -30.0};
  for (double v : random_vec(37, 5, "act", -6, 6)) x.push_back(v);
  return x;
}

TEST(OpsBasicActivation, ParseNameRoundTripAndUnknownNameHint) {
  EXPECT_EQ(activation_names().size(), 5u);
  for (const auto& name : activation_names())
    EXPECT_EQ(activation_name(activation_parse(name)), name);
  try {
    activation_parse("rleu");
    FAIL() << "no error for an unknown activation";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'rleu'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'relu'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sigmoid"), std::string::npos) << msg;  // lists the known names
  }
  EXPECT_THROW(activation_parse(""), UserError);
}

TEST(OpsBasicActivation, ForwardAndBackwardMatchScalarRefs) {
  const auto x = activation_points();
  const int64_t n = static_cast<int64_t>(x.size());
  const auto dout = random_vec(n, 6, "act.dout");
  const auto prefill = random_vec(n, 6, "act.prefill");
  for (Activation a : kActivations) {
    SCOPED_TRACE(activation_name(a));
    std::vector<double> y(x.size());
    activation_forward<double>(y.data(), x.data(), n, a);
    auto xf = cast<float>(x);
    std::vector<float> yf(x.size());
    activation_forward<float>(yf.data(), xf.data(), n, a);
    // Backward with out given, with out null, in double and float, into pre-filled buffers.
    auto d_out = prefill, d_inp = prefill;
    activation_backward<double>(d_out.data(), dout.data(), x.data(), y.data(), n, a);
    activation_backward<double>(d_inp.data(), dout.data(), x.data(), nullptr, n, a);
    auto df = cast<float>(prefill);
    const auto doutf = cast<float>(dout);
    activation_backward<float>(df.data(), doutf.data(), xf.data(), yf.data(), n, a);
    for (size_t k = 0; k < x.size(); ++k) {
      const double v = activation_value_ref(x[k], a);
      const double g = prefill[k] + dout[k] * activation_derivative_ref(x[k], a);
      EXPECT_LE(std::abs(y[k] - v), 1e-12 * std::max(1.0, std::abs(v))) << "x = " << x[k];
      EXPECT_LE(std::abs(d_out[k] - g), 1e-12 * std::max(1.0, std::abs(g))) << "x = " << x[k];
      EXPECT_LE(std::abs(d_inp[k] - g), 1e-12 * std::max(1.0, std::abs(g))) << "x = " << x[k];
      EXPECT_LE(std::abs(yf[k] - v), 1e-5 * std::max(1.0, std::abs(v))) << "x = " << x[k];
      EXPECT_LE(std::abs(df[k] - g), 1e-5 * std::max(1.0, std::abs(g))) << "x = " << x[k];
    }
  }
}

TEST(OpsBasicActivation, ReluDerivativeAtZeroIsZeroAndOutAloneSuffices) {
  const std::vector<double> x{0.0, -2.0, 2.0}, dout{1.0, 1.0, 1.0};
  std::vector<double> y(3), d(3, 0.0), d2(3, 0.0);
  activation_forward<double>(y.data(), x.data(), 3, Activation::relu);
  activation_backward<double>(d.data(), dout.data(), x.data(), nullptr, 3, Activation::relu);
  activation_backward<double>(d2.data(), dout.data(), nullptr, y.data(), 3, Activation::relu);
  EXPECT_EQ(d, (std::vector<double>{0.0, 0.0, 1.0}));
  EXPECT_EQ(d2, d);
}

TEST(OpsBasicActivation, ExtremeInputsStayFinite) {
  for (Activation a : kActivations) {
    const std::vector<float> xf{-1e4f, -100.f, -30.f, 30.f, 100.f, 1e4f};
    const std::vector<double> xd{-1e4, -800.0, -30.0, 30.0, 800.0, 1e4};
    std::vector<float> yf(6), df(6, 0.f), ones_f(6, 1.f);
    std::vector<double> yd(6), dd(6, 0.0), ones_d(6, 1.0);
    activation_forward<float>(yf.data(), xf.data(), 6, a);
    activation_backward<float>(df.data(), ones_f.data(), xf.data(), yf.data(), 6, a);
    activation_forward<double>(yd.data(), xd.data(), 6, a);
    activation_backward<double>(dd.data(), ones_d.data(), xd.data(), yd.data(), 6, a);
    for (int k = 0; k < 6; ++k) {
      EXPECT_TRUE(std::isfinite(yf[k]) && std::isfinite(df[k]))
          << activation_name(a) << " " << xf[k];
      EXPECT_TRUE(std::isfinite(yd[k]) && std::isfinite(dd[k]))
          << activation_name(a) << " " << xd[k];
    }
  }
  // Saturation values.
  std::vector<double> x{-800.0, 800.0}, y(2);
  activation_forward<double>(y.data(), x.data(), 2, Activation::sigmoid);
  EXPECT_GE(y[0], 0.0);
  EXPECT_LE(y[0], 1e-300);  // exp(−800) underflows
  EXPECT_EQ(y[1], 1.0);
  activation_forward<double>(y.data(), x.data(), 2, Activation::gelu);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_EQ(y[1], 800.0);
}

TEST(OpsBasicActivation, VectorisedValuesDependOnlyOnTheInput) {
  // The same value gives the same bits at any position, alignment and length (vmath blocks).
  for (Activation a : {Activation::tanh, Activation::sigmoid}) {
    const auto xd = random_vec(53, 13, "vm", -9, 9);
    const auto x = cast<float>(xd);
    std::vector<float> all(x.size());
    activation_forward<float>(all.data(), x.data(), 53, a);
    for (int64_t start : {1, 3, 17, 40}) {
      std::vector<float> part(x.size() - start);
      activation_forward<float>(part.data(), x.data() + start, 53 - start, a);
      for (size_t k = 0; k < part.size(); ++k)
        ASSERT_EQ(part[k], all[start + k]) << activation_name(a);
    }
    // Float accuracy against the double reference: a few ulp, relative, including the tails.
    for (size_t k = 0; k < x.size(); ++k) {
      const double v = activation_value_ref(x[k], a);
      EXPECT_LE(std::abs(all[k] - v), 5e-7 * std::abs(v)) << activation_name(a) << " " << x[k];
    }
  }
}

TEST(OpsBasicActivation, GeluLeftTailIsAccurate) {
  // gelu(−10) = −10·Φ(−10) = −7.6198530241605e−23; 1 + erf(−10/√2) would cancel to 0.
  std::vector<double> x{-10.0}, y(1);
  activation_forward<double>(y.data(), x.data(), 1, Activation::gelu);
  EXPECT_NEAR(y[0] / -7.6198530241604696e-23, 1.0, 1e-12);
}

// ---------------------------------------------------------------- gradient checks

TEST(OpsBasicGradcheck, EveryRowPasses) {
  std::vector<GradcheckRow> rows;
  gradcheck_rows_basic(rows);
  ASSERT_GE(rows.size(), 12u);
  for (const auto& row : rows) test::gradcheck_expect_pass(row, 20240605);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST(OpsBasicVmath, ExpNonpositiveIsAccurateAndExactAtTheEnds) {
  // Against double exp on a dense grid of [−100, 0]; −inf gives exactly 0, NaN stays NaN,
  // 0 gives exactly 1, and the value does not depend on the position in the array.
  std::vector<float> x;
  for (int k = 0; k <= 2000000; ++k) x.push_back(-100.0f * static_cast<float>(k) / 2000000.0f);
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  vmath_exp_nonpositive(y.data(), x.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t k = 0; k + 2 < x.size(); ++k) {
    if (x[k] < -87.0f) {
      ASSERT_LE(y[k], 1.7e-38f) << x[k];
      ASSERT_GT(y[k], 0.0f) << x[k];
      continue;
    }
    const double ref = std::exp(static_cast<double>(x[k]));
    worst = std::max(worst, std::fabs(y[k] - ref) / ref);
  }
  EXPECT_LE(worst, 2.5e-7);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[y.size() - 2], 0.0f);
  EXPECT_TRUE(std::isnan(y.back()));
  for (size_t k = 0; k < 100; ++k) {
    float one;
    vmath_exp_nonpositive(&one, &x[k * 7919], 1);
    EXPECT_EQ(one, y[k * 7919]);
  }
}

TEST(OpsBasicVmath, ExpNonpositiveMasksOnlyTheMinusInfLane) {
  // A −inf (a softmax's masked entry) at each position of a 64-float row (every lane of a
  // group of vectors in each copy): that entry is exactly 0, every other entry keeps the value
  // it has in the row without the −inf (vmath.cpp sends −inf through the polynomial as 0).
  std::vector<float> row(64), base(64), y(64);
  for (int k = 0; k < 64; ++k) row[k] = -0.37f * static_cast<float>(k) - 1e-3f;
  vmath_exp_nonpositive(base.data(), row.data(), 64);
  for (int p = 0; p < 64; ++p) {
    std::vector<float> x = row;
    x[p] = -std::numeric_limits<float>::infinity();
    vmath_exp_nonpositive(y.data(), x.data(), 64);
    for (int k = 0; k < 64; ++k) {
      if (k == p) {
        ASSERT_EQ(y[k], 0.0f) << p;
        ASSERT_FALSE(std::signbit(y[k])) << p;
      } else {
        ASSERT_EQ(y[k], base[k]) << p << " " << k;
      }
    }
  }
}

}  // namespace
}  // namespace attn
