// The claim kinds' table (claim_kinds.h): one row per ClaimKind, in enum order.
#include "experiment/claim_kinds.h"

#include "experiment/claims_evidence.h"

namespace attn {

using namespace claims_detail;

namespace {

bool factor_at_least_one(const ClaimSpec& c) { return c.factor >= 1; }

}  // namespace

const KindTable<ClaimKindRow>& claim_kinds() {
  // Needs shared by several kinds (the messages are today's, word for word).
  static const ClaimNeed kNeedAB = {{"a", "b"}, "needs filters a = {...} and b = {...}"};
  static const ClaimNeed kNeedAlong = {{"along"}, "needs along = \"dotted.key\""};
  static const ClaimNeed kNeedThreshold = {{"threshold"}, "needs threshold = NUMBER"};
  static const ClaimNeed kNeedSlice = {
      {"slice"},
      "needs slice = \"NAME\": the runs' series METRIC_by_NAME hold the metric per slice value"};
  static const ClaimNeed kNeedLevel = {
      {"threshold"}, "needs threshold = NUMBER, the level a slice value's metric must reach"};
  static const ClaimNeed kNeedSize = {{"size", "threshold"},
                                      "needs size = \"dotted.key\" (the swept model size) and "
                                      "threshold = NUMBER (the goal's level)"};
  static const ClaimKindRow rows[] = {
      {ClaimKind::less_than, "less_than", {kNeedAB}, {"factor"}, less_than_claim,
       "mean(a) < factor x mean(b), paired by seed", "claim-less_than"},
      {ClaimKind::below, "below", {kNeedThreshold}, {}, level_claim,
       "the mean is below threshold", "claim-below"},
      {ClaimKind::above, "above", {kNeedThreshold}, {}, level_claim,
       "the mean is above threshold", "claim-above"},
      {ClaimKind::decreasing, "decreasing", {kNeedAlong}, {"margin"}, monotone_claim,
       "the mean falls from the first to the last value of along", "claim-decreasing"},
      {ClaimKind::increasing, "increasing", {kNeedAlong}, {"margin"}, monotone_claim,
       "the mean grows from the first to the last value of along", "claim-increasing"},
      {ClaimKind::ratio_increasing, "ratio_increasing", {kNeedAB, kNeedAlong}, {"margin"},
       monotone_claim,
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
      {ClaimKind::reach, "reach",
       {kNeedSlice, kNeedLevel,
        {{"reach"}, "needs reach = NUMBER, the slice value the reach is compared with"}},
       {"goal", "compare"}, reach_claim,
       "the largest slice value reaching the goal at it and every smaller one, against reach",
       "claim-reach"},
      {ClaimKind::reach_growth, "reach_growth",
       {kNeedSlice, kNeedLevel,
        {{"exponent"},
         "needs exponent = NUMBER, the theory's growth of log2(reach) per unit of along (e.g. 1 "
         "for a reach that doubles per layer), and a margin"},
        kNeedAlong},
       {"goal", "margin", "compare"}, reach_growth_claim,
       "the slope of log2(reach) on along matches exponent", "claim-reach_growth"},
      {ClaimKind::size_equals_along, "size_equals_along", {kNeedAlong, kNeedSize}, {"goal"},
       size_equals_along_claim,
       "the smallest size reaching the goal is the value of along, at every value",
       "claim-size_equals_along"},
  };
  static_assert(sizeof(rows) / sizeof(rows[0]) == kind_count<ClaimKind>,
                "every ClaimKind needs one row in claim_kinds.cpp, in enum order");
  static const KindTable<ClaimKindRow> table{rows, kind_count<ClaimKind>};
  return table;
}

const std::vector<std::string>& claim_common_keys() {
  static const std::vector<std::string> keys = {"id",    "text",       "type", "metric",
                                                "where", "confidence", "doc"};
  return keys;
}

std::vector<std::string> claim_size_keys(const std::string& size) {
  std::vector<std::string> keys;
  size_t start = 0;
  for (;;) {
    const size_t star = size.find('*', start);
    std::string key =
        size.substr(start, star == std::string::npos ? std::string::npos : star - start);
    const size_t first = key.find_first_not_of(' '), last = key.find_last_not_of(' ');
    keys.push_back(first == std::string::npos ? "" : key.substr(first, last - first + 1));
    if (star == std::string::npos) return keys;
    start = star + 1;
  }
}

}  // namespace attn
