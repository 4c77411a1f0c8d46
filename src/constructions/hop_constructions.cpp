// The hop task's constructions (hop_constructions.h) over hop_circuit.h: reading a sequence back
// from the task's one-hot X (N, A + k_max + 1) and writing the classes as one-hot Y (N, A + 2).
#include "constructions/hop_constructions.h"

#include <algorithm>
#include <string>

#include "constructions/hop_circuit.h"
#include "core/error.h"

namespace attn {
namespace {

class HopConstruction final : public Construction {
 public:
  HopConstruction(const ConstructionSetup& s, bool induction)
      : N_(s.shape.T), A_(s.shape.d_out - 2), k_max_(s.shape.d_in - A_ - 1) {
    const std::string name = induction ? "induction_head" : "hop_doubling";
    ATTN_CHECK(s.shape.target == TargetKind::categorical && s.shape.T_out == N_ && A_ >= 2 &&
                   k_max_ >= 0 && N_ >= 2,
               "construction " + name +
                   " needs the hop task (X: N × (A + k_max + 1) one-hot, "
                   "Y: N × (A + 2) categorical); this task has T = " +
                   std::to_string(s.shape.T) + ", d_in = " + std::to_string(s.shape.d_in) +
                   ", d_out = " + std::to_string(s.shape.d_out));
    const int64_t layers = s.model.get_int("layers");
    options_.use_k = !induction;
    options_.beta_fixed = s.model.get_real("beta");
    options_.beta_factor = s.model.get_real("beta_factor");
    while ((int64_t{1} << options_.k_bits) <= k_max_) ++options_.k_bits;
    if (induction) {
      ATTN_CHECK(layers == 0 || layers == 2,
                 "model.layers = " + std::to_string(layers) +
                     ": induction_head has two layers; leave model.layers at 0 (or 2), or use "
                     "hop_doubling for another depth");
      options_.layers = 2;
    } else {
      options_.layers = layers > 0 ? layers : hop_circuit_layers_for(k_max_);
    }
  }

  void forward(const double* x, const SequenceContext&, const Precision& p, double* y,
               std::vector<LayerProbs>* probs, ConstructionStats* stats) const override {
    const int64_t d_in = A_ + k_max_ + 1, d_out = A_ + 2;
    HopSequence s{N_, A_, 0, std::vector<int64_t>(static_cast<size_t>(N_), -1)};
    s.k = std::max_element(x + A_, x + d_in) - (x + A_);
    ATTN_CHECK(x[A_ + s.k] > 0.5,
               "construction: position 0 holds no k token (columns A … A + "
               "k_max are all 0); the input is not the hop task's encoding");
    for (int64_t t = 1; t < N_; ++t) {
      const double* xt = x + t * d_in;
      s.sym[t] = std::max_element(xt, xt + A_) - xt;
      ATTN_CHECK(xt[s.sym[t]] > 0.5, "construction: position " + std::to_string(t) +
                                         " holds no symbol; the input is not the hop task's "
                                         "encoding");
    }
    std::vector<int64_t> cls(static_cast<size_t>(N_));
    hop_circuit_forward(s, options_, p, cls.data(), probs, stats);
    std::fill(y, y + N_ * d_out, 0.0);
    for (int64_t t = 0; t < N_; ++t) y[t * d_out + cls[t]] = 1.0;
  }

  // m: the residual stream's width: the input (A + k_max + 1), position codes (u/N, (u/N)²),
  // the copied previous symbol (A), k's digits, the read (v, s_v) of the match head (A + 2) and
  // the slot (P, R: A + 2); with L >= 3 the count code (2), the per-symbol last-occurrence
  // pointers (A) and those read at the previous occurrence (A). heads: the most in one layer
  // (layer 1: previous token, k, count and A last-occurrence heads).
  std::vector<std::pair<std::string, double>> sizes() const override {
    const bool deep = options_.layers >= 3;
    const int64_t m = (A_ + k_max_ + 1) + 2 + A_ + (options_.use_k ? options_.k_bits : 0) +
                      2 * (A_ + 2) + (deep ? 2 + 2 * A_ : 0);
    const int64_t heads = deep ? 3 + A_ : (options_.use_k ? 2 : 1);
    return {{"m", static_cast<double>(m)},
            {"heads", static_cast<double>(heads)},
            {"layers", static_cast<double>(options_.layers)}};
  }

  // The circuit's shape (layers, heads, k digits): everything else follows from N and the
  // temperature keys.
  void weights(ModelTensors& out) const override {
    out.add("circuit", {3},
            {static_cast<double>(options_.layers), options_.use_k ? 2.0 : 1.0,
             static_cast<double>(options_.k_bits)});
  }

 private:
  int64_t N_, A_, k_max_;
  HopCircuitOptions options_;
};

}  // namespace

std::unique_ptr<Construction> induction_head_make(const ConstructionSetup& s) {
  return std::make_unique<HopConstruction>(s, true);
}
std::unique_ptr<Construction> hop_doubling_make(const ConstructionSetup& s) {
  return std::make_unique<HopConstruction>(s, false);
}

}  // namespace attn
