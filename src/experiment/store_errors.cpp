// Output-directory errors of a results store (see store_errors.h).
#include "experiment/store_errors.h"

#include <cstring>
#include <filesystem>

#include "core/errno_kind.h"
#include "core/front_option.h"

namespace attn {
namespace {

std::string dir_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

std::string store_dir_not_writable(const std::string& dir, int err) {
  return dir + " is not writable (" + std::strerror(err) +
         "): a run stores its results there; "
         "choose a writable output directory (" +
         front_option(FrontOption::kOut) +
         "), or copy the "
         "directory somewhere writable (export, plot and sqlite3 read results.sqlite without "
         "running)";
}

std::string store_no_space(const std::string& path) {
  return "cannot write " + path + ": no space left on device; free space on the filesystem of " +
         dir_of(path) + " or choose another output directory (" + front_option(FrontOption::kOut) +
         "), then run the same command again";
}

std::string store_failure(const std::string& path, int err, bool full,
                          const std::string& fallback) {
  if (full) return store_no_space(path);
  switch (errno_kind(err)) {
    case ErrnoKind::kNotWritable: return store_dir_not_writable(dir_of(path), err);
    case ErrnoKind::kNoSpace: return store_no_space(path);
    case ErrnoKind::kNoDirectory:
    case ErrnoKind::kTooLarge:
    case ErrnoKind::kOther: return fallback;
  }
  return fallback;
}

}  // namespace attn
