// The claims of an output directory, decided on its stored runs (experiment_claims.h).
#include "experiment/experiment_claims.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "experiment/experiment_dir.h"
#include "experiment/selection.h"
#include "experiment/spec_fields.h"
#include "experiment/store.h"

namespace attn {

std::vector<ClaimResult> experiment_claims(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(dir) / "results.sqlite").string();
  if (!fs::exists(path)) throw IoError(path + ": no results; run the spec into " + dir + " first");
  // The spec and swept keys the store was last run with (its metadata, as export writes them).
  const ResultsStore store(path, StoreAccess::kRead);
  const std::string text = store.meta("spec_json");
  const nlohmann::json spec = nlohmann::json::parse(text.empty() ? "{}" : text, nullptr, false);
  std::vector<ClaimSpec> claims;
  if (spec.is_object() && spec.contains("claims"))
    for (const auto& c : spec.at("claims")) claims.push_back(claim_from_json(c));
  if (claims.empty()) return {};
  const SelectSpec select =
      spec.contains("select") ? select_from_json(spec.at("select")) : SelectSpec{};
  const std::string swept_text = store.meta("swept");
  const std::vector<std::string> swept =
      swept_text.empty() ? std::vector<std::string>{}
                         : nlohmann::json::parse(swept_text).get<std::vector<std::string>>();
  const auto runs = experiment_plan_runs(store);
  const auto claim_runs = select.active() ? selection_apply(select, swept, runs) : runs;
  return claims_evaluate(claims, claim_runs);
}

}  // namespace attn
