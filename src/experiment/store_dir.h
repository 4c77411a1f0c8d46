// Where an output directory keeps its results store (DIR/results.sqlite), and the one error for
// a directory that has none.
#pragma once

#include <string>

namespace attn {

// DIR/results.sqlite.
std::string store_path(const std::string& dir);

// store_path(dir) when it exists; else IoError "DIR: no results.sqlite here; run `attnlab run
// SPEC -o DIR` first" (the command that makes it).
std::string store_path_existing(const std::string& dir);

}  // namespace attn
