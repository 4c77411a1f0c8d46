// Datasets on disk: a Batch as a numpy .npz.
//
// Entries: X (n, T, d_in) float64, Y (n, T_out, d_out) float64, each raw task variable
// (n, ...) int64/float64, each dataset constant, and `meta`: a 0-d string holding JSON
// {"task": ..., "seed": ..., "first": ..., "n": ..., "attnlab": VERSION,
//  "target": "real" | "binary" | "categorical", "classes": C (categorical only, = d_out),
//  "constants": [names of the dataset-level arrays], "params": {...}}.
// "target" is the batch's declared kind (tasks/target_kind.h; left out when undeclared). A
// file without it (from an earlier attnlab, which did not record it, or from numpy) reads back
// with the kind unset, so the kind is inferred from Y as before: binary when every target is
// 0 or 1, else real (an older file of categorical targets is therefore trained with bce).
// Written atomically; the same batch and meta give byte-identical files.
#pragma once

#include <cstdint>
#include <string>

#include "tasks/batch.h"

namespace attn {

// Bytes the .npz of this batch will take on disk, for the free-space check.
uint64_t dataset_file_bytes(const TaskShape& shape, int64_t n);

struct DatasetMeta {
  std::string task;
  uint64_t seed = 0;
  int64_t first = 0;        // index of the first sample
  std::string params_json;  // the resolved task parameters (Params::to_json)
};

// The `meta` JSON text for this batch.
std::string dataset_meta_json(const Batch& batch, const DatasetMeta& meta);
void dataset_write(const std::string& path, const Batch& batch, const DatasetMeta& meta);

// Reads X, Y and every other numeric entry of a dataset file; meta_json receives `meta` (""
// if absent, e.g. a file written by numpy). IoError if X or Y is missing or misshapen.
//
// The one rule for the other entries (`attnlab fit`, `features` and `predict` alike): text
// entries are skipped; an entry is a dataset constant when `meta` lists it in "constants"
// or when it is not per-sample (0-d, or a first dimension other than n), else a raw array
// (n, ...). Its values are int64 for an integer or bool dtype, float64 for float32/float64.
// shape.target is meta's "target" (IoError for an unknown kind, or categorical whose
// "classes" is not Y's d_out), unset when meta records none.
Batch dataset_read(const std::string& path, std::string* meta_json);

// dataset_read for a file of inputs to predict on, where Y may be absent: then *has_y is
// false, Y is empty and T_out = d_out = 0. The same rule for everything else.
Batch dataset_read_inputs(const std::string& path, std::string* meta_json, bool* has_y);

}  // namespace attn
