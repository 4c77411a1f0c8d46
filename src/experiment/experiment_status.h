// Where an experiment directory stands against its plan (`attnlab status DIR`, and the warning
// of a merge that misses runs): runs planned, stored (ok, failed) and missing, per shard when
// the directory was run with --shard i/k (its shard) or merged from such shards (every shard).
// The plan is the one the directory was last run with (meta plan_ids, in plan order: a point's
// shard is its plan index mod k); how it was run (spec, quick, overrides, shard) is meta
// run_args, absent in stores of earlier releases (args_known = false).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct ShardStatus {
  int index = 0;
  int64_t planned = 0, ok = 0, failed = 0, missing = 0;
};

struct ExperimentStatus {
  std::string dir, experiment, spec_path;
  bool args_known = false;  // quick, overrides, shard_index and the shards are known
  bool quick = false;
  std::vector<std::string> overrides;
  int shard_index = 0, shard_count = 1;  // this directory's --shard (1: the whole plan)
  bool merged = false;                   // merged from shards of shard_count (every shard)
  int64_t plan_total = 0;                // runs of the whole plan
  int64_t planned = 0, ok = 0, failed = 0, missing = 0;  // of this directory's part
  int64_t stale = 0;                                     // stored runs not in the plan
  std::vector<ShardStatus> shards;  // per shard (shard_count > 1): its own, or all merged
};

// IoError (one line naming DIR and what to run) when DIR holds no store.
ExperimentStatus experiment_status(const std::string& dir);

// "9 of 18 planned runs are missing: shard 2/3 (all 6), shard 1/3 (3 of 6)"; "" when none is.
std::string experiment_missing_text(const ExperimentStatus& status);

}  // namespace attn
