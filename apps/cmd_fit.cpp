// `attnlab fit MODEL --in TRAIN.npz [--set model.KEY=VALUE] [--set train.KEY=VALUE] --seed S
//  --save FILE.safetensors`: fits a registered model on a dataset file and saves it
// (models/fit_arrays.h does the fit; `attnlab predict` is apps/cmd_predict.cpp). A gradient
// fit shows its steps on stderr (core/progress.h; -q: none). File layouts: models/model_io.h
// and docs/models.md.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "apps/cli_fit_text.h"
#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/error.h"
#include "core/params.h"
#include "core/progress.h"
#include "core/step_meter.h"
#include "core/threads.h"
#include "io/atomic_file.h"
#include "io/dataset_file.h"
#include "models/fit_arrays.h"
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

void fit_run(const FitOptions& o) {
  ATTN_CHECK(ends_with(o.save, ".safetensors"),
             "--save " + o.save +
                 ": the model file must end in .safetensors, e.g. --save rfa.safetensors");
  threads_configure(o.threads);
  ModelRecord record = model_record_make(o.model, o.seed, TaskShape{});
  bool n_given = false;
  for (const auto& item : o.sets)
    n_given =
        model_set_apply(item, record.model_params, &record.train_params) == "train.n" || n_given;

  // brfa with a list of mean scales is a selection among models (SelectByValidation),
  // which has no saved form: refuse before the fit rather than after it.
  ATTN_CHECK(!record.model_params.has("mean_scales") ||
                 record.model_params.get_real_list("mean_scales").empty(),
             "model.mean_scales (choose the mean scale on validation data) cannot be saved yet; "
             "fit with the chosen model.mean_scale instead");

  std::string data_meta;
  Batch train = dataset_read(o.in, &data_meta);
  output_path_check(o.save, 1 << 20);  // before the fit: a bad path fails fast
  FitLog log;
  // A gradient fit's steps as a bar (terminal) or a line every 15 s (logs); made at the first
  // step, when the total is known. Ridge fits report none.
  std::unique_ptr<Progress> steps;
  int64_t shown = 0;
  StepMeterScope meter([&](int64_t done, int64_t total) {
    if (!steps) steps = std::make_unique<Progress>("fit " + o.model + ", steps", total, !o.quiet);
    steps->add(done - shown);
    shown = done;
  });
  const auto model = model_fit_arrays(record, train, n_given, log, {o.in, o.in});
  if (steps) steps->finish();
  const auto metrics = metrics_compute(train, model->predict(train));
  model_save(o.save, record, *model, {{"train_data", data_meta}});
  if (o.quiet) return;
  std::string lambda;
  for (const auto& [name, value] : log.scalars)
    if (name == "lambda") lambda = fmt::format("  lambda {:.3g}", value);
  fmt::print("fit {} on {} samples of {}: {}{}\nwrote {}\n", o.model, train.n, o.in,
             metrics_text(metrics, "train_", false), lambda, o.save);
}

}  // namespace

void fit_command_register(CLI::App& app) {
  auto o = std::make_shared<FitOptions>();
  auto* cmd = app.add_subcommand("fit", "Fit a model on a dataset file and save it as safetensors");
  cmd->add_option("model", o->model, "Model name (see `attnlab list models`)")->required();
  cmd->add_option("--in", o->in, "Training dataset .npz (as written by `attnlab data`)")
      ->required();
  cmd->add_option("--set", o->sets,
                  "Parameter, model.KEY=VALUE or train.KEY=VALUE (repeatable); train.n "
                  "defaults to every sample of --in (a smaller n takes the first n)");
  cmd->add_option("--seed", o->seed, "Seed of the model's random draws (frozen weights)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--save", o->save, "Output .safetensors file (written atomically)")->required();
  fit_output_options_add(cmd, &o->threads, &o->quiet);
  cmd->footer(
      "Saves the fitted state (float64 tensors) and, in __metadata__, the model name, the\n"
      "resolved [model] and [train] params, the seed and the data shapes. Load it with\n"
      "`attnlab predict --model FILE`. Layouts: docs/models.md.");
  cmd->callback([o] { fit_run(*o); });
}

}  // namespace attn
