// `attnlab predict --model FILE.safetensors --in DATA.npz -o OUT.npz`: loads a model saved by
// `attnlab fit` and writes its predictions Y_pred (n, T_out, d_out) (and, for attention
// models, the attention matrices); prints the test metrics when DATA has targets Y. DATA is
// read by io/dataset_file.h's rule (Y optional). File layouts: models/model_io.h and
// docs/models.md.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/cli_fit_text.h"
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

struct PredictOptions {
  std::string model;
  std::string in;
  std::string out;
  int threads = 0;
  bool quiet = false;
};

// The dataset's X (and Y, if present), checked against the model's shapes.
Batch predict_inputs(const std::string& path, const ModelRecord& r, bool* has_y) {
  Batch b = dataset_read_inputs(path, nullptr, has_y);
  ATTN_CHECK(b.shape.T == r.shape.T && b.shape.d_in == r.shape.d_in,
             path + ": X has shape " + shape_text({b.n, b.shape.T, b.shape.d_in}) + " but model " +
                 r.model + " was fitted on inputs (n, " + std::to_string(r.shape.T) + ", " +
                 std::to_string(r.shape.d_in) + "); use data of the same task and parameters");
  ATTN_CHECK(!*has_y || (b.shape.T_out == r.shape.T_out && b.shape.d_out == r.shape.d_out),
             path + ": Y has shape " + shape_text({b.n, b.shape.T_out, b.shape.d_out}) +
                 " but model " + r.model + " predicts (" + std::to_string(b.n) + ", " +
                 std::to_string(r.shape.T_out) + ", " + std::to_string(r.shape.d_out) +
                 "); use data of the same task");
  b.shape.T_out = r.shape.T_out;
  b.shape.d_out = r.shape.d_out;
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
  const uint64_t bytes =
      8 * static_cast<uint64_t>(data.n) * static_cast<uint64_t>(r.shape.y_size());
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
  for (const auto& m : maps)
    arrays.push_back({"attention." + m.name, DType::F64, m.shape, m.data.data()});
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

void predict_command_register(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  auto* cmd = app.add_subcommand("predict", "Predict with a model saved by `attnlab fit`");
  cmd->add_option("--model", o->model, "Model file .safetensors (from `attnlab fit --save`)")
      ->required();
  cmd->add_option("--in", o->in, "Dataset .npz with X (n, T, d_in); Y optional")->required();
  cmd->add_option("-o,--out", o->out, "Output .npz file (written atomically)")->required();
  fit_output_options_add(cmd, &o->threads, &o->quiet);
  cmd->footer(
      "Writes Y_pred (n, T_out, d_out), for attention models the attention matrices\n"
      "attention.layer<l> (n, H, T, T) (third order: the pair weights' marginals\n"
      "attention.layer0.first/.second), and `meta` (JSON: model, params, seed, n). When the\n"
      "dataset has Y, prints the test metrics (mse, nmse, ...).");
  cmd->callback([o] { predict_run(*o); });
}

}  // namespace attn
