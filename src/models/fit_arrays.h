// Fit on arrays: the one fit of a model on a batch the caller holds, behind `attnlab fit
// MODEL --in FILE` (apps/cmd_fit.cpp) and Python's Model.fit(X, Y) (python/src/bind_models.cpp).
//
// Shapes: data.X n × T × d_in, data.Y n × T_out × d_out, any raw arrays (n × ...) and
// constants. The batch is the whole training set: train.n, when the caller gave it, takes
// its first n samples (raw arrays are then dropped), else train.n is set to n. The record's
// shape becomes the batch's (T, d_in, T_out, d_out and its target kind, which train.loss =
// auto follows; no raw arrays or constants), as a saved model records it.
#pragma once

#include <memory>
#include <string>

#include "model_api/model.h"
#include "models/model_io.h"

namespace attn {

// Names for the messages: `source` leads the finiteness check's ("train.npz: X holds NaN
// ...", "fit(X, Y): ..."), `samples` is what holds the samples ("train.n = 500 but X holds
// 300 samples").
struct FitArraysSource {
  std::string source;
  std::string samples;
};

// Fits record's model on `data` (trimmed in place to the samples used) and returns it,
// with what the fit reported in `log`. UserError naming the source for no samples, an empty
// dimension, train.n = 0 (fresh samples need a task) or above n, and non-finite X or Y.
std::unique_ptr<Model> model_fit_arrays(ModelRecord& record, Batch& data, bool n_given, FitLog& log,
                                        const FitArraysSource& names);

}  // namespace attn
