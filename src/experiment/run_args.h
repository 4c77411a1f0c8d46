// What `attnlab run` was given besides the spec and DIR, kept in the store's meta "run_args" as
// {"quick": bool, "set": ["key=value", ...], "shard": [i, k]}: experiment_status names the
// command that finishes DIR from it, and merge records how its shards ran.
#pragma once

#include <string>
#include <vector>

namespace attn {

struct RunArgs {
  bool quick = false;
  std::vector<std::string> overrides;  // --set items, in order
  int shard_index = 0, shard_count = 1;
};

std::string run_args_json(const RunArgs& args);

// False when `text` is not such an object (a store written before run_args existed); a missing
// or malformed field keeps its default.
bool run_args_parse(const std::string& text, RunArgs* out);

}  // namespace attn
