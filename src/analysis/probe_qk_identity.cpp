// The qk_identity probe (see probe_qk_identity.h). Shapes: a stored (in, out) weight w of
// (D, out) gives W (out, D) with W[o][i] = w[i][o]; gpt2's fused (D, 3D) weight gives W_q from
// columns [0, D) and W_k from [D, 2D).
#include "analysis/probe_qk_identity.h"

#include <algorithm>

#include "analysis/qk_stats.h"
#include "core/error.h"

namespace attn {
namespace {

// Columns [first, first + out) of the row-major (D, cols) tensor t, transposed to (out, D).
std::vector<double> columns_transposed(const ModelTensor& t, int64_t first, int64_t out) {
  ATTN_ASSERT(t.shape.size() == 2 && first + out <= t.shape[1], "qk_identity: a 2-D weight");
  const int64_t D = t.shape[0], cols = t.shape[1];
  std::vector<double> W(static_cast<size_t>(out * D));
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < D; ++i) W[o * D + i] = t.data[i * cols + first + o];
  return W;
}

// Layer l from separate (in, out) weights named q and k; false when q is absent.
bool separate_layer(const ModelTensors& saved, int64_t l, const std::string& q,
                    const std::string& k, std::vector<QkLayerWeights>& out) {
  const ModelTensor* wq = saved.find(q);
  if (wq == nullptr) return false;
  const ModelTensor* wk = saved.find(k);
  ATTN_ASSERT(wk != nullptr && wk->shape == wq->shape && wq->shape.size() == 2,
              "qk_identity: " + q + " and " + k + " of one shape");
  QkLayerWeights w;
  w.layer = l;
  w.in = wq->shape[0];
  w.out = wq->shape[1];
  w.wq = columns_transposed(*wq, 0, w.out);
  w.wk = columns_transposed(*wk, 0, w.out);
  out.push_back(std::move(w));
  return true;
}

}  // namespace

std::vector<QkLayerWeights> qk_model_layers(const ModelTensors& saved) {
  std::vector<QkLayerWeights> layers;
  if (separate_layer(saved, 0, "q", "k", layers)) return layers;  // attention
  for (int64_t l = 0;; ++l) {
    const std::string p = "layer" + std::to_string(l);
    if (!separate_layer(saved, l, p + ".q", p + ".k", layers)) break;  // transformer
  }
  if (!layers.empty()) return layers;
  for (int64_t l = 0;; ++l) {
    const ModelTensor* c = saved.find("h." + std::to_string(l) + ".attn.c_attn.weight");
    if (c == nullptr) break;  // gpt2
    ATTN_ASSERT(c->shape.size() == 2 && c->shape[1] == 3 * c->shape[0],
                "qk_identity: c_attn is (D, 3D)");
    QkLayerWeights w;
    w.layer = l;
    w.in = w.out = c->shape[0];
    w.wq = columns_transposed(*c, 0, w.out);
    w.wk = columns_transposed(*c, w.out, w.out);
    layers.push_back(std::move(w));
  }
  if (layers.empty())
    throw UserError("qk_identity: model " + saved.model +
                    " keeps no query and key weights (attention, transformer or gpt2)");
  return layers;
}

void probe_qk_identity(const ProbeInput& in, FitLog& log) {
  ModelTensors saved;
  saved.model = in.model_name;
  in.model.save(saved);
  const std::vector<QkLayerWeights> layers = qk_model_layers(saved);
  if (layers.front().in < 2) {
    log.scalar("qk_identity_applies", 0);
    return;
  }
  const int64_t heads = in.model_params.get_int("heads");
  QkAnalyzeOptions options;
  options.heads = heads;
  options.seed = 0;  // the null draw: Rng(0, "qk_stats.null.*", layer), the same in every run
  log.scalar("qk_identity_applies", 1);
  for (const QkLayerWeights& w : layers) {
    ATTN_ASSERT(w.out % heads == 0, "qk_identity: the query rows split into model.heads heads");
    const QkLayerResult r = qk_layer_analyze(w, options);
    log.point("qk_identity_cosine", w.layer, r.stats.identity_cosine);
    if (w.layer == 0) qk_identity_log_scalars("qk_identity", r, log);
  }
}

void qk_identity_log_scalars(const std::string& prefix, const QkLayerResult& r, FitLog& log) {
  log.scalar(prefix + "_cosine", r.stats.identity_cosine);
  log.scalar(prefix + "_cosine_null", r.null_stats.identity_cosine);
  log.scalar(prefix + "_c_star", r.stats.c_star);
  log.scalar(prefix + "_residual", r.stats.residual);
  double head_max = r.head_results.front().stats.identity_cosine;
  for (const QkHeadResult& h : r.head_results)
    head_max = std::max(head_max, h.stats.identity_cosine);
  log.scalar(prefix + "_head_cosine_max", head_max);
}

}  // namespace attn
