// The store's place in an output directory (see store_dir.h).
#include "experiment/store_dir.h"

#include <filesystem>

#include "core/error.h"
#include "core/front_option.h"

namespace attn {

std::string store_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "results.sqlite").string();
}

std::string store_path_existing(const std::string& dir) {
  const std::string path = store_path(dir);
  if (!std::filesystem::exists(path))
    throw IoError(dir + ": no results.sqlite here; run `" +
                  front_command(FrontCommand::kRunInto, dir) + "` first");
  return path;
}

}  // namespace attn
