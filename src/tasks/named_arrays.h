// Named arrays: the raw per-sample arrays and dataset constants that a task hands to code
// outside itself (metrics, model diagnostics, constructions), declared once here with the
// dtype and shape each must have. A task builds its RawArraySpec with named_array_spec (which
// checks the shape against this contract); a reader looks it up with named_array_find (null
// when the batch has no such array, UserError when it has one of the wrong kind or shape, e.g.
// from a user's .npz). No reader guesses an array by a string of its own.
//
//   name               place      dtype    shape (of one sample / of the constant)  producer
//   success_threshold  constant   float64  ()      ε of qsa's 1/(2q)-approximation    qsa
//   disjoint           per sample int64    ()      1 iff a ∧ b = 0                    qsa disj
//   query_position     constant   int64    ()      output position of the query (2q)  qsa disj
//   disj_threshold     constant   float64  ()      −1 + 1/q                           qsa disj
//   sets               per sample int64    (T, q)  y_i, the q positions i averages    qsa,
//                                                  (in pointer order)  sparse_retrieval
//   modulus            constant   int64    ()      the M in use                       match*
//   window             constant   int64    ()      the witness window w               match3_local
//   metric_mask        per sample int64    (T,)    1 where the position counts for    hop
//                                                  the metrics, 0 where not (categorical
//                                                  targets; the loss still sees it)
//   k                  per sample int64    ()      the sequence's k; a slice label     hop
//   hop_chain          per sample int64    (T, k_max+1)  input position of            hop
//                                                  σ_{find^j(t−1)}, −1 if undefined
//
// A slice label (NamedArrayInfo::slice_label) is a per-sample int64 scalar by which the
// metrics are also reported per value: train/metrics.h metrics_compute_slices gives the series
// <metric>_by_<name> and <metric>_se_by_<name> (step = the label's value).
#pragma once

#include <cstdint>
#include <vector>

#include "tasks/batch.h"

namespace attn {

enum class NamedArray {
  success_threshold,
  disjoint,
  query_position,
  disj_threshold,
  sets,
  modulus,
  window,
  metric_mask,
  k,
  hop_chain,
};

struct NamedArrayInfo {
  NamedArray id;
  const char* name;
  bool per_sample;  // a raw array (n, ...) rather than a dataset constant
  bool integer;     // int64, else float64
  int rank;         // dimensions of one sample's slice (per sample) or of the constant
  bool rows_are_T;  // the first dimension must equal the task's T (sets)
  const char* meaning;
  bool slice_label;  // a per-sample int64 scalar the metrics are also reported by
};

// Every named array, in enum order (a test checks each has its row).
const std::vector<NamedArrayInfo>& named_array_table();
const NamedArrayInfo& named_array_info(NamedArray a);

// The spec a task pushes into TaskShape::raw (per sample) or ::constants, with the contract's
// dtype; aborts (a programming error) when `shape` breaks the contract for a task of T tokens.
RawArraySpec named_array_spec(NamedArray a, std::vector<int64_t> shape, int64_t T);

// The batch's array `a`, or null if it has none. UserError naming the array and the
// contract when it has one in the wrong place, of the wrong dtype or shape.
const RawArray* named_array_find(const Batch& batch, NamedArray a);

// Checks every array of `shape` whose name is in the contract (UserError as above).
void named_arrays_check(const TaskShape& shape);

}  // namespace attn
