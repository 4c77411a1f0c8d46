// Finiteness of a model's inputs, checked at the boundary before any solver sees them.
//
// A NaN or inf in X or Y would otherwise reach LAPACK (dsytrd info -4), the trainer
// ("training diverged") or come back as NaN predictions. The CLI (apps/cmd_fit.cpp,
// cmd_features.cpp) and Python (python/src/bind_models.cpp) fit and predict through these
// functions, so both refuse such data with one line naming the source and the array.
// Shapes: as Batch (X n × T × d_in, Y n × T_out × d_out, constants any shape).
#pragma once

#include <string>
#include <vector>

#include "models/model_registry.h"

namespace attn {

// UserError "SOURCE: X holds NaN at sample i (row t, column k); ..." for the first
// non-finite entry of X, of Y (when check_y) or of a float64 constant. `source` names
// the file or argument the batch came from (e.g. "train.npz" or "fit(X, Y)").
void batch_finite_check(const Batch& b, const std::string& source, bool check_y);

// model.fit(train, log) after batch_finite_check(train, source, true).
void model_fit_checked(Model& model, const Batch& train, FitLog& log, const std::string& source);

// model.predict(data) after batch_finite_check(data, source, false).
std::vector<double> model_predict_checked(const Model& model, const Batch& data,
                                          const std::string& source);

}  // namespace attn
