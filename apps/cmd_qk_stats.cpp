// `attnlab qk-stats FILE.safetensors [--layout auto|bert|gpt2|custom] [--heads H] ...`:
// how close a pretrained model's query-key products W_qᵀW_k are to c·I (Fu et al. 2023
// §4.4): per-layer and per-head statistics next to a norm-matched Gaussian null model,
// a table on stdout (or JSON with --json), and with --out DIR: DIR/qk_stats.csv,
// DIR/qk_stats.json and DIR/heatmaps/*.png|svg (top-left blocks of A_l and A_{l,h}).
// Everything is validated before any work; on a user error nothing is written
// (analysis/qk_run.h does the work; this file parses and prints).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <string>

#include "analysis/qk_report.h"
#include "analysis/qk_run.h"
#include "apps/cli_numbers.h"
#include "apps/commands.h"

namespace attn {
namespace {

struct QkStatsCliOptions : QkStatsOptions {
  bool json = false;
};

void qk_stats_print(const QkStatsCliOptions& o) {
  const QkStatsResult r = qk_stats_run(o);
  if (o.json) {
    fmt::print("{}", r.json);
  } else {
    fmt::print("{}", qk_report_table(r.info, r.layers));
    if (!o.out.empty()) {
      fmt::print("wrote {0}/qk_stats.csv, {0}/qk_stats.json (per-layer and per-head){1}\n", o.out,
                 r.heatmaps ? ", heat maps in " + o.out + "/heatmaps/" : "");
    } else {
      fmt::print("per-head statistics: --json, or --out DIR for CSV/JSON and heat maps\n");
    }
  }
}

}  // namespace

void qk_stats_command_register(CLI::App& app) {
  auto o = std::make_shared<QkStatsCliOptions>();
  auto* cmd = app.add_subcommand(
      "qk-stats",
      "How close a model's query-key products W_q^T W_k are to c*I (per layer and head)");
  cmd->add_option("file", o->file, "Model weights, a .safetensors file")->required();
  cmd->add_option(
         "--layout", o->layout,
         "Where the weights are: bert (encoder.layer.{l}.attention.self.query/key.weight), "
         "gpt2 (fused h.{l}.attn.c_attn.weight), custom (--query-pattern/--key-pattern), "
         "or auto (bert or gpt2)")
      ->check(CLI::IsMember({"auto", "bert", "gpt2", "custom"}))
      ->capture_default_str();
  cmd->add_option(
      "--query-pattern", o->query_pattern,
      "Query weight name with {l} for the layer, stored (out, in) (gpt2: the fused weight)");
  cmd->add_option("--key-pattern", o->key_pattern,
                  "Key weight name with {l} for the layer, stored (out, in)");
  cmd->add_option("--heads", o->heads,
                  "Attention heads per layer (needed unless the file's __metadata__ has "
                  "num_attention_heads)")
      ->check(whole_number(1, INT64_MAX));
  cmd->add_option("--head-size", o->head_size, "Head size (instead of --heads)")
      ->check(whole_number(1, INT64_MAX));
  cmd->add_option("--layers", o->layers, "Layers to analyse, e.g. 0,3,8-11 (default: all)");
  cmd->add_option("--heatmap-layers", o->heatmap_layers,
                  "Layers to draw heat maps of (default with --out: all analysed layers)");
  cmd->add_option("--heatmap-heads", o->heatmap_heads, "Heads whose A_{l,h} is drawn too")
      ->capture_default_str();
  cmd->add_option("--heatmap-block", o->heatmap_block, "Size of the top-left block drawn")
      ->check(whole_number(1, INT64_MAX))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Directory for qk_stats.csv, qk_stats.json and heatmaps/");
  cmd->add_flag("--json", o->json, "Print the statistics as JSON instead of a table");
  cmd->add_option("--seed", o->seed, "Seed of the Gaussian null model")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option(
         "--threads", o->threads,
         "Compute threads for the products (0: ATTNLAB_THREADS or 1); results do not depend on it")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->footer(
      "A_l = W_q^T W_k (D x D, summed over heads) and A_{l,h} = (W_q^h)^T W_k^h. Statistics: c* = "
      "tr(A)/D,\n"
      "cos(A,I) = tr(A)/(sqrt(D) |A|_F), diagonal ratio, positive diagonal fraction, residual\n"
      "|A - c*I|_F/|A|_F, and the same for Gaussian weights of matching norms. See "
      "docs/qk-analysis.md.\n"
      "Example: attnlab qk-stats bert-base-uncased/model.safetensors --heads 12 --out qk_bert");
  cmd->callback([o] { qk_stats_print(*o); });
}

}  // namespace attn
