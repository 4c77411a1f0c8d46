// GPT-2 checkpoints (safetensors with GPT-2's tensor names) in and out of attnlab's `gpt2`
// model (nn/gpt2_net.h; docs/models.md "GPT-2 checkpoints").
//
// Names (an optional "transformer." prefix, as in Hugging Face's GPT2LMHeadModel files):
//   wte.weight (vocab, n_embd), wpe.weight (n_positions, n_embd),
//   h.<l>.ln_1.{weight,bias} (n_embd), h.<l>.attn.c_attn.weight (n_embd, 3·n_embd), .bias
//   (3·n_embd), h.<l>.attn.c_proj.weight (n_embd, n_embd), .bias, h.<l>.ln_2.*,
//   h.<l>.mlp.c_fc.weight (n_embd, 4·n_embd), .bias, h.<l>.mlp.c_proj.weight (4·n_embd, n_embd),
//   .bias, ln_f.*, lm_head.weight (d_out, n_embd) optional (absent or equal to wte: tied).
// Conv1D layout (in, out), attnlab's own. The causal-mask buffers h.<l>.attn.bias and
// h.<l>.attn.masked_bias of older files are ignored; any other extra tensor is reported.
//
// Contract:
// - gpt2_import reads F64/F32/F16/BF16 tensors; a missing tensor, a wrong shape (named with
//   the expected and found shapes) or another dtype is a UserError naming the file and tensor.
//   n_layer, n_embd, vocab and n_positions come from the tensors; n_head, which no tensor shows,
//   from the options or the file's metadata "n_head" (attnlab's export writes it).
// - gpt2_export writes a saved `gpt2` model under these names (no "transformer." prefix; wpe
//   has the model's T rows; lm_head.weight only for a separate head) with metadata
//   n_head, n_layer, n_embd, n_positions, vocab_size and attnlab.{T_out, loss, dtype}, in F32
//   (float32 models) or F64 (float64): export then import predicts bit for bit what the model
//   did. Models whose settings GPT-2 has no counterpart for (positions ≠ learned, causal =
//   false, bits > 0) are refused.
#pragma once

#include <cstdint>
#include <string>

#include "io/safetensors.h"
#include "models/model_io.h"

namespace attn {

struct Gpt2ImportOptions {
  int64_t heads = 0;  // n_head; 0: the file's metadata "n_head"
  int64_t T = 0;      // sequence length: the first T rows of wpe; 0: the metadata's, or all
  int64_t T_out = 0;  // 1 or T: 0: the metadata's attnlab.T_out, or T (logits at every position)
  std::string dtype;  // "float32" | "float64"; "": the metadata's, or float64 iff all F64
};

// Whether the file holds GPT-2 tensors (wte.weight, with or without "transformer.").
bool gpt2_checkpoint_detect(const SafetensorsFile& file);

// The `gpt2` model of the checkpoint at `path` (record: model gpt2, seed 0, shape (T, vocab,
// T_out, d_out)); its predictions are softmax probabilities (loss cross_entropy) unless the
// metadata's attnlab.loss says otherwise. UserError / IoError naming the file.
LoadedModel gpt2_import(const std::string& path, const Gpt2ImportOptions& options);

// Writes a `gpt2` model as a GPT-2 checkpoint; dtype F32 or F64 (Other: the model's own).
void gpt2_export(const std::string& path, const ModelRecord& record, const Model& model,
                 SafetensorsDType dtype = SafetensorsDType::Other);

}  // namespace attn
