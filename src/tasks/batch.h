// Batch: the one data type every task produces and every model consumes.
//
// Shapes (row-major, float64):
//   X   n × T × d_in        inputs, one row per token
//   Y   n × T_out × d_out   targets, of the kind shape.target (tasks/target_kind.h)
//   raw per-sample task variables, each n × (sample_shape...), int64 or float64
//   constants: dataset-level arrays that do not depend on the sample (e.g. rf_target's β)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/target_kind.h"

namespace attn {

struct RawArraySpec {
  std::string name;
  std::vector<int64_t> sample_shape;  // shape of one sample's slice
  bool integer = false;               // int64 (true) or float64
  int64_t sample_size() const;
};

struct TaskShape {
  int64_t T = 0, d_in = 0, T_out = 0, d_out = 0;
  std::vector<RawArraySpec> raw;
  std::vector<RawArraySpec> constants;  // sample_shape is the whole array's shape
  // What Y holds; every task declares it (categorical: d_out = the class count C >= 2).
  // Unset for data no task produced: target_kind_of infers it from Y.
  std::optional<TargetKind> target = std::nullopt;
  int64_t x_size() const { return T * d_in; }
  int64_t y_size() const { return T_out * d_out; }
};

struct RawArray {
  RawArraySpec spec;
  std::vector<double> f64;   // used when !spec.integer
  std::vector<int64_t> i64;  // used when spec.integer
};

struct Batch {
  int64_t n = 0;
  TaskShape shape;
  std::vector<double> X;
  std::vector<double> Y;
  std::vector<RawArray> raw;        // same order as shape.raw
  std::vector<RawArray> constants;  // same order as shape.constants

  double* x(int64_t row) { return X.data() + row * shape.x_size(); }
  double* y(int64_t row) { return Y.data() + row * shape.y_size(); }
  const double* x(int64_t row) const { return X.data() + row * shape.x_size(); }
  const double* y(int64_t row) const { return Y.data() + row * shape.y_size(); }
  // Sample `row`'s slice of raw array k.
  int64_t* raw_i64(size_t k, int64_t row);
  double* raw_f64(size_t k, int64_t row);
  const int64_t* raw_i64(size_t k, int64_t row) const;
  const double* raw_f64(size_t k, int64_t row) const;
  // Raw or constant array by name; aborts if missing (a programming error).
  const RawArray& find(const std::string& name) const;
};

// Bytes a batch of n samples of this shape occupies; false on overflow.
bool batch_bytes(const TaskShape& shape, int64_t n, uint64_t* bytes);
// Allocates a zeroed batch after checking that it fits in memory (UserError if not).
Batch batch_alloc(const TaskShape& shape, int64_t n);

}  // namespace attn
