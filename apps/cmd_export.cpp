// `attnlab export DIR`: regenerate results.csv (and spec.json) from the store.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "apps/commands.h"
#include "experiment/experiment_dir.h"

namespace attn {

void export_command_register(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* exp = app.add_subcommand("export", "Regenerate DIR/results.csv from DIR/results.sqlite");
  exp->add_option("dir", *dir, "Output directory of `attnlab run`")->required();
  exp->callback([dir] {
    experiment_export(*dir);
    fmt::print("wrote {}/results.csv\n", *dir);
  });
}

}  // namespace attn
