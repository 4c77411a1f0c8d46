// Batch allocation and accessors.
#include "tasks/batch.h"

#include "core/error.h"
#include "core/front_option.h"
#include "core/memory.h"

namespace attn {

int64_t RawArraySpec::sample_size() const {
  int64_t size = 1;
  for (int64_t s : sample_shape) size *= s;
  return size;
}

int64_t* Batch::raw_i64(size_t k, int64_t row) {
  return raw[k].i64.data() + row * raw[k].spec.sample_size();
}
double* Batch::raw_f64(size_t k, int64_t row) {
  return raw[k].f64.data() + row * raw[k].spec.sample_size();
}
const int64_t* Batch::raw_i64(size_t k, int64_t row) const {
  return raw[k].i64.data() + row * raw[k].spec.sample_size();
}
const double* Batch::raw_f64(size_t k, int64_t row) const {
  return raw[k].f64.data() + row * raw[k].spec.sample_size();
}

const RawArray& Batch::find(const std::string& name) const {
  for (const auto& r : raw)
    if (r.spec.name == name) return r;
  for (const auto& c : constants)
    if (c.spec.name == name) return c;
  ATTN_ASSERT(false, "batch has no array named " + name);
}

bool batch_bytes(const TaskShape& shape, int64_t n, uint64_t* bytes) {
  uint64_t per_sample = static_cast<uint64_t>(shape.x_size() + shape.y_size());
  for (const auto& r : shape.raw) per_sample += static_cast<uint64_t>(r.sample_size());
  uint64_t total = 0;
  if (!checked_mul(per_sample, static_cast<uint64_t>(n), &total)) return false;
  if (!checked_mul(total, 8, &total)) return false;
  *bytes = total;
  return true;
}

Batch batch_alloc(const TaskShape& shape, int64_t n) {
  ATTN_ASSERT(n >= 0);
  uint64_t bytes = 0;
  const std::string lower_n = std::string("lower ") + front_option(FrontOption::kN);
  ATTN_CHECK(batch_bytes(shape, n, &bytes), "a dataset of n = " + std::to_string(n) +
                                                " samples is too large to address; " + lower_n);
  memory_check(
      bytes, "a dataset of n = " + std::to_string(n) + " samples",
      lower_n + " or generate it in several parts (" + front_option(FrontOption::kFirst) + ")");
  Batch b;
  b.n = n;
  b.shape = shape;
  b.X.assign(static_cast<size_t>(n * shape.x_size()), 0.0);
  b.Y.assign(static_cast<size_t>(n * shape.y_size()), 0.0);
  for (const auto& spec : shape.raw) {
    RawArray r{spec, {}, {}};
    if (spec.integer)
      r.i64.assign(static_cast<size_t>(n * spec.sample_size()), 0);
    else
      r.f64.assign(static_cast<size_t>(n * spec.sample_size()), 0.0);
    b.raw.push_back(std::move(r));
  }
  for (const auto& spec : shape.constants) {
    RawArray r{spec, {}, {}};
    if (spec.integer)
      r.i64.assign(static_cast<size_t>(spec.sample_size()), 0);
    else
      r.f64.assign(static_cast<size_t>(spec.sample_size()), 0.0);
    b.constants.push_back(std::move(r));
  }
  return b;
}

}  // namespace attn
