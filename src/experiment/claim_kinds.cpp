// The claim kinds' table (claim_kinds.h): one row per ClaimKind, in enum order.
#include "experiment/claim_kinds.h"

#include "core/error.h"
#include "experiment/claims_evidence.h"

namespace attn {
namespace {

using namespace claims_detail;

const ClaimNeed kNeedAB = {{"a", "b"}, "needs filters a = {...} and b = {...}"};
const ClaimNeed kNeedAlong = {{"along"}, "needs along = \"dotted.key\""};
const ClaimNeed kNeedThreshold = {{"threshold"}, "needs threshold = NUMBER"};
const ClaimNeed kNeedSize = {{"size", "threshold"},
                             "needs size = \"dotted.key\" (the swept model size) and threshold = "
                             "NUMBER (the goal's level)"};

bool factor_at_least_one(const ClaimSpec& c) { return c.factor >= 1; }

const ClaimKindRow* rows() {
  static const ClaimKindRow table[] = {
      {ClaimKind::less_than, "less_than", {kNeedAB}, {"factor"}, less_than_claim,
       "mean(a) < factor x mean(b), paired by seed", "claim-less_than"},
      {ClaimKind::below, "below", {kNeedThreshold}, {}, level_claim,
       "the mean is below threshold", "claim-below"},
      {ClaimKind::above, "above", {kNeedThreshold}, {}, level_claim,
       "the mean is above threshold", "claim-above"},
      {ClaimKind::decreasing, "decreasing", {kNeedAlong}, {}, monotone_claim,
       "the mean falls from the first to the last value of along", "claim-decreasing"},
      {ClaimKind::increasing, "increasing", {kNeedAlong}, {}, monotone_claim,
       "the mean grows from the first to the last value of along", "claim-increasing"},
      {ClaimKind::ratio_increasing, "ratio_increasing", {kNeedAB, kNeedAlong}, {}, monotone_claim,
       "mean(a) / mean(b) grows along along", "claim-ratio_increasing"},
      {ClaimKind::flat, "flat",
       {{{"threshold"}, "needs threshold = the largest allowed spread (max - min) of the means"},
        kNeedAlong},
       {}, flat_claim, "every two values of along differ by at most threshold", "claim-flat"},
      {ClaimKind::size_increasing, "size_increasing", {kNeedAlong, kNeedSize}, {"goal"},
       size_increasing_claim, "the smallest size reaching the goal grows along along",
       "claim-size_increasing"},
      {ClaimKind::size_flat, "size_flat",
       {kNeedAlong, kNeedSize,
        {{"factor"},
         "needs factor = NUMBER >= 1, the largest allowed ratio of the largest to the smallest "
         "needed size",
         factor_at_least_one}},
       {"goal"}, size_flat_claim,
       "the smallest size reaching the goal varies by at most factor along along",
       "claim-size_flat"},
      {ClaimKind::size_ratio_increasing, "size_ratio_increasing", {kNeedAB, kNeedAlong, kNeedSize},
       {"goal"}, size_ratio_claim, "the ratio of the sizes a and b need grows along along",
       "claim-size_ratio_increasing"},
      {ClaimKind::power_law, "power_law",
       {{{"exponent"},
         "needs exponent = NUMBER, the theory's rate (e.g. -0.5 for an error falling like "
         "n^-1/2), and a margin"},
        kNeedAlong},
       {"margin", "compare"}, power_law_claim,
       "the slope of log(metric) on log(along) matches exponent", "claim-power_law"},
  };
  static_assert(sizeof(table) / sizeof(table[0]) == kClaimKindCount,
                "every ClaimKind needs one row in claim_kinds.cpp, in enum order");
  return table;
}

}  // namespace

const ClaimKindRow* claim_kinds() { return rows(); }

const ClaimKindRow& claim_kind_row(ClaimKind kind) {
  const size_t k = static_cast<size_t>(kind);
  ATTN_ASSERT(k < kClaimKindCount && rows()[k].kind == kind);
  return rows()[k];
}

const char* claim_kind_name(ClaimKind kind) { return claim_kind_row(kind).name; }

const ClaimKind* claim_kind_find(const std::string& name) {
  for (size_t k = 0; k < kClaimKindCount; ++k)
    if (name == rows()[k].name) return &rows()[k].kind;
  return nullptr;
}

std::vector<std::string> claim_kind_names() {
  std::vector<std::string> names;
  for (size_t k = 0; k < kClaimKindCount; ++k) names.emplace_back(rows()[k].name);
  return names;
}

const std::vector<std::string>& claim_common_keys() {
  static const std::vector<std::string> keys = {"id",    "text",       "type", "metric",
                                                "where", "confidence", "doc"};
  return keys;
}

}  // namespace attn
