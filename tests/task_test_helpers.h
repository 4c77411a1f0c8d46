// Task parameters for tests: a task's defaults (task_default_params) with settings applied as
// text, e.g. task_params("qsa", {{"N", "16"}, {"q", "2"}}).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/params.h"
#include "tasks/task.h"

namespace attn::test {

using TaskSettings = std::vector<std::pair<std::string, std::string>>;

inline Params task_params(const std::string& task, const TaskSettings& settings) {
  Params p = task_default_params(task);
  for (const auto& [k, v] : settings) p.set_text(k, v);
  return p;
}

}  // namespace attn::test
