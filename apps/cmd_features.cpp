// `attnlab features --model rfa|brfa|rfmlp [--set model.KEY=VALUE]... --seed S --in DATA.npz
// -o OUT.npz`: the frozen weights of a random-feature model and its feature matrix Phi for
// the inputs of a dataset file (as `attnlab data rf_target` writes it).
//
// Output .npz: W (M, e, e) for rfa/brfa (e = d+1 with augment, d without) or w (width, D)
// for rfmlp; Phi (n, P) float64, head-major for rfa/brfa (Phi[:, m*e + k]); meta (JSON).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "apps/cli_numbers.h"
#include "apps/commands.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/params.h"
#include "core/progress.h"
#include "core/threads.h"
#include "core/version.h"
#include "io/atomic_file.h"
#include "io/dataset_file.h"
#include "io/npy.h"
#include "models/model_inputs.h"
#include "models/model_io.h"
#include "models/rf_models.h"

namespace attn {
namespace {

struct FeaturesOptions {
  std::string model;
  std::vector<std::string> sets;
  uint64_t seed = 0;
  std::string in;
  std::string out;
  int threads = 0;
  bool quiet = false;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + ")";
}

std::string shape_json(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

// Feature count P and the number of weight doubles the feature map holds, from the
// params alone (before anything is drawn). False on overflow.
bool feature_sizes(const std::string& model, const Params& p, const TaskShape& s, uint64_t* P,
                   uint64_t* weights) {
  if (model == "rfmlp") {
    const RfmlpConfig c = rfmlp_config_from(p, s.d_in);
    const uint64_t D = static_cast<uint64_t>(s.T * s.d_in + (c.augment ? 1 : 0));
    *P = static_cast<uint64_t>(c.width);
    return checked_mul(*P, 2 * D, weights);  // W and its transposed working copy
  }
  const RfaConfig c = rfa_config_from(p, model, s.d_in);
  const uint64_t e = static_cast<uint64_t>(s.d_in + (c.augment ? 1 : 0));
  uint64_t Me = 0;
  if (!checked_mul(static_cast<uint64_t>(c.heads), e, &Me)) return false;
  *P = Me;
  return checked_mul(Me, 2 * e, weights);  // W and [W_1 … W_M]
}

// Samples per call of features(): a multiple of the map's block size, so that the result
// is bit-identical to one call over all samples.
int64_t feature_chunk(const FeatureMap& map) {
  int64_t block = 256;
  if (const auto* r = dynamic_cast<const RfaFeatures*>(&map)) block = r->block_size();
  if (const auto* m = dynamic_cast<const RfmlpFeatures*>(&map)) block = m->block_size();
  return block * std::max<int64_t>(1, 4096 / block);
}

void features_run(const FeaturesOptions& o) {
  ATTN_CHECK(o.out.size() > 4 && o.out.substr(o.out.size() - 4) == ".npz",
             "-o " + o.out + ": the output must be a .npz file name, e.g. -o features.npz");
  threads_configure(o.threads);
  rf_feature_model_check(o.model);
  Params params("model", model_find(o.model).schema());
  for (const auto& item : o.sets) model_set_apply(item, params, nullptr);

  std::string data_meta;
  const Batch data = dataset_read(o.in, &data_meta);
  const TaskShape& s = data.shape;
  ATTN_CHECK(data.n >= 1, o.in + ": the dataset has no samples");
  batch_finite_check(data, o.in, false);

  // Refuse impossible sizes before drawing anything: memory, then the output path.
  uint64_t P = 0, weights = 0, phi = 0;
  ATTN_CHECK(feature_sizes(o.model, params, s, &P, &weights) &&
                 checked_mul(static_cast<uint64_t>(data.n), P, &phi) && phi < (uint64_t{1} << 60),
             "the features of " + std::to_string(data.n) + " samples are too large to address; "
             "lower model.heads / model.width or use fewer samples");
  memory_check(
      8 * (phi + weights),
      "Phi (" + std::to_string(data.n) + " × " + std::to_string(P) + ") of model " + o.model,
      "lower model.heads / model.width, or split DATA into smaller files");
  output_path_check(o.out, 8 * (phi + weights / 2) + 64 * 1024);

  const auto map = rf_feature_map_make(o.model, params, s, o.seed);
  ModelTensor W;
  ATTN_ASSERT(rf_feature_weights(*map, &W), "a feature model without weights");
  const int64_t dim = map->dim();
  std::vector<double> Phi(static_cast<size_t>(data.n * dim));
  {
    Progress progress("features " + o.model, data.n);
    const int64_t chunk = feature_chunk(*map);
    for (int64_t lo = 0; lo < data.n; lo += chunk) {
      const int64_t m = std::min(chunk, data.n - lo);
      map->features(data.x(lo), m, Phi.data() + lo * dim);
      progress.add(m);
    }
    progress.finish();
  }

  const std::vector<int64_t> phi_shape{data.n, dim};
  const std::string meta = "{\"model\": " + json_quote(o.model) + ", \"params\": " +
                           params.to_json() + ", \"seed\": " + std::to_string(o.seed) +
                           ", \"n\": " + std::to_string(data.n) + ", \"T\": " +
                           std::to_string(s.T) + ", \"d\": " + std::to_string(s.d_in) +
                           ", \"weights\": " + json_quote(W.name) + ", \"weights_shape\": " +
                           shape_json(W.shape) + ", \"Phi_shape\": " + shape_json(phi_shape) +
                           ", \"attnlab\": " + json_quote(kVersion) +
                           ", \"data\": " + (data_meta.empty() ? "null" : data_meta) + "}";
  const std::u32string meta32(meta.begin(), meta.end());
  npz_write(o.out, {{W.name, DType::F64, W.shape, W.data.data()},
                    {"Phi", DType::F64, phi_shape, Phi.data()},
                    npy_text("meta", meta32)});
  if (!o.quiet)
    fmt::print("wrote {}: {} features of {} samples  {} {}  Phi {}\n", o.out, o.model, data.n,
               W.name, shape_text(W.shape), shape_text(phi_shape));
}

}  // namespace

void features_command_register(CLI::App& app) {
  auto o = std::make_shared<FeaturesOptions>();
  auto* cmd = app.add_subcommand(
      "features", "Write a random-feature model's frozen weights and features for a dataset");
  cmd->add_option("--model", o->model, "Feature model: rfa, brfa or rfmlp")->required();
  cmd->add_option("--set", o->sets, "Model parameter, model.KEY=VALUE (repeatable)");
  cmd->add_option("--seed", o->seed, "Seed of the frozen weights (as in `attnlab fit --seed`)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--in", o->in, "Dataset .npz (as written by `attnlab data rf_target`)")
      ->required();
  cmd->add_option("-o,--out", o->out, "Output .npz file (written atomically)")->required();
  cmd->add_option("--threads", o->threads,
                  "Compute threads (0: ATTNLAB_THREADS or 1); results do not depend on it")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the summary");
  cmd->footer(
      "Writes W (M, e, e) (rfa, brfa; e = d+1 with model.augment) or w (width, (N+1)d+1)\n"
      "(rfmlp), Phi (n, P) with rfa's head-major columns Phi[:, m*e + k], and `meta` (JSON:\n"
      "model, resolved params, seed, shapes). See docs/models.md.");
  cmd->callback([o] { features_run(*o); });
}

}  // namespace attn
