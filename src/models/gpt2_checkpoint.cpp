// GPT-2 checkpoints in and out of the `gpt2` model (gpt2_checkpoint.h).
#include "models/gpt2_checkpoint.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "models/neural_models.h"
#include "models/neural_train_config.h"
#include "nn/gpt2_net.h"
#include "ops/loss.h"

namespace attn {
namespace {

constexpr const char* kPrefix = "transformer.";

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + "]";
}

// A positive integer of the metadata, or 0 when the key is absent.
int64_t meta_int(const std::map<std::string, std::string>& md, const std::string& key,
                 const std::string& path) {
  const auto it = md.find(key);
  if (it == md.end()) return 0;
  const std::string& text = it->second;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  ATTN_CHECK(!text.empty() && *end == '\0' && errno == 0 && v >= 1,
             path + ": __metadata__ '" + key + "' = '" + text + "' is not a positive integer");
  return v;
}

std::string meta_text(const std::map<std::string, std::string>& md, const std::string& key) {
  const auto it = md.find(key);
  return it == md.end() ? std::string() : it->second;
}

// The checkpoint's tensors under their GPT-2 names (prefix stripped), checked.
class Gpt2Reader {
 public:
  explicit Gpt2Reader(const std::string& path) : path_(path), file_(path) {
    if (!file_.find("wte.weight") && file_.find(std::string(kPrefix) + "wte.weight"))
      prefix_ = kPrefix;
  }
  const SafetensorsFile& file() const { return file_; }
  const SafetensorsEntry* find(const std::string& name) const { return file_.find(prefix_ + name); }
  // The entry `name`; UserError if it is missing.
  const SafetensorsEntry& entry(const std::string& name) const {
    const SafetensorsEntry* e = find(name);
    ATTN_CHECK(e != nullptr, path_ + ": tensor '" + prefix_ + name +
                                 "' is missing; a GPT-2 checkpoint has wte, wpe, h.<l>.{ln_1, "
                                 "attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj} and ln_f");
    return *e;
  }
  // The values of `name`, which must have shape `want`.
  std::vector<double> read(const std::string& name, const std::vector<int64_t>& want) {
    const SafetensorsEntry& e = entry(name);
    ATTN_CHECK(e.shape == want, path_ + ": tensor '" + prefix_ + name + "' has shape " +
                                    shape_text(e.shape) + ", expected " + shape_text(want));
    ATTN_CHECK(e.dtype != SafetensorsDType::Other,
               path_ + ": tensor '" + prefix_ + name + "' has dtype " + e.dtype_name +
                   ", which attnlab cannot read as numbers; store it as F32, F64, F16 or BF16");
    if (e.dtype != SafetensorsDType::F64) all_f64_ = false;
    used_.insert(e.name);
    return file_.read_f64(e.name);
  }
  // A 2-D tensor's shape; UserError otherwise.
  std::vector<int64_t> matrix_shape(const std::string& name) const {
    const SafetensorsEntry& e = entry(name);
    ATTN_CHECK(e.shape.size() == 2 && e.shape[0] >= 1 && e.shape[1] >= 1,
               path_ + ": tensor '" + prefix_ + name + "' has shape " + shape_text(e.shape) +
                   ", expected a matrix (2 dimensions)");
    return e.shape;
  }
  bool all_f64() const { return all_f64_; }
  // Tensors neither read nor a known buffer.
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const SafetensorsEntry& e : file_.entries()) {
      const bool buffer =
          e.name.size() > 10 && (e.name.rfind(".attn.bias") == e.name.size() - 10 ||
                                 e.name.find(".attn.masked_bias") != std::string::npos);
      if (!used_.count(e.name) && !buffer) out.push_back(e.name);
    }
    return out;
  }

 private:
  std::string path_;
  SafetensorsFile file_;
  std::string prefix_;
  bool all_f64_ = true;
  std::set<std::string> used_;
};

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

constexpr const char* kLayerTensors[] = {
    "ln_1.weight",        "ln_1.bias",        "attn.c_attn.weight", "attn.c_attn.bias",
    "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight",        "ln_2.bias",
    "mlp.c_fc.weight",    "mlp.c_fc.bias",    "mlp.c_proj.weight",  "mlp.c_proj.bias"};

std::vector<int64_t> layer_tensor_shape(const std::string& t, int64_t m) {
  if (t == "attn.c_attn.weight") return {m, 3 * m};
  if (t == "attn.c_attn.bias") return {3 * m};
  if (t == "attn.c_proj.weight") return {m, m};
  if (t == "mlp.c_fc.weight") return {m, 4 * m};
  if (t == "mlp.c_fc.bias") return {4 * m};
  if (t == "mlp.c_proj.weight") return {4 * m, m};
  return {m};
}

}  // namespace

bool gpt2_checkpoint_detect(const SafetensorsFile& file) {
  return file.find("wte.weight") || file.find(std::string(kPrefix) + "wte.weight");
}

LoadedModel gpt2_import(const std::string& path, const Gpt2ImportOptions& o) {
  Gpt2Reader in(path);
  const auto& md = in.file().metadata();
  ATTN_CHECK(gpt2_checkpoint_detect(in.file()),
             path +
                 ": no tensor 'wte.weight' (nor 'transformer.wte.weight'); this is not a "
                 "GPT-2 checkpoint");
  const std::vector<int64_t> wte_shape = in.matrix_shape("wte.weight");
  const int64_t vocab = wte_shape[0], m = wte_shape[1];
  const int64_t n_positions = in.matrix_shape("wpe.weight")[0];
  int64_t layers = 0;
  while (in.find("h." + std::to_string(layers) + ".ln_1.weight")) ++layers;
  ATTN_CHECK(layers >= 1, path +
                              ": tensor 'h.0.ln_1.weight' is missing; a GPT-2 checkpoint "
                              "has at least one block h.0");
  const int64_t heads = o.heads > 0 ? o.heads : meta_int(md, "n_head", path);
  ATTN_CHECK(heads >= 1, path +
                             ": the number of heads is not in the file's __metadata__ "
                             "(n_head), and no tensor shows it; give it when importing "
                             "(GPT-2 small: 12)");
  ATTN_CHECK(m % heads == 0, path + ": n_embd = " + std::to_string(m) +
                                 " is not a multiple of n_head = " + std::to_string(heads));
  int64_t T = o.T > 0 ? o.T : meta_int(md, "attnlab.T", path);
  if (T == 0) T = n_positions;
  ATTN_CHECK(T <= n_positions, path + ": a sequence length of " + std::to_string(T) +
                                   " needs that many position codes, but wpe.weight has " +
                                   std::to_string(n_positions) + " rows");
  int64_t T_out = o.T_out > 0 ? o.T_out : meta_int(md, "attnlab.T_out", path);
  if (T_out == 0) T_out = T;

  ModelTensors t;
  t.model = "gpt2";
  t.add("wte.weight", {vocab, m}, in.read("wte.weight", {vocab, m}));
  std::vector<double> wpe = in.read("wpe.weight", {n_positions, m});
  wpe.resize(static_cast<size_t>(T * m));
  t.add("pos", {T, m}, std::move(wpe));
  for (int64_t l = 0; l < layers; ++l)
    for (const char* name : kLayerTensors) {
      const std::string full = "h." + std::to_string(l) + "." + name;
      const std::vector<int64_t> shape = layer_tensor_shape(name, m);
      t.add(full, shape, in.read(full, shape));
    }
  for (const char* name : {"ln_f.weight", "ln_f.bias"}) t.add(name, {m}, in.read(name, {m}));
  int64_t d_out = vocab;
  bool tied = true;
  if (in.find("lm_head.weight")) {
    d_out = in.matrix_shape("lm_head.weight")[0];
    std::vector<double> head = in.read("lm_head.weight", {d_out, m});
    tied = d_out == vocab && same_values(head, t.tensors[0].data);
    if (!tied) t.add("lm_head.weight", {d_out, m}, std::move(head));
  }
  const std::vector<std::string> unused = in.unused();
  if (!unused.empty())
    log_warn(
        "attnlab: %s: %zu tensors are not part of GPT-2's layout and were ignored (the "
        "first: %s)\n",
        path.c_str(), unused.size(), unused.front().c_str());
  const std::string loss = meta_text(md, "attnlab.loss");
  t.add(
      std::string("meta.loss.") + loss_name(loss.empty() ? Loss::cross_entropy : loss_parse(loss)),
      {}, {1.0});

  const TaskShape shape{
      .T = T, .d_in = vocab, .T_out = T_out, .d_out = d_out, .raw = {}, .constants = {}};
  t.shape = shape;
  LoadedModel loaded;
  try {
    ModelRecord r = model_record_make("gpt2", 0, shape);
    r.model_params.set("layers", ParamValue(layers));
    r.model_params.set("m", ParamValue(m));
    r.model_params.set("heads", ParamValue(heads));
    r.model_params.set_text("head", tied ? "tied" : "separate");
    std::string dtype = o.dtype.empty() ? meta_text(md, "attnlab.dtype") : o.dtype;
    if (dtype.empty()) dtype = in.all_f64() ? "float64" : "float32";
    r.train_params.set_text("dtype", dtype);
    auto model = model_make(r);
    model->load(t);
    loaded.record = std::move(r);
    loaded.model = std::move(model);
  } catch (const UserError& e) {
    throw UserError(path + ": " + e.what());
  }
  loaded.metadata = md;
  return loaded;
}

void gpt2_export(const std::string& path, const ModelRecord& r, const Model& model,
                 SafetensorsDType dtype) {
  ATTN_CHECK(r.model == "gpt2", "model " + r.model +
                                    " has no GPT-2 layout; only a gpt2 model "
                                    "exports as a GPT-2 checkpoint");
  const Gpt2NetConfig c = neural_gpt2_config(r.model_params, r.shape);
  ATTN_CHECK(c.positions == Positions::learned,
             "model.positions = \"" + std::string(choice_name(c.positions, kPositions)) +
                 "\" has no GPT-2 tensor (GPT-2 learns wpe); only positions = \"learned\" exports");
  ATTN_CHECK(c.causal,
             "model.causal = false has no GPT-2 counterpart (GPT-2 is "
             "causal); only causal models export");
  ATTN_CHECK(c.precision.bits == 0, "model.bits = " + std::to_string(c.precision.bits) +
                                        " (finite precision) has no GPT-2 counterpart; only "
                                        "bits = 0 exports");
  const bool f64 = net_dtype_from_params(r.train_params) == NetDtype::float64;
  if (dtype == SafetensorsDType::Other) dtype = f64 ? SafetensorsDType::F64 : SafetensorsDType::F32;
  ATTN_CHECK(
      dtype == SafetensorsDType::F64 || dtype == SafetensorsDType::F32,
      "a GPT-2 export is written in F32 or F64, not " + std::string(safetensors_dtype_name(dtype)));
  const ModelTensors t = model_tensors(r, model);
  std::vector<SafetensorsView> views;
  std::string loss;
  for (const ModelTensor& x : t.tensors) {
    if (x.name.rfind("meta.loss.", 0) == 0) {
      loss = x.name.substr(10);
      continue;
    }
    ATTN_ASSERT(x.name.rfind("meta.", 0) != 0, "gpt2_export: unexpected tensor " + x.name);
    views.push_back({x.name == "pos" ? "wpe.weight" : x.name, dtype, x.shape, x.data.data()});
  }
  std::map<std::string, std::string> md;
  md["format"] = "pt";
  md["n_head"] = std::to_string(c.heads);
  md["n_layer"] = std::to_string(c.layers);
  md["n_embd"] = std::to_string(c.m);
  md["n_positions"] = std::to_string(r.shape.T);
  md["vocab_size"] = std::to_string(r.shape.d_in);
  md["attnlab.T"] = std::to_string(r.shape.T);
  md["attnlab.T_out"] = std::to_string(r.shape.T_out);
  md["attnlab.loss"] = loss;
  md["attnlab.dtype"] = f64 ? "float64" : "float32";
  safetensors_write(path, views, md);
}

}  // namespace attn
