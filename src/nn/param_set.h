// ParamSet: every trainable tensor of a network in one contiguous buffer, with a gradient
// buffer of the same layout, so that optimisers, clipping and checkpoints see one flat
// vector.
//
// A network declares its tensors once (add → an entry id), then allocate() zeroes both
// buffers; value(id)/grad(id) point at an entry's first element (row-major, its shape).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"

namespace attn {

struct ParamEntry {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0, size = 0;
};

template <class T>
class ParamSet {
 public:
  // Declares a tensor; returns its id. Only before allocate().
  int add(std::string name, std::vector<int64_t> shape) {
    ATTN_ASSERT(values_.empty(), "ParamSet::add after allocate()");
    ParamEntry e{std::move(name), std::move(shape), total_, 1};
    for (int64_t s : e.shape) e.size *= s;
    total_ += e.size;
    entries_.push_back(std::move(e));
    return static_cast<int>(entries_.size()) - 1;
  }
  void allocate() {
    values_.assign(static_cast<size_t>(total_), T(0));
    grads_.assign(static_cast<size_t>(total_), T(0));
  }
  T* value(int id) { return values_.data() + entries_[id].offset; }
  const T* value(int id) const { return values_.data() + entries_[id].offset; }
  T* grad(int id) { return grads_.data() + entries_[id].offset; }
  void zero_grad() { std::fill(grads_.begin(), grads_.end(), T(0)); }

  const std::vector<ParamEntry>& entries() const { return entries_; }
  const ParamEntry& entry(int id) const { return entries_[id]; }
  std::vector<T>& values() { return values_; }
  const std::vector<T>& values() const { return values_; }
  std::vector<T>& grads() { return grads_; }
  int64_t size() const { return total_; }
  // The id of the tensor called `name`, or -1.
  int find(const std::string& name) const {
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].name == name) return static_cast<int>(i);
    return -1;
  }

 private:
  std::vector<ParamEntry> entries_;
  std::vector<T> values_, grads_;
  int64_t total_ = 0;
};

}  // namespace attn
