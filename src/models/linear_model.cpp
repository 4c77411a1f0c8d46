// linear: ridge regression with intercept on the flattened sequence (see baselines.h).
//
// Shapes: X n × P (P = T·d_in), Y n × K (K = T_out·d_out), both row-major views of the
// Batch buffers; W P × K; predictions n × K. The solve works on the P × P Gram
// (primal) or the n × n kernel (dual), whichever is smaller unless model.solver says.
#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/eigen_rows.h"
#include "core/error.h"
#include "core/memory.h"
#include "models/baselines.h"
#include "train/ridge.h"

namespace attn {
namespace {

bool ridge_uses_dual(RidgeForm form, int64_t n, int64_t P) {
  return form == RidgeForm::dual || (form == RidgeForm::automatic && P > n);
}

// Refuses fits whose working set would not fit in memory: the centred copies Xc (n × P)
// and Yc (n × K), the m × m system with its factorisation and a fallback factorisation
// (3 m²), the right-hand side (m × K) and W (P × K), m = P (primal) or n (dual).
void ridge_memory_check(int64_t n, int64_t P, int64_t K, RidgeForm form) {
  const bool dual = ridge_uses_dual(form, n, P);
  const double m = static_cast<double>(dual ? n : P);
  const double dn = static_cast<double>(n), dP = static_cast<double>(P),
               dK = static_cast<double>(K);
  const double bytes = 8.0 * (dn * dP + dn * dK + 3.0 * m * m + m * dK + dP * dK);
  const std::string what = "model 'linear' (ridge on n = " + std::to_string(n) +
                           " samples × P = " + std::to_string(P) + " features, solving a " +
                           (dual ? "n × n kernel" : "P × P Gram") + " system)";
  const std::string hint =
      "lower train.n or the input size T·d_in (the task's sequence length or token dimension)" +
      std::string(form == RidgeForm::automatic ? ""
                                          : ", or set model.solver = auto to solve the smaller "
                                            "of the Gram and kernel systems");
  ATTN_CHECK(bytes < 1.8e19, what + " needs more than 16 EiB of memory; " + hint);
  memory_check(static_cast<uint64_t>(bytes), what, hint);
}

// Solves S Z = B for a symmetric positive semi-definite S whose lower triangle is filled.
// LDLT when S is clearly non-singular; otherwise (λ = 0 with rank-deficient data) a
// complete orthogonal decomposition, which returns the minimum-norm solution.
Eigen::MatrixXd psd_solve(Eigen::MatrixXd& S, const Eigen::MatrixXd& B) {
  Eigen::LDLT<Eigen::MatrixXd, Eigen::Lower> ldlt(S);
  if (ldlt.info() == Eigen::Success) {
    const auto D = ldlt.vectorD();
    const double d_max = D.cwiseAbs().maxCoeff();
    // Round-off pivots of an exactly singular system are O(m · eps) relative to the
    // largest; anything a thousand times above that is a genuine (if ill-conditioned) pivot.
    const double tol =
        1e3 * static_cast<double>(S.rows()) * std::numeric_limits<double>::epsilon() * d_max;
    if (d_max > 0 && D.minCoeff() > tol) return ldlt.solve(B);
  }
  S.triangularView<Eigen::StrictlyUpper>() = S.transpose();
  return Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(S).solve(B);
}

class LinearModel final : public Model {
 public:
  LinearModel(double lambda, RidgeForm form) : lambda_(lambda), form_(form) {}

  void fit(const Batch& train, FitLog& log) override {
    const int64_t n = train.n, P = train.shape.x_size(), K = train.shape.y_size();
    ATTN_CHECK(n >= 1, "model 'linear': the training set is empty; set train.n >= 1");
    ATTN_CHECK(static_cast<int64_t>(train.X.size()) == n * P &&
                   static_cast<int64_t>(train.Y.size()) == n * K,
               "model 'linear': the training batch does not hold n × T × d_in inputs and "
               "n × T_out × d_out targets");
    ridge_memory_check(n, P, K, form_);

    const ConstRowMap X(train.X.data(), n, P), Y(train.Y.data(), n, K);
    const Eigen::RowVectorXd x_mean = X.colwise().mean();
    const Eigen::RowVectorXd y_mean = Y.colwise().mean();
    const Eigen::MatrixXd Xc = X.rowwise() - x_mean;  // n × P
    const Eigen::MatrixXd Yc = Y.rowwise() - y_mean;  // n × K
    const double inv_n = 1.0 / static_cast<double>(n);

    if (!ridge_uses_dual(form_, n, P)) {
      // (XcᵀXc/n + λI) W = XcᵀYc/n
      Eigen::MatrixXd G = Eigen::MatrixXd::Zero(P, P);
      G.selfadjointView<Eigen::Lower>().rankUpdate(Xc.transpose(), inv_n);
      G.diagonal().array() += lambda_;
      const Eigen::MatrixXd B = (Xc.transpose() * Yc) * inv_n;
      W_ = psd_solve(G, B);
    } else {
      // (XcXcᵀ/n + λI) A = Yc/n,  W = Xcᵀ A
      Eigen::MatrixXd Kn = Eigen::MatrixXd::Zero(n, n);
      Kn.selfadjointView<Eigen::Lower>().rankUpdate(Xc, inv_n);
      Kn.diagonal().array() += lambda_;
      const Eigen::MatrixXd A = psd_solve(Kn, Yc * inv_n);
      W_ = Xc.transpose() * A;
    }
    bias_ = y_mean - x_mean * W_;  // f(x) = x W + (ȳ − x̄ W)
    P_ = P;
    K_ = K;
    fitted_ = true;
    log.scalar("param_count", static_cast<double>(P * K + K));
    log.scalar("n_params", static_cast<double>(P * K + K));  // W and the intercept
  }

  std::vector<double> predict(const Batch& data) const override {
    ATTN_CHECK(fitted_, "model 'linear': predict() was called before fit()");
    const int64_t n = data.n, P = data.shape.x_size(), K = data.shape.y_size();
    ATTN_CHECK(P == P_ && K == K_,
               "model 'linear': fitted for " + std::to_string(P_) + " input and " +
                   std::to_string(K_) + " output values per sample, asked to predict with " +
                   std::to_string(P) + " and " + std::to_string(K) +
                   "; use data from the same task");
    ATTN_CHECK(static_cast<int64_t>(data.X.size()) == n * P,
               "model 'linear': the batch does not hold n × T × d_in inputs");
    std::vector<double> out(static_cast<size_t>(n * K));
    const ConstRowMap X(data.X.data(), n, P);
    RowMap F(out.data(), n, K);
    F.noalias() = X * W_;
    F.rowwise() += bias_;
    return out;
  }

  // Saved as "W" (P, K) and "b" (K): f(x) = x W + b.
  void save(ModelTensors& out) const override {
    ATTN_CHECK(fitted_, "model 'linear': save() was called before fit()");
    std::vector<double> W(static_cast<size_t>(P_ * K_));
    RowMap(W.data(), P_, K_) = W_;
    out.add("W", {P_, K_}, std::move(W));
    out.add("b", {K_}, std::vector<double>(bias_.data(), bias_.data() + K_));
  }

  void load(const ModelTensors& in) override {
    P_ = in.shape.x_size();
    K_ = in.shape.y_size();
    W_ = ConstRowMap(in.get("W", {P_, K_}).data(), P_, K_);
    const std::vector<double>& b = in.get("b", {K_});
    bias_ = Eigen::Map<const Eigen::RowVectorXd>(b.data(), K_);
    fitted_ = true;
  }

 private:
  double lambda_;
  RidgeForm form_;
  Eigen::MatrixXd W_;         // P × K
  Eigen::RowVectorXd bias_;   // K
  int64_t P_ = 0, K_ = 0;
  bool fitted_ = false;
};

}  // namespace

std::vector<ParamSpec> linear_schema() {
  return {
      param_real("lambda", 1e-3,
                 "ridge penalty λ in (1/n)‖Y − XW − b‖² + λ‖W‖² (0: minimum-norm least squares)",
                 0.0),
      param_choice("solver", choice_name(RidgeForm::automatic, kRidgeForms),
                   choice_names(kRidgeForms),
                   "solve on the P × P Gram (primal), the n × n kernel (dual), or the smaller "
                   "(auto); the solution is the same"),
  };
}

std::vector<ParamSpec> linear_train_schema() { return {}; }

std::unique_ptr<Model> linear_make(const ModelContext& context) {
  const double lambda = context.model.get_real("lambda");
  ATTN_CHECK(std::isfinite(lambda) && lambda >= 0,
             "model.lambda = " + param_value_text(ParamValue(lambda)) +
                 " must be a finite number >= 0");
  const RidgeForm form =
      choice_parse(context.model.get_string("solver"), kRidgeForms, "model.solver");
  // Refuse impossible sizes before any data is generated.
  if (context.train.has("n") && context.train.get_int("n") >= 1)
    ridge_memory_check(context.train.get_int("n"), context.shape.x_size(),
                       context.shape.y_size(), form);
  return std::make_unique<LinearModel>(lambda, form);
}

}  // namespace attn
