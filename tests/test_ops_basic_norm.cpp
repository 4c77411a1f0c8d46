// Basic ops, part 2: layernorm (against its reference, normalised rows, shift invariance,
// accumulation, zero-sum input gradient), losses (values and gradients against the naive
// formulas and closed forms, ignored positions, stability at huge logits, names, the loss of
// each target kind) and embedding (lookup, accumulating backward,
// index errors). Part 1 and the gradient-check rows are in test_ops_basic.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "ops/embedding.h"
#include "ops/layernorm.h"
#include "ops/loss.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

using test_ops_basic::cast;
using test_ops_basic::random_vec;
using test_ops_basic::rel_err;

// ---------------------------------------------------------------- layernorm

TEST(OpsBasicLayernorm, FastMatchesRefDoubleAndFloat) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {1, 7}, {5, 13}, {3, 64}, {2, 2}};
  for (const auto& [rows, dim] : shapes) {
    SCOPED_TRACE("rows " + std::to_string(rows) + " dim " + std::to_string(dim));
    const auto x = random_vec(rows * dim, 7, "ln.x", -3, 5);
    const auto gamma = random_vec(dim, 7, "ln.g", 0.5, 1.5);
    const auto beta = random_vec(dim, 7, "ln.b");
    std::vector<double> ref(x.size()), out(x.size()), mean(rows), rstd(rows);
    layernorm_forward_ref<double>(ref.data(), x.data(), gamma.data(), beta.data(), rows, dim, 1e-5);
    layernorm_forward<double>(out.data(), mean.data(), rstd.data(), x.data(), gamma.data(),
                              beta.data(), rows, dim, 1e-5);
    EXPECT_LE(rel_err(out, ref), 1e-12);
    const auto xf = cast<float>(x), gf = cast<float>(gamma), bf = cast<float>(beta);
    std::vector<float> outf(x.size()), meanf(rows), rstdf(rows);
    layernorm_forward<float>(outf.data(), meanf.data(), rstdf.data(), xf.data(), gf.data(),
                             bf.data(), rows, dim, 1e-5f);
    EXPECT_LE(rel_err(outf, ref), 1e-5);
    // The cache: mean and 1/sqrt(var + eps) of each row.
    for (int64_t r = 0; r < rows; ++r) {
      double m = 0, v = 0;
      for (int64_t k = 0; k < dim; ++k) m += x[r * dim + k] / dim;
      for (int64_t k = 0; k < dim; ++k) v += (x[r * dim + k] - m) * (x[r * dim + k] - m) / dim;
      EXPECT_NEAR(mean[r], m, 1e-13);
      EXPECT_NEAR(rstd[r] * std::sqrt(v + 1e-5), 1.0, 1e-13);
    }
  }
}

TEST(OpsBasicLayernorm, NormalisedRowsAndShiftInvariance) {
  const int64_t rows = 4, dim = 11;
  const auto x = random_vec(rows * dim, 8, "ln.x", -2, 2);
  std::vector<double> out(x.size()), mean(rows), rstd(rows);
  layernorm_forward<double>(out.data(), mean.data(), rstd.data(), x.data(), nullptr, nullptr, rows,
                            dim, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t k = 0; k < dim; ++k) m += out[r * dim + k] / dim;
    for (int64_t k = 0; k < dim; ++k) v += (out[r * dim + k] - m) * (out[r * dim + k] - m) / dim;
    EXPECT_NEAR(m, 0.0, 1e-14);
    EXPECT_NEAR(v, 1.0, 1e-13);
  }
  // A large common offset does not change the output (two-pass variance: no cancellation).
  auto shifted = x;
  for (auto& v : shifted) v += 1e4;
  std::vector<double> out2(x.size());
  layernorm_forward<double>(out2.data(), mean.data(), rstd.data(), shifted.data(), nullptr, nullptr,
                            rows, dim, 0.0);
  EXPECT_LE(rel_err(out2, out), 1e-11);
}

TEST(OpsBasicLayernorm, BackwardAccumulatesAndInputGradientSumsToZero) {
  const int64_t rows = 3, dim = 9;
  const auto x = random_vec(rows * dim, 9, "ln.x", -2, 2);
  const auto gamma = random_vec(dim, 9, "ln.g", 0.5, 1.5);
  const auto beta = random_vec(dim, 9, "ln.b");
  const auto dout = random_vec(rows * dim, 9, "ln.dout");
  std::vector<double> out(x.size()), mean(rows), rstd(rows);
  layernorm_forward<double>(out.data(), mean.data(), rstd.data(), x.data(), gamma.data(),
                            beta.data(), rows, dim, 1e-5);
  std::vector<double> dx(x.size(), 0.0), dg(dim, 0.0), db(dim, 0.0);
  layernorm_backward<double>(dx.data(), dg.data(), db.data(), dout.data(), x.data(), gamma.data(),
                             mean.data(), rstd.data(), rows, dim);
  for (int64_t r = 0; r < rows; ++r) {  // the output is invariant to shifting a row
    double s = 0;
    for (int64_t k = 0; k < dim; ++k) s += dx[r * dim + k];
    EXPECT_NEAR(s, 0.0, 1e-13);
  }
  std::vector<double> dx2(x.size(), 2.0), dg2(dim, 2.0), db2(dim, 2.0);
  layernorm_backward<double>(dx2.data(), dg2.data(), db2.data(), dout.data(), x.data(),
                             gamma.data(), mean.data(), rstd.data(), rows, dim);
  for (size_t k = 0; k < dx.size(); ++k) EXPECT_NEAR(dx2[k], 2.0 + dx[k], 1e-14);
  for (int64_t k = 0; k < dim; ++k) {
    EXPECT_NEAR(dg2[k], 2.0 + dg[k], 1e-14);
    EXPECT_NEAR(db2[k], 2.0 + db[k], 1e-14);
  }
  // Null buffers are skipped; float agrees with double.
  std::vector<double> dx3(x.size(), 0.0);
  layernorm_backward<double>(dx3.data(), nullptr, nullptr, dout.data(), x.data(), gamma.data(),
                             mean.data(), rstd.data(), rows, dim);
  EXPECT_EQ(dx3, dx);
  const auto xf = cast<float>(x), gf = cast<float>(gamma), bf = cast<float>(beta),
             doutf = cast<float>(dout);
  std::vector<float> outf(x.size()), meanf(rows), rstdf(rows), dxf(x.size(), 0.f), dgf(dim, 0.f);
  layernorm_forward<float>(outf.data(), meanf.data(), rstdf.data(), xf.data(), gf.data(), bf.data(),
                           rows, dim, 1e-5f);
  layernorm_backward<float>(dxf.data(), dgf.data(), nullptr, doutf.data(), xf.data(), gf.data(),
                            meanf.data(), rstdf.data(), rows, dim);
  EXPECT_LE(rel_err(dxf, dx), 1e-5);
  EXPECT_LE(rel_err(dgf, dg), 1e-5);
}

TEST(OpsBasicLayernorm, BadSizesAreUserErrors) {
  std::vector<double> a(4);
  EXPECT_THROW(layernorm_forward<double>(a.data(), a.data(), a.data(), a.data(), nullptr, nullptr,
                                         2, 0, 1e-5),
               UserError);
  EXPECT_THROW(layernorm_forward<double>(a.data(), a.data(), a.data(), a.data(), nullptr, nullptr,
                                         2, 2, -1.0),
               UserError);
}

// ---------------------------------------------------------------- losses

TEST(OpsBasicLoss, ParseNames) {
  EXPECT_EQ(loss_parse("mse"), Loss::mse);
  EXPECT_EQ(loss_parse("bce"), Loss::bce_logits);
  EXPECT_EQ(loss_parse("cross_entropy"), Loss::cross_entropy);
  for (Loss l : {Loss::mse, Loss::bce_logits, Loss::cross_entropy})
    EXPECT_EQ(loss_parse(loss_name(l)), l);
  try {
    loss_parse("bec");
    FAIL() << "no error for an unknown loss";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'bce'"), std::string::npos) << e.what();
  }
}

TEST(OpsBasicLoss, MseValueAndGradient) {
  const auto p = random_vec(7, 10, "mse.p"), t = random_vec(7, 10, "mse.t");
  double want = 0;
  for (int k = 0; k < 7; ++k) want += (p[k] - t[k]) * (p[k] - t[k]) / 7;
  EXPECT_NEAR(loss_forward<double>(Loss::mse, p.data(), t.data(), 7), want, 1e-15);
  std::vector<double> d(7, 1.0);
  loss_backward<double>(Loss::mse, d.data(), p.data(), t.data(), 7, 0.5);
  for (int k = 0; k < 7; ++k) EXPECT_NEAR(d[k], 1.0 + 0.5 * 2 * (p[k] - t[k]) / 7, 1e-15);
  const auto pf = cast<float>(p), tf = cast<float>(t);
  EXPECT_NEAR(loss_forward<float>(Loss::mse, pf.data(), tf.data(), 7), want, 1e-6 * want);
}

TEST(OpsBasicLoss, BceMatchesNaiveFormulaAndIsStableAtExtremes) {
  const int n = 11;
  const auto z = random_vec(n, 11, "bce.z", -6, 6), y = random_vec(n, 11, "bce.y", 0, 1);
  double want = 0;
  std::vector<double> grad(n);
  for (int k = 0; k < n; ++k) {
    const double s = 1 / (1 + std::exp(-z[k]));
    want -= (y[k] * std::log(s) + (1 - y[k]) * std::log(1 - s)) / n;
    grad[k] = (s - y[k]) / n;
  }
  EXPECT_NEAR(loss_forward<double>(Loss::bce_logits, z.data(), y.data(), n), want, 1e-13 * want);
  std::vector<double> d(n, -1.0);
  loss_backward<double>(Loss::bce_logits, d.data(), z.data(), y.data(), n, 3.0);
  for (int k = 0; k < n; ++k) EXPECT_NEAR(d[k], -1.0 + 3.0 * grad[k], 1e-14);
  const auto zf = cast<float>(z), yf = cast<float>(y);
  EXPECT_NEAR(loss_forward<float>(Loss::bce_logits, zf.data(), yf.data(), n), want, 1e-6 * want);
  // Huge logits: exact limits, no overflow, no NaN.
  const std::vector<double> ze{1000, -1000, 1000, -1000}, ye{0, 1, 1, 0};
  EXPECT_DOUBLE_EQ(loss_forward<double>(Loss::bce_logits, ze.data(), ye.data(), 4), 500.0);
  std::vector<double> de(4, 0.0);
  loss_backward<double>(Loss::bce_logits, de.data(), ze.data(), ye.data(), 4, 1.0);
  EXPECT_EQ(de, (std::vector<double>{0.25, -0.25, 0.0, 0.0}));
  const std::vector<float> zef{100.f, -100.f}, yef{0.f, 1.f};
  EXPECT_NEAR(loss_forward<float>(Loss::bce_logits, zef.data(), yef.data(), 2), 100.0, 1e-5);
}

TEST(OpsBasicLoss, EachTargetKindSelectsItsLoss) {
  EXPECT_EQ(loss_of_target(TargetKind::real), Loss::mse);
  EXPECT_EQ(loss_of_target(TargetKind::binary), Loss::bce_logits);
  EXPECT_EQ(loss_of_target(TargetKind::categorical), Loss::cross_entropy);
  // Undeclared data: binary iff every target is 0 or 1, never categorical.
  EXPECT_EQ(target_kind_of(std::nullopt, {0, 1, 1}), TargetKind::binary);
  EXPECT_EQ(target_kind_of(std::nullopt, {0, 0.5}), TargetKind::real);
  EXPECT_EQ(target_kind_of(TargetKind::categorical, {0, 1}), TargetKind::categorical);
  EXPECT_EQ(target_kind_of(TargetKind::real, {0, 1}), TargetKind::real);
}

TEST(OpsBasicLoss, CrossEntropyClosedForms) {
  // Zero logits over C classes: ℓ = log C at every labelled position, ∂L/∂z = (1/C − t)/terms.
  // Positions: class 1, ignored, class 3 (C = 4): two terms.
  const int64_t C = 4;
  const std::vector<double> z(12, 0.0),
      t = {0, 1, 0, 0, /**/ 0, 0, 0, 0, /**/ 0, 0, 0, 1};
  const LossSpec ce{Loss::cross_entropy, C};
  EXPECT_EQ(loss_terms(ce, t.data(), 12), 2);
  EXPECT_EQ(loss_weight(ce, t.data(), 3, 4), 2.0);
  EXPECT_EQ(loss_weight(LossSpec(Loss::mse), t.data(), 3, 4), 3.0);  // rows
  EXPECT_NEAR(loss_forward(ce, z.data(), t.data(), 12), std::log(4.0), 1e-15);
  std::vector<double> d(12, 0.0);
  loss_backward(ce, d.data(), z.data(), t.data(), 12, 1.0);
  for (int64_t k = 0; k < 12; ++k) {
    const bool ignored = k >= 4 && k < 8;
    EXPECT_NEAR(d[k], ignored ? 0.0 : (0.25 - t[k]) / 2, 1e-15) << k;
  }
  // Two classes: cross-entropy on logits (0, x) with target class y is bce on x.
  const auto x = random_vec(9, 4, "ce.x", -5, 5);
  std::vector<double> pair_z, pair_t, bce_t;
  for (int64_t k = 0; k < 9; ++k) {
    const double y = k % 3 == 0 ? 1.0 : 0.0;
    pair_z.insert(pair_z.end(), {0.0, x[k]});
    pair_t.insert(pair_t.end(), {1 - y, y});
    bce_t.push_back(y);
  }
  EXPECT_NEAR(loss_forward(LossSpec(Loss::cross_entropy, 2), pair_z.data(), pair_t.data(), 18),
              loss_forward<double>(Loss::bce_logits, x.data(), bce_t.data(), 9), 1e-14);
  std::vector<double> dpair(18, 0.0), dbce(9, 0.0);
  loss_backward(LossSpec(Loss::cross_entropy, 2), dpair.data(), pair_z.data(), pair_t.data(), 18,
                1.0);
  loss_backward<double>(Loss::bce_logits, dbce.data(), x.data(), bce_t.data(), 9, 1.0);
  for (int64_t k = 0; k < 9; ++k) {
    EXPECT_NEAR(dpair[2 * k + 1], dbce[k], 1e-15);
    EXPECT_NEAR(dpair[2 * k], -dbce[k], 1e-15);
  }
}

TEST(OpsBasicLoss, CrossEntropyMatchesTheNaiveReferenceAndIsStable) {
  const int64_t P = 7, C = 5, count = P * C;
  const auto z = random_vec(count, 12, "ce.z", -4, 4);
  std::vector<double> t(count, 0.0);
  for (int64_t p = 0; p < P; ++p)
    if (p != 3) t[p * C + (p * 2) % C] = 1.0;  // position 3 ignored
  std::vector<double> ref_grad(count);
  const double want = loss_cross_entropy_naive(z.data(), t.data(), count, C, ref_grad.data());
  const LossSpec ce{Loss::cross_entropy, C};
  EXPECT_NEAR(loss_forward(ce, z.data(), t.data(), count), want, 1e-14 * want);
  std::vector<double> d(count, 0.5);
  loss_backward(ce, d.data(), z.data(), t.data(), count, 2.0);
  for (int64_t k = 0; k < count; ++k) EXPECT_NEAR(d[k], 0.5 + 2.0 * ref_grad[k], 1e-15) << k;
  const auto zf = cast<float>(z), tf = cast<float>(t);
  EXPECT_NEAR(loss_forward(ce, zf.data(), tf.data(), count), want, 1e-6 * want);
  // Huge logits: the max shift keeps both directions finite and exact.
  const std::vector<double> zh{1000, -1000, /**/ -1000, 1000}, th{0, 1, /**/ 0, 1};
  EXPECT_DOUBLE_EQ(loss_forward(LossSpec(Loss::cross_entropy, 2), zh.data(), th.data(), 4), 1000.0);
  std::vector<double> dh(4, 0.0);
  loss_backward(LossSpec(Loss::cross_entropy, 2), dh.data(), zh.data(), th.data(), 4, 1.0);
  EXPECT_EQ(dh, (std::vector<double>{0.5, -0.5, 0.0, 0.0}));
  // Every position ignored: nothing to average over.
  const std::vector<double> none(4, 0.0);
  EXPECT_THROW(loss_forward(LossSpec(Loss::cross_entropy, 2), zh.data(), none.data(), 4),
               UserError);
}

TEST(OpsBasicLoss, EmptyBatchIsUserError) {
  std::vector<double> a(1);
  EXPECT_THROW(loss_forward<double>(Loss::mse, a.data(), a.data(), 0), UserError);
  EXPECT_THROW(loss_backward<double>(Loss::bce_logits, a.data(), a.data(), a.data(), 0, 1.0),
               UserError);
}

// ---------------------------------------------------------------- embedding

TEST(OpsBasicEmbedding, LookupAndAccumulatingBackward) {
  const int64_t vocab = 4, dim = 3;
  const auto table = random_vec(vocab * dim, 12, "emb.table");
  const std::vector<int64_t> index{2, 0, 2, 3, 2};
  const int64_t rows = 5;
  std::vector<double> out(rows * dim);
  embedding_forward<double>(out.data(), index.data(), table.data(), rows, vocab, dim);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < dim; ++k) EXPECT_EQ(out[r * dim + k], table[index[r] * dim + k]);
  const auto dout = random_vec(rows * dim, 12, "emb.dout");
  std::vector<double> dtable(vocab * dim, 1.0);
  embedding_backward<double>(dtable.data(), dout.data(), index.data(), rows, dim);
  for (int64_t v = 0; v < vocab; ++v) {
    for (int64_t k = 0; k < dim; ++k) {
      double want = 1.0;
      for (int64_t r = 0; r < rows; ++r)
        if (index[r] == v) want += dout[r * dim + k];
      EXPECT_NEAR(dtable[v * dim + k], want, 1e-15);
    }
  }
  const auto tf = cast<float>(table);
  std::vector<float> outf(rows * dim);
  embedding_forward<float>(outf.data(), index.data(), tf.data(), rows, vocab, dim);
  EXPECT_LE(rel_err(outf, out), 1e-7);
}

TEST(OpsBasicEmbedding, IndexOutOfRangeIsUserErrorAndWritesNothing) {
  const std::vector<double> table(6, 1.0);
  std::vector<double> out(6, -7.0);
  const std::vector<int64_t> bad{0, 3};  // vocab 3
  try {
    embedding_forward<double>(out.data(), bad.data(), table.data(), 2, 3, 3);
    FAIL() << "no error for an index outside the vocabulary";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index 3 at row 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out, std::vector<double>(6, -7.0));
  const std::vector<int64_t> negative{-1};
  EXPECT_THROW(embedding_forward<double>(out.data(), negative.data(), table.data(), 1, 2, 3),
               UserError);
  std::vector<double> dtable(6, 0.0);
  EXPECT_THROW(embedding_backward<double>(dtable.data(), out.data(), negative.data(), 1, 3),
               UserError);
}

}  // namespace
}  // namespace attn
