// RidgeModel (see ridge_model.h): its evaluate (n_params) and its save and load, the solver's
// fitted parts as named tensors.
#include "models/ridge_model.h"

#include <string>
#include <utility>

#include "core/error.h"

namespace attn {

void RidgeModel::evaluate(const Batch& test, FitLog& log) const {
  const auto K = static_cast<int64_t>(solver_.label_mean().size());
  const int64_t coefficients = solver_.is_kernel()
                                   ? static_cast<int64_t>(solver_.dual_coefficients().size())
                                   : solver_.feature_map()->dim() * K;
  log.scalar("n_params", static_cast<double>(coefficients + K));
  solver_.evaluate(test, log);
}

void RidgeModel::save(ModelTensors& out) const {
  RidgeFitted f = solver_.fitted();
  const int64_t K = f.T_out * f.d_out;
  ATTN_CHECK(out.shape.x_size() == f.x_size && out.shape.y_size() == K,
             "model " + out.model + ": the shapes to save differ from the training data's");
  out.add("y_mean", {K}, std::move(f.y_mean));
  out.add("lambda", {}, {f.lambda});
  if (solver_.is_kernel()) {
    const int64_t n_alpha = static_cast<int64_t>(f.alpha.size()) / K;
    out.add("X_fit", {n_alpha, out.shape.T, out.shape.d_in}, std::move(f.X_fit));
    out.add("alpha", {n_alpha, K}, std::move(f.alpha));
  } else {
    out.add("V", {solver_.feature_map()->dim(), K}, std::move(f.V));
  }
}

void RidgeModel::load(const ModelTensors& in) {
  RidgeFitted f;
  f.x_size = in.shape.x_size();
  f.T_out = in.shape.T_out;
  f.d_out = in.shape.d_out;
  const int64_t K = in.shape.y_size();
  f.y_mean = in.get("y_mean", {K});
  f.lambda = in.get("lambda", {})[0];
  if (solver_.is_kernel()) {
    const ModelTensor* a = in.find("alpha");
    const int64_t n_alpha = a && a->shape.size() == 2 ? a->shape[0] : 0;
    ATTN_CHECK(n_alpha >= 1, "model " + in.model +
                                 ": the saved model has no tensor 'alpha' of "
                                 "shape (n, " +
                                 std::to_string(K) + "); save it again with `attnlab fit`");
    f.alpha = in.get("alpha", {n_alpha, K});
    f.X_fit = in.get("X_fit", {n_alpha, in.shape.T, in.shape.d_in});
  } else {
    f.V = in.get("V", {solver_.feature_map()->dim(), K});
  }
  solver_.restore(std::move(f));
}

}  // namespace attn
