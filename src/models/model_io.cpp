// Fitted models as safetensors files (model_io.h).
#include "models/model_io.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/front_option.h"
#include "core/params_json.h"
#include "core/version.h"
#include "io/safetensors.h"
#include "models/gpt2_checkpoint.h"
#include "models/rf_models.h"
#include "models/ridge_model.h"
#include "models/train_schema.h"
#include "train/ridge.h"

namespace attn {
namespace {

constexpr const char* kFormat = "attnlab.model";
constexpr const char* kFormatVersion = "1";

std::string shape_json(const TaskShape& s) {
  return "{\"T\": " + std::to_string(s.T) + ", \"d_in\": " + std::to_string(s.d_in) +
         ", \"T_out\": " + std::to_string(s.T_out) + ", \"d_out\": " + std::to_string(s.d_out) +
         "}";
}

// A metadata value; UserError if absent.
const std::string& meta_get(const std::map<std::string, std::string>& md, const std::string& key) {
  const auto it = md.find(key);
  ATTN_CHECK(it != md.end(), "__metadata__ has no '" + key + "'; this is not a model saved by `" +
                                 front_command(FrontCommand::kFitSave) + "`");
  return it->second;
}

nlohmann::json json_object(const std::string& text, const std::string& key) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ATTN_CHECK(!j.is_discarded() && j.is_object(),
             "__metadata__ '" + key + "' is not a JSON object: " + text);
  return j;
}

// Sets every key of the metadata's JSON object `key` on `p`.
void params_from_json(Params& p, const std::string& text, const std::string& key) {
  params_set_json(p, json_object(text, key), "__metadata__ '" + key + "'");
}

int64_t json_int(const nlohmann::json& j, const char* name, const std::string& key) {
  ATTN_CHECK(j.contains(name) && j[name].is_number_integer() && j[name].get<int64_t>() >= 1,
             "__metadata__ '" + key + "' needs a positive integer '" + name + "'");
  return j[name].get<int64_t>();
}

uint64_t parse_u64(const std::string& text, const std::string& key) {
  ATTN_CHECK(!text.empty() && text.size() <= 20 &&
                 text.find_first_not_of("0123456789") == std::string::npos,
             "__metadata__ '" + key + "' = '" + text + "' is not a non-negative integer");
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  ATTN_CHECK(errno == 0, "__metadata__ '" + key + "' = '" + text + "' is out of range");
  return v;
}

// The frozen weights of a fitted rfa/brfa/rfmlp model; false for other models.
bool model_frozen_weights(const Model& model, ModelTensor* out) {
  const auto* ridge = dynamic_cast<const RidgeModel*>(&model);
  return ridge && ridge->solver().feature_map() &&
         rf_feature_weights(*ridge->solver().feature_map(), out);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

ModelRecord model_record_make(const std::string& model, uint64_t seed, const TaskShape& shape) {
  const ModelInfo& info = model_find(model);
  ModelRecord r;
  r.model = info.name;
  r.model_params = Params("model", info.schema());
  r.train_params = Params("train", model_train_schema(info));
  r.seed = seed;
  r.shape.T = shape.T;
  r.shape.d_in = shape.d_in;
  r.shape.T_out = shape.T_out;
  r.shape.d_out = shape.d_out;
  return r;
}

std::string model_set_apply(const std::string& item, Params& model, Params* train) {
  const std::string sections = train ? "model.KEY=VALUE or train.KEY=VALUE" : "model.KEY=VALUE";
  const std::string set = front_option(FrontOption::kSet);
  const std::string form = sections + ", e.g. " + set + " model.heads=64";
  const ParamItem p = param_item_parse(item, form);
  ATTN_CHECK(!p.section.empty(), set + " '" + item + "' must look like " + form);
  if (p.section == "model") {
    model.set_text(p.key, p.value);
  } else if (p.section == "train" && train) {
    train->set_text(p.key, p.value);
  } else {
    throw UserError(set + " " + item + ": only " + sections + " items are accepted here, not " +
                    p.section + ".*");
  }
  return p.section + "." + p.key;
}

std::unique_ptr<Model> model_make(const ModelRecord& r) {
  return model_find(r.model).make(ModelContext{r.model_params, r.train_params, r.shape, r.seed});
}

ModelTensors model_tensors(const ModelRecord& record, const Model& model) {
  ModelTensors t;
  t.model = record.model;
  t.shape = record.shape;
  ModelTensor weights;
  if (model_frozen_weights(model, &weights)) t.tensors.push_back(std::move(weights));
  model.save(t);
  return t;
}

void model_save(const std::string& path, const ModelRecord& r, const Model& model,
                const std::map<std::string, std::string>& extra) {
  const ModelTensors t = model_tensors(r, model);
  std::vector<SafetensorsView> views;
  for (const auto& x : t.tensors)
    views.push_back({x.name, SafetensorsDType::F64, x.shape, x.data.data()});
  std::map<std::string, std::string> md = extra;
  md["format"] = kFormat;
  md["format_version"] = kFormatVersion;
  md["model"] = r.model;
  md["model_params"] = r.model_params.to_json();
  md["train_params"] = r.train_params.to_json();
  md["seed"] = std::to_string(r.seed);
  md["shape"] = shape_json(r.shape);
  md["n_train"] = std::to_string(r.train_params.get_int("n"));
  md["attnlab"] = kVersion;
  md["attnlab_commit"] = kGitCommit;
  safetensors_write(path, views, md);
}

LoadedModel model_load(const std::string& path) {
  SafetensorsFile file(path);  // IoError names the file
  const auto format = file.metadata().find("format");
  const bool ours = format != file.metadata().end() && format->second == kFormat;
  if (!ours && gpt2_checkpoint_detect(file))
    return gpt2_import(path, Gpt2ImportOptions{});  // a GPT-2 checkpoint (models/gpt2_checkpoint.h)
  LoadedModel loaded;
  try {
    const auto& md = file.metadata();
    ATTN_CHECK(md.count("format") && md.at("format") == kFormat,
               "not an attnlab model (its __metadata__ has no format = \"attnlab.model\"); save "
               "one with `" +
                   front_command(FrontCommand::kFitSaveExample) + "`");
    ATTN_CHECK(meta_get(md, "format_version") == kFormatVersion,
               "format_version " + md.at("format_version") + " is not supported (this attnlab "
               "reads version " + kFormatVersion + "); refit the model with this attnlab");
    const auto shape = json_object(meta_get(md, "shape"), "shape");
    TaskShape s;
    s.T = json_int(shape, "T", "shape");
    s.d_in = json_int(shape, "d_in", "shape");
    s.T_out = json_int(shape, "T_out", "shape");
    s.d_out = json_int(shape, "d_out", "shape");
    ModelRecord r =
        model_record_make(meta_get(md, "model"), parse_u64(meta_get(md, "seed"), "seed"), s);
    params_from_json(r.model_params, meta_get(md, "model_params"), "model_params");
    params_from_json(r.train_params, meta_get(md, "train_params"), "train_params");

    auto model = model_make(r);
    ModelTensors t;
    t.model = r.model;
    t.shape = r.shape;
    for (const auto& e : file.entries()) t.add(e.name, e.shape, file.read_f64(e.name));
    model->load(t);

    ModelTensor drawn;
    if (model_frozen_weights(*model, &drawn)) {
      const ModelTensor* saved = t.find(drawn.name);
      ATTN_CHECK(saved != nullptr, "the frozen weights '" + drawn.name + "' are missing; "
                                   "save the model again with `attnlab fit`");
      ATTN_CHECK(saved->shape == drawn.shape && same_bits(saved->data, drawn.data),
                 "the frozen weights '" + drawn.name + "' in the file differ from those model " +
                     r.model + " draws from seed " + std::to_string(r.seed) +
                     " with the saved model_params; the file was altered (seed, params or "
                     "weights) or written by another attnlab version; refit and save again");
    }
    loaded.record = std::move(r);
    loaded.model = std::move(model);
    loaded.metadata = md;
  } catch (const IoError&) {
    throw;
  } catch (const UserError& e) {
    throw UserError(path + ": " + e.what());
  }
  return loaded;
}

}  // namespace attn
