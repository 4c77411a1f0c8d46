// The named-array contract (named_arrays.h).
#include "tasks/named_arrays.h"

#include <string>

#include "core/error.h"
#include "core/shape_text.h"

// A row that leaves out a field (slice_label) does not compile.
#pragma GCC diagnostic error "-Wmissing-field-initializers"

namespace attn {

const std::vector<NamedArrayInfo>& named_array_table() {
  static const std::vector<NamedArrayInfo> table = {
      {NamedArray::success_threshold, "success_threshold", false, false, 0, false,
       "the ε of a 1/(2q)-approximation (qsa); metric success_rate", false},
      {NamedArray::disjoint, "disjoint", true, true, 0, false,
       "1 iff a ∧ b = 0 (qsa, instances = disj); metric disj_accuracy", false},
      {NamedArray::query_position, "query_position", false, true, 0, false,
       "the output position of the DISJ query, 2q; metric disj_accuracy", false},
      {NamedArray::disj_threshold, "disj_threshold", false, false, 0, false,
       "−1 + 1/q, the decision threshold of ⟨f_2q, e₁⟩; metric disj_accuracy", false},
      {NamedArray::sets, "sets", true, true, 2, true,
       "y_i, the q positions position i averages (qsa); attention diagnostics", false},
      {NamedArray::modulus, "modulus", false, true, 0, false,
       "the modulus M in use (Match tasks); constructions", false},
      {NamedArray::window, "window", false, true, 0, false,
       "the witness window w (match3_local); constructions refuse another w", false},
      // hop: where the metrics count, the slice label k, the pointer chain.
      {NamedArray::metric_mask, "metric_mask", true, true, 1, false,
       "1 where an output position counts for the metrics, 0 where not (categorical targets; "
       "the loss still sees it); one value per output position (hop)",
       false},
      {NamedArray::k, "k", true, true, 0, false,
       "the k of the sequence (hop); metrics per value: series <metric>_by_k", true},
      // The attention pattern a j-hop layer can be checked against.
      {NamedArray::hop_chain, "hop_chain", true, true, 2, true,
       "the input position of σ_{find^j(t−1)} for output position t and j = 0..k_max, −1 where "
       "undefined (hop); attention diagnostics",
       false},
  };
  return table;
}

const NamedArrayInfo& named_array_info(NamedArray a) {
  const auto& table = named_array_table();
  const size_t k = static_cast<size_t>(a);
  ATTN_ASSERT(k < table.size() && table[k].id == a, "named_array_table is out of enum order");
  return table[k];
}

namespace {

// Empty when `spec` (found among the raw arrays when per_sample) keeps the contract, else why not.
std::string contract_breach(const NamedArrayInfo& info, const RawArraySpec& spec, bool per_sample,
                            int64_t T) {
  const std::string want =
      std::string(info.per_sample ? "a per-sample array" : "a dataset constant") + " of " +
      (info.integer ? "int64" : "float64") + " with " + std::to_string(info.rank) +
      " dimension(s)" + (info.per_sample ? " per sample" : "") +
      (info.rows_are_T ? ", the first equal to T = " + std::to_string(T) : "");
  const bool ok = per_sample == info.per_sample && spec.integer == info.integer &&
                  static_cast<int>(spec.sample_shape.size()) == info.rank &&
                  (!info.rows_are_T || spec.sample_shape[0] == T);
  if (ok) return "";
  return std::string("array '") + info.name + "' must be " + want + " (" + info.meaning +
         "); this one is " + (per_sample ? "per sample" : "a constant") + ", " +
         (spec.integer ? "int64" : "float64") + ", shape " + shape_text(spec.sample_shape);
}

}  // namespace

RawArraySpec named_array_spec(NamedArray a, std::vector<int64_t> shape, int64_t T) {
  const NamedArrayInfo& info = named_array_info(a);
  RawArraySpec spec{info.name, std::move(shape), info.integer};
  const std::string breach = contract_breach(info, spec, info.per_sample, T);
  ATTN_ASSERT(breach.empty(), breach);
  return spec;
}

const RawArray* named_array_find(const Batch& batch, NamedArray a) {
  const NamedArrayInfo& info = named_array_info(a);
  for (int place = 0; place < 2; ++place) {
    const bool per_sample = place == 0;
    for (const RawArray& r : per_sample ? batch.raw : batch.constants) {
      if (r.spec.name != info.name) continue;
      const std::string breach = contract_breach(info, r.spec, per_sample, batch.shape.T);
      ATTN_CHECK(breach.empty(), breach);
      const size_t want = static_cast<size_t>((per_sample ? batch.n : 1) * r.spec.sample_size());
      ATTN_CHECK((info.integer ? r.i64.size() : r.f64.size()) == want,
                 std::string("array '") + info.name + "' holds the wrong number of values");
      return &r;
    }
  }
  return nullptr;
}

void named_arrays_check(const TaskShape& shape) {
  for (const NamedArrayInfo& info : named_array_table())
    for (int place = 0; place < 2; ++place) {
      const bool per_sample = place == 0;
      for (const RawArraySpec& spec : per_sample ? shape.raw : shape.constants)
        if (spec.name == info.name) {
          const std::string breach = contract_breach(info, spec, per_sample, shape.T);
          ATTN_CHECK(breach.empty(), breach);
        }
    }
}

}  // namespace attn
