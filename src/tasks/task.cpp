// Task registry and parallel generation.
#include "tasks/task.h"

#include <algorithm>

#include "core/error.h"
#include "core/progress.h"
#include "core/suggest.h"
#include "core/threads.h"
#include "tasks/hop.h"
#include "tasks/match_tasks.h"
#include "tasks/qsa.h"
#include "tasks/rf_target.h"
#include "tasks/sparse_retrieval.h"
#include "tasks/token_selection.h"

namespace attn {

void Task::fill_constants(uint64_t /*seed*/, Batch& /*out*/) const {}

const std::vector<TaskInfo>& task_registry() {
  static const std::vector<TaskInfo> registry = {
      {"rf_target", "Fu et al.: a query and N keys, scalar target = mean over keys of F(x_0, x_i)",
       rf_target_schema, rf_target_make, rf_target_batch_reference},
      {"qsa", "Sanford et al.: q-sparse averaging, y_i = mean of z_j over a q-subset of positions",
       qsa_schema, qsa_make, qsa_batch_reference},
      {"match2", "Sanford et al.: bit i = exists j with x_i + x_j = 0 mod M", match2_schema,
       match2_make, match2_batch_reference},
      {"match3", "Sanford et al.: bit i = exists j1, j2 with x_i + x_j1 + x_j2 = 0 mod M",
       match3_schema, match3_make, match3_batch_reference},
      {"match3_local", "match3 with both witnesses within distance w of i", match3_local_schema,
       match3_local_make, match3_local_batch_reference},
      {"match3_adjacent", "bit i = exists j with x_i + x_j + x_(j+1) = 0 mod M",
       match3_adjacent_schema, match3_adjacent_make, match3_adjacent_batch_reference},
      {"match3_pointer", "match3 with witnesses in a pointer set S_i carried by token i",
       match3_pointer_schema, match3_pointer_make, match3_pointer_batch_reference},
      {"match_s", "bit i = exists s-1 witnesses with x_i + their sum = 0 mod M (order-s target)",
       match_s_schema, match_s_make, match_s_batch_reference},
      {"hop",
       "Sanford et al. 2024: k-hop induction heads, output t = hop_k(sigma)_(t-1), k named "
       "at position 0",
       hop_schema, hop_make, hop_batch_reference},
      {"sparse_retrieval",
       "Mousavi-Hosseini et al. 2025: q-sparse token retrieval, y_i = g(z at the q positions "
       "t_i carries)",
       sparse_retrieval_schema, sparse_retrieval_make, sparse_retrieval_batch_reference},
      {"token_selection",
       "Wang et al. 2024: sparse token selection, mean of the Gaussian tokens a query names by "
       "positional codes",
       token_selection_schema, token_selection_make, token_selection_batch_reference},
  };
  return registry;
}

const TaskInfo& task_find(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& info : task_registry()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  const std::string known = join_names(names);
  throw UserError("unknown task '" + name + "'" + did_you_mean(name, names) + "; tasks: " + known +
                  " (see `attnlab list`)");
}

Params task_default_params(const std::string& name) {
  return Params("task", task_find(name).schema());
}

std::unique_ptr<Task> task_make(const std::string& name, const Params& params) {
  return task_find(name).make(params);
}

Batch task_generate(const Task& task, uint64_t seed, int64_t first, int64_t n, int64_t chunk,
                    Progress* progress) {
  ATTN_CHECK(n >= 1, "the number of samples must be at least 1, got " + std::to_string(n));
  ATTN_CHECK(first >= 0, "the first sample index must be >= 0, got " + std::to_string(first));
  Batch batch = batch_alloc(task.shape(), n);
  task.fill_constants(seed, batch);
  parallel_for(0, n, std::max<int64_t>(1, chunk), [&](int64_t lo, int64_t hi) {
    task.sample_range(seed, first + lo, hi - lo, batch, lo);
    if (progress) progress->add(hi - lo);
  });
  return batch;
}

}  // namespace attn
