// `attnlab import-gpt2 CKPT.safetensors -o MODEL.safetensors [--heads H] [--T N] [--T-out K]
// [--dtype D]`: a GPT-2 checkpoint (GPT-2's tensor names) as a saved `gpt2` model that
// `attnlab predict --model` and Python's attnlab.load read.
// `attnlab export-gpt2 MODEL.safetensors -o CKPT.safetensors [--dtype F32|F64]`: a saved `gpt2`
// model under GPT-2's tensor names. Both: models/gpt2_checkpoint.h, docs/models.md.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "apps/cli_fit_text.h"
#include "apps/commands.h"
#include "core/error.h"
#include "models/gpt2_checkpoint.h"

namespace attn {
namespace {

struct Gpt2Options {
  std::string in, out, dtype;
  Gpt2ImportOptions import;
};

void out_check(const std::string& out) {
  ATTN_CHECK(ends_with(out, ".safetensors"),
             "-o " + out + ": the output must be a .safetensors file, e.g. -o model.safetensors");
}

void import_run(const Gpt2Options& o) {
  out_check(o.out);
  const LoadedModel loaded = gpt2_import(o.in, o.import);
  model_save(o.out, loaded.record, *loaded.model, {{"imported_from", o.in}});
  const TaskShape& s = loaded.record.shape;
  fmt::print(
      "imported {}: gpt2 with {} layers, m = {}, {} heads, T = {}, vocab {}, d_out {} ({})\n", o.in,
      loaded.record.model_params.get_int("layers"), loaded.record.model_params.get_int("m"),
      loaded.record.model_params.get_int("heads"), s.T, s.d_in, s.d_out,
      loaded.record.model_params.get_string("head"));
  fmt::print("wrote {}\n", o.out);
}

void export_run(const Gpt2Options& o) {
  out_check(o.out);
  const LoadedModel loaded = model_load(o.in);
  SafetensorsDType dtype = SafetensorsDType::Other;
  if (o.dtype == "F32") dtype = SafetensorsDType::F32;
  if (o.dtype == "F64") dtype = SafetensorsDType::F64;
  gpt2_export(o.out, loaded.record, *loaded.model, dtype);
  fmt::print("wrote {} (GPT-2 tensor names)\n", o.out);
}

}  // namespace

void gpt2_command_register(CLI::App& app) {
  auto o = std::make_shared<Gpt2Options>();
  auto* imp = app.add_subcommand("import-gpt2", "Save a GPT-2 checkpoint as an attnlab gpt2 model");
  imp->add_option("checkpoint", o->in, "safetensors file with GPT-2's tensor names")->required();
  imp->add_option("-o,--out", o->out, "Output model .safetensors (for predict --model)")
      ->required();
  imp->add_option("--heads", o->import.heads, "n_head (default: the file's metadata n_head)")
      ->check(CLI::PositiveNumber);
  imp->add_option("--T", o->import.T, "sequence length: the first T rows of wpe (default: all)")
      ->check(CLI::PositiveNumber);
  imp->add_option("--T-out", o->import.T_out, "outputs per sequence: T (default) or 1 (token 0)")
      ->check(CLI::PositiveNumber);
  imp->add_option("--dtype", o->import.dtype,
                  "float32 or float64 (default: float64 when every tensor is F64)")
      ->check(CLI::IsMember({"float32", "float64"}));
  imp->footer("Tensor names, shapes and the tied head: docs/models.md, \"GPT-2 checkpoints\".");
  imp->callback([o] { import_run(*o); });

  auto* exp = app.add_subcommand("export-gpt2", "Write a saved gpt2 model under GPT-2's names");
  exp->add_option("model", o->in, "Model .safetensors saved by `attnlab fit --save`")->required();
  exp->add_option("-o,--out", o->out, "Output checkpoint .safetensors")->required();
  exp->add_option("--dtype", o->dtype, "F32 or F64 (default: the model's own float32/float64)")
      ->check(CLI::IsMember({"F32", "F64"}));
  exp->callback([o] { export_run(*o); });
}

}  // namespace attn
