// The qk-stats job: options checked, layers analysed, files written (qk_run.h).
#include "analysis/qk_run.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "analysis/qk_layout.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/memory.h"
#include "core/progress.h"
#include "core/threads.h"
#include "io/atomic_file.h"
#include "io/image_write.h"
#include "io/safetensors.h"

namespace attn {
namespace {

namespace fs = std::filesystem;


std::string list_text(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// The output directory (--out DIR, out=DIR) must be (or be creatable as) a writable directory.
void out_dir_check(const std::string& dir) {
  std::error_code ec;
  const fs::path p(dir);
  if (fs::exists(p, ec)) {
    ATTN_CHECK(fs::is_directory(p, ec), front_option_with(FrontOption::kOut, dir) +
                                            " exists and is not a directory; choose another path");
    output_path_check((p / "qk_stats.json").string(), 1 << 20);
    return;
  }
  fs::path parent = p.parent_path();
  while (!parent.empty() && !fs::exists(parent, ec)) parent = parent.parent_path();
  if (parent.empty()) parent = ".";
  ATTN_CHECK(fs::is_directory(parent, ec) && ::access(parent.c_str(), W_OK | X_OK) == 0,
             front_option_with(FrontOption::kOut, dir) + ": cannot create it, " + parent.string() +
                 " is not a writable directory; choose another output directory");
}

void dir_create(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw IoError("cannot create directory " + dir.string() + ": " + ec.message() +
                  "; choose another " + front_option(FrontOption::kOut));
}

void heatmaps_write(const fs::path& dir, const std::string& file, const QkLayerResult& r) {
  const int64_t b = r.block;
  const int64_t cell_px = std::max<int64_t>(1, 512 / b);
  const std::string corner = fmt::format("top-left {}x{} of {}x{}", b, b, r.D, r.D);
  const std::string base = (dir / ("layer" + std::to_string(r.layer))).string();
  heatmap_write_png(base + ".png", r.layer_block.data(), b, b, cell_px);
  heatmap_write_svg(base + ".svg", r.layer_block.data(), b, b,
                    fmt::format("A = Wq^T Wk, layer {}, {} ({}), c* = {:.4g}, cos(A,I) = {:.3f}",
                                r.layer, corner, file, r.stats.c_star, r.stats.identity_cosine));
  for (const auto& [h, block] : r.head_blocks) {
    const QkMatrixStats& s = r.head_results[static_cast<size_t>(h)].stats;
    const std::string name = base + "_head" + std::to_string(h);
    heatmap_write_png(name + ".png", block.data(), b, b, cell_px);
    heatmap_write_svg(
        name + ".svg", block.data(), b, b,
        fmt::format("A = Wq^T Wk, layer {} head {}, {} ({}), c* = {:.4g}, cos(A,I) = {:.3f}",
                    r.layer, h, corner, file, s.c_star, s.identity_cosine));
  }
}

}  // namespace

QkStatsResult qk_stats_run(const QkStatsOptions& o) {
  ATTN_CHECK(o.heatmap_block >= 1 && o.heatmap_block <= 4096,
             front_option_with(FrontOption::kHeatmapBlock, std::to_string(o.heatmap_block)) +
                 " must be between 1 and 4096");
  const bool heatmap_asked = !o.heatmap_layers.empty();
  ATTN_CHECK(!heatmap_asked || !o.out.empty(),
             std::string(front_option(FrontOption::kHeatmapLayers)) + " needs " +
                 front_option_with(FrontOption::kOut, "DIR") + " to write the heat maps into");

  SafetensorsFile file(o.file);
  std::vector<std::string> names;
  for (const auto& e : file.entries()) names.push_back(e.name);
  QkLayout layout = qk_layout_detect(names, {o.layout, o.query_pattern, o.key_pattern}, o.file);

  // Layers: all found, or the ones asked for.
  std::vector<int64_t> found;
  for (const auto& l : layout.layers) found.push_back(l.layer);
  if (!o.layers.empty()) {
    const std::string layers_opt = front_option(FrontOption::kLayers);
    const std::vector<int64_t> want = qk_list_parse(o.layers, layers_opt);
    std::vector<QkLayerSource> kept;
    for (int64_t l : want) {
      const auto it = std::find(found.begin(), found.end(), l);
      ATTN_CHECK(it != found.end(), layers_opt + ": layer " + std::to_string(l) + " is not in " +
                                        o.file + " (its layers: " + list_text(found) + ")");
      kept.push_back(layout.layers[static_cast<size_t>(it - found.begin())]);
    }
    layout.layers = kept;
  }
  std::vector<int64_t> selected;
  for (const auto& l : layout.layers) selected.push_back(l.layer);

  // Shapes (uniform over layers) and heads, from the header only.
  const QkLayerShape shape = qk_layer_shape(file, layout, layout.layers.front());
  for (const auto& src : layout.layers) {
    const QkLayerShape s = qk_layer_shape(file, layout, src);
    ATTN_CHECK(s.out == shape.out && s.in == shape.in,
               o.file + ": layer " + std::to_string(src.layer) +
                   " has a different shape from layer " +
                   std::to_string(layout.layers.front().layer) + "; analyse them separately with " +
                   front_option(FrontOption::kLayers));
  }
  ATTN_CHECK(shape.in >= 2, o.file + ": the model dimension D = " + std::to_string(shape.in) +
                                " is too small; the statistics need D >= 2");
  const QkHeads heads = qk_heads_resolve(shape.out, o.heads, o.head_size, file.metadata());

  // Heat maps: which layers and heads.
  QkAnalyzeOptions analyze{heads.heads, o.seed, 0, {}};
  std::vector<int64_t> heat_layers;
  if (!o.out.empty()) {
    const std::string layers_opt = front_option(FrontOption::kHeatmapLayers);
    const std::string heads_opt = front_option(FrontOption::kHeatmapHeads);
    heat_layers = heatmap_asked ? qk_list_parse(o.heatmap_layers, layers_opt) : selected;
    for (int64_t l : heat_layers) {
      ATTN_CHECK(std::find(selected.begin(), selected.end(), l) != selected.end(),
                 layers_opt + ": layer " + std::to_string(l) +
                     " is not analysed (layers: " + list_text(selected) + ")");
    }
    analyze.block_heads = qk_list_parse(o.heatmap_heads, heads_opt);
    for (int64_t h : analyze.block_heads) {
      ATTN_CHECK(h < heads.heads, heads_opt + ": head " + std::to_string(h) + " does not exist (" +
                                      std::to_string(heads.heads) + " heads: 0-" +
                                      std::to_string(heads.heads - 1) + ")");
    }
    out_dir_check(o.out);
  }
  const uint64_t weight_bytes = 8 * static_cast<uint64_t>(shape.out * shape.in) *
                                (layout.kind == QkLayoutKind::FusedConv1D ? 5 : 2);
  memory_check(weight_bytes + qk_layer_analyze_bytes(shape.out, shape.in),
               "the query-key products of one layer (D = " + std::to_string(shape.in) + ")",
               "use a machine with more memory");

  threads_configure(o.threads);
  std::vector<QkLayerResult> results;
  BlasThreadsScope blas_threads;  // the products are the work: give them the thread budget
  Progress progress("qk-stats", static_cast<int64_t>(layout.layers.size()));
  for (const auto& src : layout.layers) {
    const QkLayerWeights w = qk_layer_load(file, layout, src);
    const bool heat =
        std::find(heat_layers.begin(), heat_layers.end(), src.layer) != heat_layers.end();
    QkAnalyzeOptions a = analyze;
    a.block = heat ? o.heatmap_block : 0;
    results.push_back(qk_layer_analyze(w, a));
    progress.add(1);
  }
  progress.finish();

  QkStatsResult r;
  r.info = {o.file,      layout.name,     layout.prefix, shape.in,
            heads.heads, heads.head_size, heads.source,  o.seed};
  r.json = qk_report_json(r.info, results);
  const std::string& json = r.json;
  if (!o.out.empty()) {
    const fs::path dir(o.out);
    dir_create(dir);
    const std::string csv = qk_report_csv(results);
    for (const auto& [name, text] :
         {std::pair{"qk_stats.csv", &csv}, std::pair{"qk_stats.json", &json}}) {
      atomic_file_write((dir / name).string(), *text);
    }
    if (!heat_layers.empty()) dir_create(dir / "heatmaps");
    for (const auto& layer : results) {
      if (layer.block > 0)
        heatmaps_write(dir / "heatmaps", fs::path(o.file).filename().string(), layer);
    }
  }
  r.heatmaps = !heat_layers.empty();
  r.layers = std::move(results);
  return r;
}

}  // namespace attn
