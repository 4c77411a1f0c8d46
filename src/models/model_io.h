// Fitted models on disk: one safetensors file per model (`attnlab fit --save`,
// `attnlab predict --model`). Layouts per model: docs/models.md.
//
// File: every tensor float64 (F64, C order), from Model::save (model_api/model.h), plus for
// the random-feature models rfa/brfa/rfmlp their frozen weights "W" (M, e, e) or
// "w" (width, D). "__metadata__" (all values strings):
//   format          "attnlab.model"          format_version  "1"
//   model           registry name, e.g. "rfa"
//   model_params    JSON object of the resolved [model] params (Params::to_json)
//   train_params    JSON object of the resolved [train] params (n and the model's keys)
//   seed            decimal seed of the fit (the frozen weights' streams)
//   shape           JSON {"T": .., "d_in": .., "T_out": .., "d_out": ..} of the training data
//   n_train         decimal number of training samples
//   attnlab, attnlab_commit   version and git commit of the writer
//   train_data      the training file's `meta` JSON ("" if it had none)
//
// Contract:
// - model_save writes atomically (io/safetensors.h); the same model gives the same bytes.
// - model_load rebuilds the model from the registry with the saved params, seed and
//   shapes (so a random-feature model redraws its frozen weights from the seed), restores
//   the fitted state with Model::load, and refuses (UserError naming the file) a file
//   whose saved frozen weights differ bit for bit from the redrawn ones (a changed seed,
//   params or weights), an unknown format or model, or params that do not validate.
//   A loaded model predicts exactly (bit for bit) what the saved one predicted.
// - A file with GPT-2's tensors and another "format" (a GPT-2 checkpoint; models/gpt2_checkpoint.h)
//   loads as a `gpt2` model, with n_head from its metadata.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "models/model_registry.h"
#include "tasks/batch.h"

namespace attn {

// Everything besides the fitted state that identifies a fitted model.
struct ModelRecord {
  std::string model;     // registry name
  Params model_params;   // resolved [model]
  Params train_params;   // resolved [train]: n plus the model's own training keys
  uint64_t seed = 0;
  TaskShape shape;       // T, d_in, T_out, d_out of the training data (raw arrays unused)
};

// A record with the default params of `model` (UserError with a did-you-mean if unknown).
// [train] is model_train_schema() (models/train_schema.h): n plus the model's own keys.
ModelRecord model_record_make(const std::string& model, uint64_t seed, const TaskShape& shape);

// Applies one command-line item "model.KEY=VALUE" or "train.KEY=VALUE" (Params::set_text).
// `train` may be null when only model.* keys are accepted (then train.* is an error).
// Returns the dotted key. UserError for anything else, naming the item.
std::string model_set_apply(const std::string& item, Params& model, Params* train);

// The model built from the record (registry make), not yet fitted.
std::unique_ptr<Model> model_make(const ModelRecord& record);

// The tensors model_save writes: Model::save plus the frozen weights of rfa/brfa/rfmlp.
ModelTensors model_tensors(const ModelRecord& record, const Model& model);

// Writes a fitted model. `extra` metadata (e.g. "train_data") is added to the keys above.
// UserError if the model cannot be saved, IoError for file problems.
void model_save(const std::string& path, const ModelRecord& record, const Model& model,
                const std::map<std::string, std::string>& extra = {});

struct LoadedModel {
  ModelRecord record;
  std::unique_ptr<Model> model;                 // fitted: predict() works
  std::map<std::string, std::string> metadata;  // the file's __metadata__
};

LoadedModel model_load(const std::string& path);

}  // namespace attn
