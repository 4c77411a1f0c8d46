// `attnlab plot DIR`: draw the figures an experiment's spec asks for; `attnlab export DIR`:
// regenerate results.csv from the store.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "apps/commands.h"
#include "experiment/experiment_dir.h"

namespace attn {

void plot_command_register(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* plot = app.add_subcommand("plot", "Draw an experiment's figures (PNG and SVG in DIR/figures)");
  plot->add_option("dir", *dir, "Output directory of `attnlab run`")->required();
  plot->callback([dir] { experiment_plot(*dir); });

  auto export_dir = std::make_shared<std::string>();
  auto* exp = app.add_subcommand("export", "Regenerate DIR/results.csv from DIR/results.sqlite");
  exp->add_option("dir", *export_dir, "Output directory of `attnlab run`")->required();
  exp->callback([export_dir] {
    experiment_export(*export_dir);
    fmt::print("wrote {}/results.csv\n", *export_dir);
  });
}

}  // namespace attn
