// Construction: explicit attention weights from the paper's proofs (spec sanford2023 §3),
// evaluated without training. One subclass per recipe (qsa_constructions.cpp,
// match_constructions.cpp, match_variant_constructions.cpp); models/construction_model.cpp
// adapts them to the Model interface (`model = "construction"`, `construction = NAME`).
//
// A construction maps one sequence X (T, d_in) of its task to the outputs (T_out, d_out):
//   qSA:    y_i = attention average of z_j, error ≤ ε by the temperature rule (§3.1–3.2)
//   Match:  y_i ∈ {0, 1}, the thresholded read-out ψ of §3.3–3.5
// Queries, keys and values go through the precision model of ops/quantize.h (bits; 0 =
// exact: double, long double for qsa_neighbourly); bits_scores also rounds the scores.
// Token maps φ that are arbitrary functions in the paper (e.g. w_{y_i} from y_i) are
// computed directly; the attention itself is ops/attention.h's (attend.h).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/params.h"
#include "model_api/model.h"
#include "tasks/batch.h"

namespace attn {

// Per-call settings: the precision model.
struct Precision {
  int64_t bits = 0;
  bool bits_scores = false;
};

// What one sequence needs besides X: the dataset's modulus M (Match tasks; 0 otherwise) and
// window w (match3_local; 0 when the data does not say).
struct SequenceContext {
  int64_t M = 0;
  int64_t window = 0;
};

// Diagnostics accumulated over evaluated rows (a "row" is one query token of one head).
struct ConstructionStats {
  double margin_min = std::numeric_limits<double>::infinity();  // γ, Δ or g of the row
  int64_t rows = 0, rows_without_margin = 0;                    // margin ≤ 0: cannot work
  double beta_max = 0, beta_sum = 0;
  double tie_error_max = 0;  // largest |in-set score − intended value| (qSA; 0 if n/a)
  void row(double margin, double beta) {
    margin_min = std::min(margin_min, margin);
    ++rows;
    rows_without_margin += margin <= 0;
    beta_max = std::max(beta_max, beta);
    beta_sum += beta;
  }
  void merge(const ConstructionStats& o);
};

// One layer's attention probabilities of one sequence: (H, N, N) (third order: (H, N, N·N)).
using LayerProbs = std::vector<double>;

class Construction {
 public:
  virtual ~Construction() = default;
  // y (T_out × d_out) for one sequence x (T × d_in). probs, if non-null, receives one entry
  // per layer; stats, if non-null, accumulates diagnostics.
  virtual void forward(const double* x, const SequenceContext& ctx, const Precision& p, double* y,
                       std::vector<LayerProbs>* probs, ConstructionStats* stats) const = 0;
  // The size measures: m (embedding dimension), heads, layers (stored as metrics).
  virtual std::vector<std::pair<std::string, double>> sizes() const = 0;
  // The data-independent weights (e.g. the code book), for save(); load() re-derives them
  // from the parameters and checks they are identical.
  virtual void weights(ModelTensors& out) const = 0;
  // qsa_random_codes: the smallest code dimension m' on the grid 8, 16, …, 4096 whose code
  // book (nested: the first m' entries of each code, rescaled) gives every row of the
  // sequences x[0..n) a positive margin; 0 if none does. Default: not applicable (−1).
  virtual int64_t m_prime_needed(const double* /*x*/, int64_t /*n*/) const { return -1; }
};

struct ConstructionSetup {
  const Params& model;    // [model] section
  const TaskShape& shape;
  uint64_t seed;
};

// The construction named by model.construction; UserError if it cannot fit this task's shapes.
std::unique_ptr<Construction> construction_make(const ConstructionSetup& setup);
// The names of model.construction, in the order the docs list them.
std::vector<std::string> construction_names();

// Factories, one per file.
std::unique_ptr<Construction> qsa_random_codes_make(const ConstructionSetup& s);
std::unique_ptr<Construction> qsa_neighbourly_make(const ConstructionSetup& s);
std::unique_ptr<Construction> match2_trig_make(const ConstructionSetup& s);
std::unique_ptr<Construction> match3_third_order_make(const ConstructionSetup& s);
std::unique_ptr<Construction> smallm_match3_make(const ConstructionSetup& s);
std::unique_ptr<Construction> local_match3_make(const ConstructionSetup& s);
std::unique_ptr<Construction> adjacent_match3_make(const ConstructionSetup& s);
std::unique_ptr<Construction> pointer_match3_make(const ConstructionSetup& s);

}  // namespace attn
