// The probe table (see probes.h) and the look-ups over it.
#include "analysis/probes.h"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "analysis/probe_qk_code_identity.h"
#include "analysis/probe_qk_identity.h"
#include "analysis/probe_rank_pair.h"
#include "core/error.h"
#include "core/suggest.h"

namespace attn {
namespace {

std::vector<std::string> probe_names_all() {
  std::vector<std::string> names;
  for (const ProbeRow& row : probe_table()) names.push_back(row.name);
  return names;
}

// "mlp" or "rfa or brfa".
std::string alternatives(const std::vector<std::string>& names) {
  return join_names(names, " or ");
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace

const std::vector<ProbeRow>& probe_table() {
  static const ProbeRow rows[] = {
      {.kind = ProbeKind::kRankPair,
       .name = "rank_pair",
       .description = "Thm 10's rank pair on the trained first layer: two inputs with equal "
                      "outputs whose qSA targets differ by 2/q (Sanford et al. 2023, C7)",
       .models = {"mlp"},
       .tasks = {"qsa"},
       .eval_instances = "rank_pair",
       .scalars = {"rank_pair_applies", "rank_pair_output_gap", "rank_pair_target_gap",
                   "rank_pair_certified_error", "rank_pair_null_residual"},
       .run = probe_rank_pair,
       .doc = "docs/sanford2023.md#e3-rank-pair"},
      {.kind = ProbeKind::kQkIdentity,
       .name = "qk_identity",
       .description = "how close each trained attention layer's query-key product is to c*I, "
                      "beside a Gaussian null of the same norms (Fu et al. 2023 4.4)",
       .models = {"attention", "transformer", "gpt2"},
       .tasks = {},
       .eval_instances = "",
       .scalars = {"qk_identity_applies", "qk_identity_cosine", "qk_identity_cosine_null",
                   "qk_identity_c_star", "qk_identity_residual", "qk_identity_head_cosine_max"},
       .run = probe_qk_identity,
       .doc = "docs/qk-analysis.md#qk-identity"},
      {.kind = ProbeKind::kQkCodeIdentity,
       .name = "qk_code_identity",
       .description = "the trained query-key product on token_selection's raw positional "
                      "codes (through a linear phi) against c*I, beside a Gaussian null "
                      "(Wang et al. 2024's ground truth is a multiple of I there)",
       .models = {"attention"},
       .tasks = {"token_selection"},
       .eval_instances = "",
       .scalars = {"qk_code_identity_applies", "qk_code_identity_cosine",
                   "qk_code_identity_cosine_null", "qk_code_identity_c_star",
                   "qk_code_identity_residual", "qk_code_identity_head_cosine_max"},
       .run = probe_qk_code_identity,
       .doc = "docs/sep2025.md#e3b-alignment"},
  };
  static_assert(std::extent_v<decltype(rows)> == static_cast<size_t>(ProbeKind::kCount),
                "probe_table(): every ProbeKind needs exactly one row");
  static const std::vector<ProbeRow> table = [] {
    for (size_t k = 0; k < std::size(rows); ++k)
      ATTN_ASSERT(rows[k].kind == static_cast<ProbeKind>(k), "probe_table(): row k is kind k");
    return std::vector<ProbeRow>(std::begin(rows), std::end(rows));
  }();
  return table;
}

const ProbeRow& probe_row(ProbeKind kind) {
  const auto k = static_cast<size_t>(kind);
  ATTN_ASSERT(k < probe_table().size(), "probe_row: not a probe kind");
  return probe_table()[k];
}

std::vector<ProbeKind> probe_kinds() {
  std::vector<ProbeKind> kinds;
  for (const ProbeRow& row : probe_table()) kinds.push_back(row.kind);
  return kinds;
}

ProbeKind probe_find(const std::string& name) {
  for (const ProbeRow& row : probe_table())
    if (name == row.name) return row.kind;
  const std::vector<std::string> names = probe_names_all();
  throw UserError("eval.probes: unknown probe '" + name + "'" + did_you_mean(name, names) +
                  "; probes: " + join_names(names));
}

std::vector<ProbeKind> probes_parse(const std::string& names) {
  std::vector<ProbeKind> kinds;
  if (trim(names).empty()) return kinds;
  size_t at = 0;
  for (;;) {
    const size_t comma = names.find(',', at);
    const std::string name =
        trim(names.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    ATTN_CHECK(!name.empty(), "eval.probes: an empty probe name in '" + names +
                                  "'; write a list of names, e.g. probes = [\"rank_pair\"]");
    const ProbeKind kind = probe_find(name);
    ATTN_CHECK(std::find(kinds.begin(), kinds.end(), kind) == kinds.end(),
               "eval.probes names " + name + " twice; name each probe once");
    kinds.push_back(kind);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return kinds;
}

std::string probes_text(const std::vector<ProbeKind>& kinds) {
  std::vector<std::string> names;
  for (ProbeKind kind : kinds) names.push_back(probe_row(kind).name);
  return join_names(names);
}

void probe_check(ProbeKind kind, const std::string& model, const std::string& task,
                 const std::string& eval_instances) {
  const ProbeRow& row = probe_row(kind);
  auto allows = [](const std::vector<std::string>& names, const std::string& name) {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
  };
  if (allows(row.models, model) && allows(row.tasks, task) &&
      (row.eval_instances.empty() || row.eval_instances == eval_instances))
    return;
  std::vector<std::string> needs, here;
  if (!row.models.empty()) needs.push_back("model = " + alternatives(row.models));
  if (!row.tasks.empty()) needs.push_back("task = " + alternatives(row.tasks));
  if (!row.eval_instances.empty())
    needs.push_back("eval.instances = \"" + row.eval_instances + "\"");
  const std::string last = needs.size() > 1 ? " and " + needs.back() : "";
  if (needs.size() > 1) needs.pop_back();
  throw UserError("eval.probes: " + std::string(row.name) + " needs " + join_names(needs) + last +
                  " (here model = " + model + ", task = " + task + ", eval.instances = \"" +
                  eval_instances + "\"); remove it from eval.probes or change the run (" +
                  row.doc + ")");
}

void probe_run(ProbeKind kind, const ProbeInput& in, FitLog& log) { probe_row(kind).run(in, log); }

}  // namespace attn
