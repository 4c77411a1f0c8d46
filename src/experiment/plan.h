// Sweep plan: a Spec expanded into run points (grid × seeds), each resolved to typed,
// validated parameters and given a stable id.
//
// Order: sweep axes in key order (the TOML reader sorts keys; zip groups after plain
// axes), the first varying slowest, seeds fastest. A run's id is a hash of its
// resolved configuration and seed, so it does not depend on the order, the shard or the
// machine; values that equal the defaults resolve the same whether written or not.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/probes.h"
#include "core/params.h"
#include "experiment/spec.h"
#include "models/train_schema.h"

namespace attn {

struct RunConfig {
  std::string task, model;
  Params task_params, model_params, train_params, eval_params;
  // eval.probes: what the run reports besides its metrics (analysis/probes.h). Not a Params
  // key: it is not part of the run id, the stored parameter columns or the spec's fingerprint
  // (spec_runs_json), so naming a probe in a spec whose results are stored redoes nothing.
  std::vector<ProbeKind> probes;
};

// The spec key naming a run's probes: a list of probe names, e.g. probes = ["rank_pair"]
// ([eval] section), or "rank_pair, other" from the command line. Read by config_resolve.
inline constexpr const char* kEvalProbesKey = "eval.probes";
// Its declaration: a ParamType::NameList row (param_name_list), which the spec loader reads and
// config_resolve checks with; kept out of eval_schema() for the reasons above.
const ParamSpec& eval_probes_param();

struct RunPoint {
  int64_t index = 0;  // position in the plan
  uint64_t seed = 0;
  std::map<std::string, ParamValue> swept;  // dotted key -> value of this point
  RunConfig config;
  std::string config_json;  // canonical JSON of config + seed
  std::string run_id;       // 16 hex digits, hash of config_json
};

// The configuration of `task` and `model` with every parameter at its default: the task's
// schema, the model's, model_train_schema() and eval_schema(). UserError with a did-you-mean
// for an unknown name.
RunConfig run_config_defaults(const std::string& task, const std::string& model);

// The Params of section "task", "model", "train" or "eval"; null for any other name.
const Params* run_config_section(const RunConfig& config, const std::string& section);
Params* run_config_section(RunConfig& config, const std::string& section);

// Resolves one point: base values, then [task.<name>] / [model.<name>], then the swept
// values. Throws UserError "FILE: key: ..." for anything invalid, and builds the task
// once to check cross-parameter rules (e.g. q < N).
RunConfig config_resolve(const Spec& spec, const std::map<std::string, ParamValue>& swept);

// The task parameters of the test set: the task's, with task.instances = eval.instances and
// task.N = eval.N when those are set (UserError naming the eval key if the task has no such
// key or value).
Params eval_task_params(const RunConfig& config);

// The canonical JSON of a configuration and seed (RunPoint::config_json; its hash is the
// run id). Execution settings (ParamSpec::execution_only) are not part of it.
std::string run_config_json(const RunConfig& config, uint64_t seed);

// Plans larger than this are refused before anything is expanded (plan_make); plans
// larger than kPlanWarnRuns get a warning on stderr.
inline constexpr uint64_t kPlanMaxRuns = 10'000'000;
inline constexpr uint64_t kPlanWarnRuns = 100'000;

// The number of runs the spec plans (product of the axes' lengths and the seed count,
// saturated at UINT64_MAX on overflow), and in *factors the text "sweep.KEY: 3 values ×
// ... × 5 seeds" naming what makes it. Nothing is expanded.
uint64_t plan_count(const Spec& spec, std::string* factors);

// Expands and resolves every point (validating all of them before anything runs), and
// checks that plots and claims refer to keys that exist.
std::vector<RunPoint> plan_make(const Spec& spec);

// 64-bit hash of text (FNV-1a, then mixed), as 16 hex digits.
std::string hash_hex(const std::string& text);

}  // namespace attn
