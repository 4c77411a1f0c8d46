// Where a checkpoint keeps its query and key weights: tensor-name patterns, layout
// detection, head count resolution, and loading one layer's W_q, W_k as (out, in).
//
// Layouts:
// - bert   separate Linear weights stored (out, in), q = W_q h + b_q:
//          encoder.layer.{l}.attention.self.query.weight / ...key.weight
// - gpt2   one fused Conv1D weight stored (in, out) = (D, 3D), [q k v] = h W + b:
//          h.{l}.attn.c_attn.weight; q and k are the column blocks [0, D) and [D, 2D)
// - custom separate (out, in) weights named by the query and key patterns (options)
// A pattern holds "{l}" once (the layer number) and matches a whole name or a suffix of
// it that starts after a '.', so "encoder.layer.{l}..." also finds "bert.encoder.layer.3...".
// Tensors matching under two different prefixes are refused as ambiguous.
//
// Convention: qk_layer_load always returns W_q, W_k stored (out, in) = (H·hs, D) row-major,
// so that head h is rows [h·hs, (h+1)·hs) and A = W_qᵀW_k is D × D in the residual-stream
// (input) space for both layouts: for gpt2, W_q = (W[:, 0:D])ᵀ.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace attn {

enum class QkLayoutKind { Separate, FusedConv1D };

// The tensors of one layer. For FusedConv1D, query_name == key_name (the c_attn weight).
struct QkLayerSource {
  int64_t layer = 0;
  std::string query_name, key_name;
};

struct QkLayout {
  std::string name;  // "bert", "gpt2" or "custom"
  QkLayoutKind kind = QkLayoutKind::Separate;
  std::string query_pattern, key_pattern;  // key_pattern empty for FusedConv1D
  std::string prefix;                       // what came before the pattern, e.g. "bert."
  std::vector<QkLayerSource> layers;        // sorted by layer
};

struct QkLayoutOptions {
  std::string layout = "auto";  // auto | bert | gpt2 | custom
  std::string query_pattern;    // overrides the layout's (gpt2: the fused weight's) pattern
  std::string key_pattern;
};

// Matches `name` against `pattern` (see above). On a match sets *layer and *prefix.
bool qk_pattern_match(const std::string& pattern, const std::string& name, int64_t* layer,
                      std::string* prefix);

// Finds the layers among a file's tensor names. UserError (starting with `label`, the
// file) when nothing matches (naming a few tensors and suggesting the layout and pattern
// options, as front_option spells them), when auto finds two layouts, when a layer has a
// query but no key (or the reverse), on ambiguous prefixes, or on a bad pattern.
QkLayout qk_layout_detect(const std::vector<std::string>& names, const QkLayoutOptions& options,
                          const std::string& label);

// Layer sizes read from the header: out = H·hs rows of W_q, in = D. UserError if the
// shapes do not fit the layout (not 2-D, q/k shapes differ, c_attn not (D, 3D)).
struct QkLayerShape {
  int64_t out = 0, in = 0;
};
QkLayerShape qk_layer_shape(const SafetensorsFile& file, const QkLayout& layout,
                            const QkLayerSource& src);

// Head count and size: from the options (heads > 0 or head_size > 0), else from the
// file's __metadata__ (num_attention_heads, n_head or num_heads), else a UserError that
// says the weights alone cannot tell (D = 768 is 12 × 64 or 8 × 96 ...).
struct QkHeads {
  int64_t heads = 0, head_size = 0;
  // What gave them: the front end's spelling of the option (front_option(FrontOption::kHeads):
  // --heads on the command line, heads= in Python), or "__metadata__.n_head", ...
  std::string source;
};
QkHeads qk_heads_resolve(int64_t out, int64_t heads, int64_t head_size,
                         const std::map<std::string, std::string>& metadata);

// One layer's weights, (out, in) row-major as doubles (see the convention above).
struct QkLayerWeights {
  int64_t layer = 0;
  int64_t out = 0, in = 0;
  std::vector<double> wq, wk;
};
QkLayerWeights qk_layer_load(const SafetensorsFile& file, const QkLayout& layout,
                             const QkLayerSource& src);

// "0,2,5-7" -> {0, 2, 5, 6, 7} (sorted, distinct). UserError naming `option` otherwise.
std::vector<int64_t> qk_list_parse(const std::string& text, const std::string& option);

}  // namespace attn
