// Helpers for the run-group tests: a spec run grouped and with --no-groups (the run-by-run
// path), and the check that both stored the same runs: status, point, every metric but
// fit_seconds and every series point, compared with ==.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "experiment/experiment_dir.h"
#include "experiment/store.h"

namespace attn::test {

struct GroupedAndSingle {
  std::map<std::string, StoredRun> grouped, single;  // by run id
};

// Runs `spec` into out_prefix + "grouped" and out_prefix + "single"; each must store
// `expected_ok` runs and no failure, the first in run groups (RunSummary::groups).
inline GroupedAndSingle run_grouped_and_single(const std::string& spec,
                                               const std::string& out_prefix, int expected_ok) {
  GroupedAndSingle runs;
  for (const bool groups : {true, false}) {
    RunRequest rq;
    rq.spec_path = spec;
    rq.out_dir = out_prefix + (groups ? "grouped" : "single");
    rq.progress = false;
    rq.groups = groups;
    const RunSummary s = experiment_run(rq);
    EXPECT_EQ(s.ok, expected_ok);
    EXPECT_EQ(s.failed, 0);
    // The grouped sweep really ran groups; --no-groups none.
    if (groups)
      EXPECT_GT(s.groups, 0);
    else
      EXPECT_EQ(s.groups, 0);
    for (auto& r : ResultsStore(rq.out_dir + "/results.sqlite", StoreAccess::kRead).load_runs())
      (groups ? runs.grouped : runs.single)[r.run_id] = r;
  }
  return runs;
}

// Every run-by-run run stored identically by the grouped sweep; returns how many metric
// values were compared.
inline int expect_same_stored_runs(const GroupedAndSingle& runs) {
  EXPECT_EQ(runs.grouped.size(), runs.single.size());
  int compared = 0;
  for (const auto& [id, s] : runs.single) {
    const auto it = runs.grouped.find(id);
    if (it == runs.grouped.end()) {
      ADD_FAILURE() << "run " << id << " is missing from the grouped sweep";
      continue;
    }
    const StoredRun& g = it->second;
    EXPECT_EQ(g.status, "ok") << id;
    EXPECT_EQ(g.point, s.point) << id;
    if (g.metrics.size() != s.metrics.size() || g.series.size() != s.series.size()) {
      ADD_FAILURE() << id << ": " << g.metrics.size() << " vs " << s.metrics.size() << " metrics, "
                    << g.series.size() << " vs " << s.series.size() << " series points";
      continue;
    }
    for (size_t k = 0; k < s.metrics.size(); ++k) {
      EXPECT_EQ(g.metrics[k].first, s.metrics[k].first) << id;
      if (s.metrics[k].first == "fit_seconds") continue;
      EXPECT_EQ(g.metrics[k].second, s.metrics[k].second)
          << id << " " << s.metrics[k].first << ": " << g.metrics[k].second << " vs "
          << s.metrics[k].second;
      ++compared;
    }
    for (size_t k = 0; k < s.series.size(); ++k) {
      EXPECT_EQ(g.series[k].series, s.series[k].series) << id;
      EXPECT_EQ(g.series[k].step, s.series[k].step) << id;
      EXPECT_EQ(g.series[k].value, s.series[k].value)
          << id << " " << s.series[k].series << "[" << s.series[k].step << "]";
    }
  }
  return compared;
}

}  // namespace attn::test
