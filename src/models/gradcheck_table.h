// The gradient-check table: every row `attnlab gradcheck` and the tests run, the ops' rows
// (ops/gradcheck.h: linear, activations, attention, LSTM, ...) first, then one row per neural
// model (models/gradcheck_rows_models.cpp). Assembled here, above the models, so that ops/
// and nn/ never call up the layers.
#pragma once

#include <vector>

#include "ops/gradcheck.h"

namespace attn {

// Every row (ops first, then models), built once.
const std::vector<GradcheckRow>& gradcheck_table();

// The neural models' rows: the parameters of a small network are the probed input.
void gradcheck_rows_models(std::vector<GradcheckRow>& table);

}  // namespace attn
