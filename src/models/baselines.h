// Baseline models: what any learned model must beat.
//
//   mean    predicts the training-set mean of every output coordinate (T_out × d_out means).
//           No [model] or [train] keys.
//   linear  ridge regression with an (unpenalised) intercept from the flattened input
//           x = vec(X_sample) ∈ R^P, P = T·d_in, to the flattened target ∈ R^K, K = T_out·d_out:
//             W = argmin (1/n)‖Yc − Xc W‖² + λ‖W‖²_F = (XcᵀXc/n + λI)⁻¹ XcᵀYc/n      (primal)
//                                                  = Xcᵀ(XcXcᵀ/n + λI)⁻¹ Yc/n      (dual)
//           with Xc, Yc the training data centred by their means; prediction
//           f(x) = (x − x̄) W + ȳ. The solver works on the smaller of the P×P Gram and the
//           n×n kernel (model.solver = auto), by LDLT; if that system is singular or
//           numerically so (λ = 0) it falls back to a complete orthogonal decomposition,
//           which gives the minimum-norm solution (λ = 0, n ≤ P: the minimum-norm
//           interpolant). [model] keys: lambda (≥ 0, default 1e-3), solver
//           (auto | primal | dual). No [train] keys. FitLog scalar: param_count = P·K + K.
//
// Saved (Model::save, models/model_io.h): mean "y_mean" (K); linear "W" (P, K), "b" (K).
//
// Shapes: fit() reads X n × T × d_in and Y n × T_out × d_out; predict() returns
// n × T_out × d_out (row-major). Both check the batch shapes against the fitted ones and
// throw UserError on a mismatch or when called before fit().
#pragma once

#include <memory>
#include <vector>

#include "core/params.h"
#include "models/model_registry.h"

namespace attn {

std::vector<ParamSpec> mean_schema();
std::vector<ParamSpec> mean_train_schema();
std::unique_ptr<Model> mean_make(const ModelContext& context);

std::vector<ParamSpec> linear_schema();
std::vector<ParamSpec> linear_train_schema();
std::unique_ptr<Model> linear_make(const ModelContext& context);

}  // namespace attn
