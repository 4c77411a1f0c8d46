// `attnlab fit MODEL --in TRAIN.npz [--set model.KEY=VALUE] [--set train.KEY=VALUE] --seed S
//  --save FILE.safetensors`: fits a registered model on a dataset file and saves it.
// `attnlab predict --model FILE.safetensors --in DATA.npz -o OUT.npz`: loads a saved model
// and writes its predictions Y_pred (n, T_out, d_out); prints the test metrics when DATA
// has targets Y. File layouts: models/model_io.h and docs/models.md.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/params.h"
#include "core/threads.h"
#include "core/version.h"
#include "io/atomic_file.h"
#include "io/dataset_file.h"
#include "io/npy.h"
#include "models/model_inputs.h"
#include "models/model_io.h"
#include "train/metrics.h"

namespace attn {
namespace {

struct FitOptions {
  std::string model;
  std::string in;
  std::vector<std::string> sets;
  uint64_t seed = 0;
  std::string save;
  int threads = 0;
  bool quiet = false;
};

struct PredictOptions {
  std::string model;
  std::string in;
  std::string out;
  int threads = 0;
  bool quiet = false;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + ")";
}

// "PREFIXname value" pairs; `all` = false keeps mse, nmse and accuracy.
std::string metrics_text(const std::vector<std::pair<std::string, double>>& metrics,
                         const std::string& prefix, bool all) {
  std::string s;
  for (const auto& [name, value] : metrics)
    if (all || name == "mse" || name == "nmse" || name == "accuracy")
      s += fmt::format("{}{}{} {:.6g}", s.empty() ? "" : "  ", prefix, name, value);
  return s;
}

void fit_run(const FitOptions& o) {
  ATTN_CHECK(ends_with(o.save, ".safetensors"),
             "--save " + o.save + ": the model file must end in .safetensors, e.g. --save rfa.safetensors");
  threads_configure(o.threads);
  ModelRecord record = model_record_make(o.model, o.seed, TaskShape{});
  bool n_given = false;
  for (const auto& item : o.sets)
    n_given = model_set_apply(item, record.model_params, &record.train_params) == "train.n" || n_given;

  // brfa with a list of mean scales is a selection among models (SelectByValidation),
  // which has no saved form: refuse before the fit rather than after it.
  ATTN_CHECK(!record.model_params.has("mean_scales") ||
                 record.model_params.get_real_list("mean_scales").empty(),
             "model.mean_scales (choose the mean scale on validation data) cannot be saved yet; "
             "fit with the chosen model.mean_scale instead");

  std::string data_meta;
  Batch train = dataset_read(o.in, &data_meta);
  ATTN_CHECK(train.n >= 1, o.in + ": the dataset has no samples");
  if (n_given) {
    const int64_t n = record.train_params.get_int("n");
    ATTN_CHECK(n <= train.n, "train.n = " + std::to_string(n) + " but " + o.in + " holds " +
                                 std::to_string(train.n) + " samples; lower train.n");
    train.n = n;  // the first n samples
    train.X.resize(static_cast<size_t>(n * train.shape.x_size()));
    train.Y.resize(static_cast<size_t>(n * train.shape.y_size()));
    train.raw.clear();
    train.shape.raw.clear();
  } else {
    record.train_params.set("n", ParamValue(train.n));
  }
  record.shape.T = train.shape.T;
  record.shape.d_in = train.shape.d_in;
  record.shape.T_out = train.shape.T_out;
  record.shape.d_out = train.shape.d_out;
  output_path_check(o.save, 1 << 20);  // before the fit: a bad path fails fast

  const auto model = model_make(record);
  FitLog log;
  model_fit_checked(*model, train, log, o.in);
  const auto metrics = metrics_compute(train, model->predict(train));
  model_save(o.save, record, *model, {{"train_data", data_meta}});
  if (o.quiet) return;
  std::string lambda;
  for (const auto& [name, value] : log.scalars)
    if (name == "lambda") lambda = fmt::format("  lambda {:.3g}", value);
  fmt::print("fit {} on {} samples of {}: {}{}\nwrote {}\n", o.model, train.n, o.in,
             metrics_text(metrics, "train_", false), lambda, o.save);
}

// X (and Y, if present) of a dataset file, checked against the model's shapes.
Batch predict_inputs(const std::string& path, const ModelRecord& r, bool* has_y) {
  auto entries = npz_read(path);
  const auto x = entries.find("X");
  ATTN_CHECK(x != entries.end(), path + ": no array 'X'; give a dataset written by `attnlab data`");
  const NpyArray& X = x->second;
  const std::vector<int64_t> want_x{r.shape.T, r.shape.d_in};
  ATTN_CHECK(X.shape.size() == 3 && X.shape[1] == r.shape.T && X.shape[2] == r.shape.d_in,
             path + ": X has shape " + shape_text(X.shape) + " but model " + r.model +
                 " was fitted on inputs (n, " + std::to_string(r.shape.T) + ", " +
                 std::to_string(r.shape.d_in) + "); use data of the same task and parameters");
  ATTN_CHECK(X.dtype != DType::Unicode, path + ": X must be numeric");
  Batch b;
  b.n = X.shape[0];
  b.shape.T = r.shape.T;
  b.shape.d_in = r.shape.d_in;
  b.shape.T_out = r.shape.T_out;
  b.shape.d_out = r.shape.d_out;
  b.X = X.to_f64();
  const auto y = entries.find("Y");
  *has_y = y != entries.end();
  if (*has_y) {
    const NpyArray& Y = y->second;
    ATTN_CHECK(Y.shape.size() == 3 && Y.shape[0] == b.n && Y.shape[1] == r.shape.T_out &&
                   Y.shape[2] == r.shape.d_out && Y.dtype != DType::Unicode,
               path + ": Y has shape " + shape_text(Y.shape) + " but model " + r.model +
                   " predicts (" + std::to_string(b.n) + ", " + std::to_string(r.shape.T_out) +
                   ", " + std::to_string(r.shape.d_out) + "); use data of the same task");
    b.Y = Y.to_f64();
  }
  // Dataset-level constants (0-d arrays such as a Match task's `modulus` or qsa's
  // `success_threshold`), which some models (constructions) and metrics read.
  for (const auto& [name, a] : entries) {
    if (!a.shape.empty() || name == "X" || name == "Y" || a.dtype == DType::Unicode) continue;
    const bool integer = a.dtype == DType::I64 || a.dtype == DType::I32 || a.dtype == DType::U8;
    RawArray c{{name, {}, integer}, {}, {}};
    if (integer)
      c.i64 = a.to_i64();
    else
      c.f64 = a.to_f64();
    b.shape.constants.push_back(c.spec);
    b.constants.push_back(std::move(c));
  }
  return b;
}

void predict_run(const PredictOptions& o) {
  ATTN_CHECK(ends_with(o.out, ".npz"),
             "-o " + o.out + ": the output must be a .npz file name, e.g. -o predictions.npz");
  threads_configure(o.threads);
  const LoadedModel loaded = model_load(o.model);
  const ModelRecord& r = loaded.record;
  bool has_y = false;
  const Batch data = predict_inputs(o.in, r, &has_y);
  ATTN_CHECK(data.n >= 1, o.in + ": the dataset has no samples");
  const uint64_t bytes = 8 * static_cast<uint64_t>(data.n) * static_cast<uint64_t>(r.shape.y_size());
  memory_check(bytes, "predictions for " + std::to_string(data.n) + " samples",
               "split DATA into smaller files");
  output_path_check(o.out, bytes + 64 * 1024);

  const std::vector<double> pred = model_predict_checked(*loaded.model, data, o.in);
  std::vector<std::pair<std::string, double>> metrics;
  if (has_y) metrics = metrics_compute(data, pred);  // before writing: NaN is a user error
  const std::vector<int64_t> shape{data.n, r.shape.T_out, r.shape.d_out};
  const std::string meta = "{\"model\": " + json_quote(r.model) + ", \"params\": " +
                           r.model_params.to_json() + ", \"seed\": " + std::to_string(r.seed) +
                           ", \"n\": " + std::to_string(data.n) + ", \"attnlab\": " +
                           json_quote(kVersion) + "}";
  const std::u32string meta32(meta.begin(), meta.end());
  // Attention models also give their attention matrices ("attention.layer0" (n, H, T, T)).
  const std::vector<ModelTensor> maps = loaded.model->attention(data);
  std::vector<NpyView> arrays{{"Y_pred", DType::F64, shape, pred.data()}};
  for (const auto& m : maps) arrays.push_back({"attention." + m.name, DType::F64, m.shape, m.data.data()});
  arrays.push_back(npy_text("meta", meta32));
  npz_write(o.out, arrays);
  if (o.quiet) return;
  fmt::print("predicted {} samples with {} ({}): Y_pred {}\n", data.n, r.model, o.model,
             shape_text(shape));
  for (const auto& m : maps) fmt::print("  attention.{} {}\n", m.name, shape_text(m.shape));
  if (has_y) fmt::print("  {}\n", metrics_text(metrics, "test_", true));
  fmt::print("wrote {}\n", o.out);
}

}  // namespace

void fit_command_register(CLI::App& app) {
  auto o = std::make_shared<FitOptions>();
  auto* cmd = app.add_subcommand("fit", "Fit a model on a dataset file and save it as safetensors");
  cmd->add_option("model", o->model, "Model name (see `attnlab list models`)")->required();
  cmd->add_option("--in", o->in, "Training dataset .npz (as written by `attnlab data`)")->required();
  cmd->add_option("--set", o->sets,
                  "Parameter, model.KEY=VALUE or train.KEY=VALUE (repeatable); train.n "
                  "defaults to every sample of --in (a smaller n takes the first n)");
  cmd->add_option("--seed", o->seed, "Seed of the model's random draws (frozen weights)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--save", o->save, "Output .safetensors file (written atomically)")->required();
  cmd->add_option("--threads", o->threads,
                  "Compute threads (0: ATTNLAB_THREADS or 1); results do not depend on it")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the summary");
  cmd->footer(
      "Saves the fitted state (float64 tensors) and, in __metadata__, the model name, the\n"
      "resolved [model] and [train] params, the seed and the data shapes. Load it with\n"
      "`attnlab predict --model FILE`. Layouts: docs/models.md.");
  cmd->callback([o] { fit_run(*o); });
}

void predict_command_register(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  auto* cmd = app.add_subcommand("predict", "Predict with a model saved by `attnlab fit`");
  cmd->add_option("--model", o->model, "Model file .safetensors (from `attnlab fit --save`)")
      ->required();
  cmd->add_option("--in", o->in, "Dataset .npz with X (n, T, d_in); Y optional")->required();
  cmd->add_option("-o,--out", o->out, "Output .npz file (written atomically)")->required();
  cmd->add_option("--threads", o->threads,
                  "Compute threads (0: ATTNLAB_THREADS or 1); results do not depend on it")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the summary");
  cmd->footer(
      "Writes Y_pred (n, T_out, d_out), for attention models the attention matrices\n"
      "attention.layer<l> (n, H, T, T) (third order: the pair weights' marginals\n"
      "attention.layer0.first/.second), and `meta` (JSON: model, params, seed, n). When the\n"
      "dataset has Y, prints the test metrics (mse, nmse, ...).");
  cmd->callback([o] { predict_run(*o); });
}

}  // namespace attn
