// The qk_code_identity probe (see probe_qk_code_identity.h). Shapes: phi.w0 (d_in, m) row-major,
// layer 0's W_q, W_k (out, m) from qk_model_layers; the result's W_q, W_k (out, count).
#include "analysis/probe_qk_code_identity.h"

#include "analysis/probe_qk_identity.h"
#include "analysis/qk_stats.h"
#include "core/error.h"

namespace attn {
namespace {

// (out, count): W[o][i] = Σ_a phi[first + i][a] · w[o][a], i.e. (phi[rows, :] · wᵀ)ᵀ.
std::vector<double> through_phi(const ModelTensor& phi, int64_t first, int64_t count,
                                const std::vector<double>& w, int64_t out) {
  const int64_t m = phi.shape[1];
  std::vector<double> W(static_cast<size_t>(out * count), 0.0);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < count; ++i) {
      double sum = 0;
      for (int64_t a = 0; a < m; ++a) sum += phi.data[(first + i) * m + a] * w[o * m + a];
      W[o * count + i] = sum;
    }
  return W;
}

}  // namespace

QkLayerWeights qk_code_block_weights(const ModelTensors& saved, int64_t first, int64_t count) {
  const ModelTensor* phi = saved.find("phi.w0");
  if (phi == nullptr || saved.find("phi.w1") != nullptr || phi->shape.size() != 2)
    throw UserError("qk_code_identity: model " + saved.model +
                    " has no linear token map phi.w0 (needs model.phi = \"linear\")");
  const QkLayerWeights w = qk_model_layers(saved).front();
  ATTN_ASSERT(w.in == phi->shape[1], "qk_code_identity: phi's output is the scores' input");
  ATTN_ASSERT(first >= 0 && count >= 1 && first + count <= phi->shape[0],
              "qk_code_identity: the code coordinates lie inside the token");
  QkLayerWeights block;
  block.layer = 0;
  block.in = count;
  block.out = w.out;
  block.wq = through_phi(*phi, first, count, w.wq, w.out);
  block.wk = through_phi(*phi, first, count, w.wk, w.out);
  return block;
}

void probe_qk_code_identity(const ProbeInput& in, FitLog& log) {
  const int64_t d = in.test_task_params.get_int("d");
  const int64_t code_dim = in.test_task_params.get_int("code_dim");
  ModelTensors saved;
  saved.model = in.model_name;
  in.model.save(saved);
  // A linear φ is one layer: phi.w0 and no phi.w1 (read from the weights, not the option).
  const bool linear_phi = saved.find("phi.w0") != nullptr && saved.find("phi.w1") == nullptr;
  if (!linear_phi || code_dim < 2) {
    log.scalar("qk_code_identity_applies", 0);
    return;
  }
  const QkLayerWeights w = qk_code_block_weights(saved, d, code_dim);
  QkAnalyzeOptions options;
  options.heads = in.model_params.get_int("heads");
  options.seed = 0;  // the null draw, as qk_identity's: the same in every run
  ATTN_ASSERT(w.out % options.heads == 0, "qk_code_identity: the rows split into the heads");
  log.scalar("qk_code_identity_applies", 1);
  qk_identity_log_scalars("qk_code_identity", qk_layer_analyze(w, options), log);
}

}  // namespace attn
