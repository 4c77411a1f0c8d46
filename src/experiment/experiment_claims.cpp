// The claims of an output directory, decided on its stored runs (experiment_claims.h).
#include "experiment/experiment_claims.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "experiment/experiment_dir.h"
#include "experiment/selection.h"
#include "experiment/spec_fields.h"
#include "experiment/store.h"

namespace attn {

std::vector<ClaimResult> experiment_claims(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string spec_path = (fs::path(dir) / "spec.json").string();
  std::ifstream in(spec_path);
  if (!in) throw IoError(spec_path + ": cannot be read; run the spec into " + dir + " first");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw IoError(spec_path + ": not a JSON object; rerun `attnlab export` to rewrite it");
  std::vector<ClaimSpec> claims;
  if (j.contains("claims"))
    for (const auto& c : j.at("claims")) claims.push_back(claim_from_json(c));
  if (claims.empty()) return {};
  const SelectSpec select = j.contains("select") ? select_from_json(j.at("select")) : SelectSpec{};
  const std::vector<std::string> swept = j.contains("swept")
                                             ? j.at("swept").get<std::vector<std::string>>()
                                             : std::vector<std::string>{};
  const std::string store = (fs::path(dir) / "results.sqlite").string();
  if (!fs::exists(store))
    throw IoError(store + ": no results; run the spec into " + dir + " first");
  const auto runs = experiment_plan_runs(ResultsStore(store, StoreAccess::kRead));
  const auto claim_runs = select.active() ? selection_apply(select, swept, runs) : runs;
  std::vector<ClaimResult> out;
  for (const auto& claim : claims) out.push_back(claim_evaluate(claim, claim_runs));
  return out;
}

}  // namespace attn
