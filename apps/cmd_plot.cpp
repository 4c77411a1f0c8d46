// `attnlab plot DIR`: compute the figures' data (DIR/figures/data/*.json) and draw the figures
// an experiment's spec asks for.
#include <CLI/CLI.hpp>

#include <memory>

#include "apps/commands.h"
#include "experiment/experiment_dir.h"

namespace attn {

void plot_command_register(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* plot =
      app.add_subcommand("plot", "Draw an experiment's figures (PNG and SVG in DIR/figures)");
  plot->add_option("dir", *dir, "Output directory of `attnlab run`")->required();
  plot->callback([dir] { experiment_plot(*dir); });
}

}  // namespace attn
