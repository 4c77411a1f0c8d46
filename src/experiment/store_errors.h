// The one-line IoErrors about the output directory of a results store, shared by the store
// and the directory lock: its directory cannot be written, its filesystem is full, and the
// IoError for an errno met while creating or opening it (classified by errno_kind).
#pragma once

#include <string>

namespace attn {

// "DIR is not writable (strerror(err)): a run stores its results there; ..." (what to do).
std::string store_dir_not_writable(const std::string& dir, int err);

// "cannot write PATH: no space left on device; ..." (what to do).
std::string store_no_space(const std::string& path);

// The IoError line for store PATH after errno err (0: none) and SQLite's `full` (SQLITE_FULL):
// not writable or no space when errno_kind says so, else `fallback`.
std::string store_failure(const std::string& path, int err, bool full, const std::string& fallback);

}  // namespace attn
