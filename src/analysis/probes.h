// Probes: diagnostics that a spec asks for by name ([eval] probes = ["rank_pair"]) and that
// analyse a trained model after its test metrics, logging scalars and series into the run's
// FitLog (stored as the run's metrics and series, like the fit's own). The generic run path
// knows no probe: it runs the kinds the run's configuration names (experiment/run_body.h), on
// rank 0 of a distributed run, after predict(test) and Model::evaluate.
//
// One row per ProbeKind in probe_table(), in kind order: name, one-line description, the
// models, tasks and test set (eval.instances) it applies to (checked when a spec is planned:
// probe_check), the scalars it logs, its function, and the doc section explaining it. A kind
// without a row fails the build (static_assert in probes.cpp); an incomplete row fails
// tests/test_probes.cpp. Probes are not part of run ids: naming one changes what a run
// reports, not what it computes.
#pragma once

#include <string>
#include <vector>

#include "core/params.h"
#include "model_api/model.h"
#include "tasks/batch.h"

namespace attn {

enum class ProbeKind {
  kRankPair,    // Thm 10's rank pair on a trained MLP's first layer
  kQkIdentity,  // the trained query-key product against c·I (issue #35)
  kQkCodeIdentity,  // the same on token_selection's raw positional codes (issue #35)
  kCount
};

// What a probe reads: the fitted model and the run's test set.
struct ProbeInput {
  const Model& model;              // fitted; predict() and save() may be called
  const std::string& model_name;   // its registry name (model.name)
  const Params& model_params;      // its [model] parameters
  const Params& test_task_params;  // the test set's task parameters (eval.instances applied)
  const Batch& test;               // the test set (eval.n samples from eval.first)
};

struct ProbeRow {
  ProbeKind kind;
  const char* name;                  // as a spec writes it in eval.probes
  const char* description;           // one line, for messages and listings
  std::vector<std::string> models;   // the models it applies to (empty: any)
  std::vector<std::string> tasks;    // the tasks it applies to (empty: any)
  std::string eval_instances;        // the eval.instances it needs ("": any test set)
  std::vector<std::string> scalars;  // the scalars it may log
  void (*run)(const ProbeInput& in, FitLog& log);
  const char* doc;  // "docs/<file>.md#<anchor>": what it measures and why
};

// Every probe, row k of kind k.
const std::vector<ProbeRow>& probe_table();
const ProbeRow& probe_row(ProbeKind kind);
// Every kind, in table order.
std::vector<ProbeKind> probe_kinds();

// The kind named `name`; UserError "eval.probes: unknown probe ..." with a did-you-mean.
ProbeKind probe_find(const std::string& name);

// The kinds of a list of names separated by commas ("rank_pair", "a, b"; "" = none), in the
// order given. UserError for an unknown name or a name given twice.
std::vector<ProbeKind> probes_parse(const std::string& names);
// The names of `kinds` joined by ", " (what probes_parse reads back).
std::string probes_text(const std::vector<ProbeKind>& kinds);

// UserError "eval.probes: rank_pair needs model = mlp, task = qsa and eval.instances =
// rank_pair (...)" when the probe does not apply to this model, task and test set.
void probe_check(ProbeKind kind, const std::string& model, const std::string& task,
                 const std::string& eval_instances);

// Runs the probe: its scalars and series go to `log`.
void probe_run(ProbeKind kind, const ProbeInput& in, FitLog& log);

}  // namespace attn
