// The qk-stats report texts (see qk_report.h): terminal table, CSV, JSON.
#include "analysis/qk_report.h"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/version.h"

namespace attn {
namespace {

constexpr const char* kConvention =
    "A_l = W_q^T W_k and A_{l,h} = (W_q^h)^T W_k^h, D x D in the residual-stream (input) space, "
    "with W_q, W_k stored (out, in) and head h = rows [h*hs, (h+1)*hs); a GPT-2 Conv1D c_attn "
    "weight (D, 3D) gives W_q = W[:, 0:D]^T and W_k = W[:, D:2D]^T. The 1/sqrt(hs) score scale and "
    "the biases are not included.";

void stats_fields(nlohmann::ordered_json& j, const QkMatrixStats& s, const QkMatrixStats& null) {
  j["c_star"] = s.c_star;
  j["identity_cosine"] = s.identity_cosine;
  j["diag_ratio"] = s.diag_ratio;
  j["abs_diag_ratio"] = s.abs_diag_ratio;
  j["positive_diag_fraction"] = s.positive_diag_fraction;
  j["residual"] = s.residual;
  j["frobenius"] = s.frobenius;
  j["null_c_star"] = null.c_star;
  j["null_identity_cosine"] = null.identity_cosine;
  j["null_diag_ratio"] = null.diag_ratio;
  j["null_abs_diag_ratio"] = null.abs_diag_ratio;
  j["null_positive_diag_fraction"] = null.positive_diag_fraction;
  j["null_residual"] = null.residual;
}

std::string csv_row(const std::string& scope, int64_t layer, const std::string& head,
                    const QkMatrixStats& s, const QkMatrixStats& n) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", scope, layer, head,
                     s.c_star, s.identity_cosine, s.diag_ratio, s.abs_diag_ratio,
                     s.positive_diag_fraction, s.residual, s.frobenius, n.c_star, n.identity_cosine,
                     n.diag_ratio, n.abs_diag_ratio, n.positive_diag_fraction, n.residual);
}

}  // namespace

std::string qk_report_table(const QkReportInfo& info, const std::vector<QkLayerResult>& layers) {
  std::string s = fmt::format("qk-stats {}\n", info.file);
  s += fmt::format("layout {}{}, {} layers, D = {}, {} heads x {} (from {}), null seed {}\n",
                   info.layout, info.prefix.empty() ? "" : " (prefix '" + info.prefix + "')",
                   layers.size(), info.D, info.heads, info.head_size, info.heads_source, info.seed);
  s += "A = W_q^T W_k summed over heads; null: Gaussian W_q, W_k with the same norms\n";
  s += fmt::format("{:>5} {:>11} {:>9} {:>10} {:>9} {:>9} {:>9} {:>10} {:>13}\n", "layer", "c*",
                   "cos(A,I)", "diag ratio", "pos diag", "residual", "null cos", "null ratio",
                   "head cos mean");
  for (const auto& r : layers) {
    double head_cos = 0.0;
    for (const auto& h : r.head_results) head_cos += h.stats.identity_cosine;
    head_cos /= static_cast<double>(std::max<size_t>(1, r.head_results.size()));
    s += fmt::format(
        "{:>5} {:>11.4g} {:>9.4f} {:>10.4g} {:>9.3f} {:>9.4f} {:>9.4f} {:>10.4g} {:>13.4f}\n",
        r.layer, r.stats.c_star, r.stats.identity_cosine, r.stats.diag_ratio,
        r.stats.positive_diag_fraction, r.stats.residual, r.null_stats.identity_cosine,
        r.null_stats.diag_ratio, head_cos);
  }
  return s;
}

std::string qk_report_csv(const std::vector<QkLayerResult>& layers) {
  std::string s =
      "scope,layer,head,c_star,identity_cosine,diag_ratio,abs_diag_ratio,positive_diag_fraction,"
      "residual,"
      "frobenius,null_c_star,null_identity_cosine,null_diag_ratio,null_abs_diag_ratio,"
      "null_positive_diag_fraction,null_residual\n";
  for (const auto& r : layers) s += csv_row("layer", r.layer, "", r.stats, r.null_stats);
  for (const auto& r : layers) {
    for (const auto& h : r.head_results)
      s += csv_row("head", r.layer, std::to_string(h.head), h.stats, h.null_stats);
  }
  return s;
}

std::string qk_report_json(const QkReportInfo& info, const std::vector<QkLayerResult>& layers) {
  nlohmann::ordered_json j;
  j["tool"] = "attnlab qk-stats";
  j["version"] = std::string(kVersion) + " (" + kGitCommit + ")";
  j["file"] = info.file;
  j["layout"] = info.layout;
  j["prefix"] = info.prefix;
  j["D"] = info.D;
  j["num_heads"] = info.heads;
  j["head_size"] = info.head_size;
  j["heads_source"] = info.heads_source;
  j["seed"] = info.seed;
  j["convention"] = kConvention;
  auto& out_layers = j["layers"] = nlohmann::ordered_json::array();
  auto& out_heads = j["heads"] = nlohmann::ordered_json::array();
  for (const auto& r : layers) {
    nlohmann::ordered_json l;
    l["layer"] = r.layer;
    stats_fields(l, r.stats, r.null_stats);
    out_layers.push_back(std::move(l));
    for (const auto& h : r.head_results) {
      nlohmann::ordered_json e;
      e["layer"] = r.layer;
      e["head"] = h.head;
      stats_fields(e, h.stats, h.null_stats);
      out_heads.push_back(std::move(e));
    }
  }
  // Replace invalid UTF-8 (a file name) instead of throwing.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace attn
