// Task: a distribution of (input, target) sequences, sampled by index.
//
// Sample i of the dataset `seed` is a pure function of (task parameters, seed, i): it is
// the same whichever thread, batch or shard produces it. A task declares its parameters
// (schema), the shapes of its samples and the kind of its targets (TaskShape::target), fills
// rows of a Batch, and has a brute-force reference of its targets (TaskInfo::reference).
// Adding a task: its file(s) here, its row in task_registry() (task.cpp), docs/tasks.md; the
// registry loop in tests/test_tasks.cpp then checks its targets, kind and named arrays.
//
// Train and test sets of one experiment share the seed (so dataset constants such as
// rf_target's β agree) and use disjoint index ranges.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "tasks/batch.h"

namespace attn {

class Progress;

class Task {
 public:
  virtual ~Task() = default;
  virtual const TaskShape& shape() const = 0;
  // Fills the dataset-level constants of `out` (default: none).
  virtual void fill_constants(uint64_t seed, Batch& out) const;
  // Fills rows [row, row + count) of out with samples first, ..., first + count - 1.
  // The rows' X and Y must be zero on entry (sparse encodings write only their non-zeros).
  virtual void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                            int64_t row) const = 0;
};

// A task's brute-force reference: the targets of sample `row` of `batch` (y_size values into
// y), recomputed from the definition out of the sample's inputs and raw arrays, independently
// of the task's fast path. Label noise is not part of it (rf_target: the clean target).
using TaskReference = void (*)(const Params& params, const Batch& batch, int64_t row, double* y);

struct TaskInfo {
  std::string name;
  std::string description;  // one line
  std::vector<ParamSpec> (*schema)();
  std::unique_ptr<Task> (*make)(const Params& params);  // validates cross-parameter rules
  TaskReference reference;  // tests/test_tasks.cpp compares every task's targets with it
};

// Every task, in the order `attnlab list` shows them.
const std::vector<TaskInfo>& task_registry();
// The task called `name`; UserError with a did-you-mean if there is none.
const TaskInfo& task_find(const std::string& name);
// The default parameters of a task (section "task").
Params task_default_params(const std::string& name);
std::unique_ptr<Task> task_make(const std::string& name, const Params& params);

// Samples first .. first + n - 1 into a new batch, in chunks of `chunk` samples spread
// over the compute threads (results do not depend on either). progress may be null.
Batch task_generate(const Task& task, uint64_t seed, int64_t first, int64_t n,
                    int64_t chunk = 256, Progress* progress = nullptr);

}  // namespace attn
