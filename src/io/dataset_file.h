// Datasets on disk: a Batch as a numpy .npz.
//
// Entries: X (n, T, d_in) float64, Y (n, T_out, d_out) float64, each raw task variable
// (n, ...) int64/float64, each dataset constant, and `meta`: a 0-d string holding JSON
// {"task": ..., "seed": ..., "first": ..., "n": ..., "attnlab": VERSION,
//  "constants": [names of the dataset-level arrays], "params": {...}}.
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

// Reads X, Y and every other numeric entry: the arrays `meta` lists as constants become
// constants, the others raw arrays (first dimension n); meta_json receives `meta` ("" if
// absent, e.g. a file written by numpy). IoError if X or Y is missing or misshapen.
Batch dataset_read(const std::string& path, std::string* meta_json);

}  // namespace attn
