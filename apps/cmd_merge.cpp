// `attnlab merge OUT SHARD_DIR...`: combine the stores of shards of one spec.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "apps/commands.h"
#include "experiment/experiment_dir.h"

namespace attn {

void merge_command_register(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto shards = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("merge", "Merge the output directories of --shard runs");
  cmd->add_option("out", *out, "Merged output directory")->required();
  cmd->add_option("shards", *shards, "Shard output directories")->required();
  cmd->callback([out, shards] {
    const int64_t runs = experiment_merge(*out, *shards);
    fmt::print("merged {} shards into {}: {} runs; results in {}/results.csv\n", shards->size(),
               *out, runs, *out);
  });
}

}  // namespace attn
