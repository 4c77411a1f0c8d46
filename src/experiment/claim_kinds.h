// Claim kinds: the enum ClaimKind and one table row per kind (claim_kinds.cpp) holding
// everything a kind is: its name in a spec, the [[claim]] keys it needs (with the message
// when one is missing) and the ones it may use, the function that decides it, a one-line
// description and its paragraph in docs/spec-format.md. The spec loader validates a claim
// from its row, claim_evaluate calls the row's function; nothing else dispatches on a kind.
//
// Adding a kind: an enumerator before kCount, its row (a static_assert counts the rows), its
// evaluate function (claims*.cpp), its test (tests/test_claims.cpp) and its row in the claim
// types table of docs/spec-format.md (tests/test_claim_kinds.cpp checks every row is
// complete and documented).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "experiment/kind_table.h"

namespace attn {

struct ClaimSpec;
struct ClaimCell;
struct ClaimResult;
struct StoredRun;

enum class ClaimKind {
  less_than, below, above, decreasing, increasing, ratio_increasing, flat, size_increasing,
  size_flat, size_ratio_increasing, power_law, reach, reach_growth, size_equals_along,
  kCount  // kCount: the number of kinds, not a kind
};

// One requirement of a kind, checked in row order after the type, metric and text: each of
// `keys` must be given (a string or filter non-empty, a number present), and `holds`, when
// set, must accept the claim. `message` follows "claim 'ID' (KIND) ".
struct ClaimNeed {
  std::vector<std::string> keys;
  std::string message;
  bool (*holds)(const ClaimSpec&) = nullptr;
};

// Decides a claim over the stored runs (claims.h); with `cells`, also records the numbers.
using ClaimEvaluate = ClaimResult (*)(const ClaimSpec&, const std::vector<StoredRun>&,
                                      std::vector<ClaimCell>*);

struct ClaimKindRow {
  ClaimKind kind;
  const char* name;                   // the spelling in a spec and in spec.json
  std::vector<ClaimNeed> needs;       // its required keys, in the order they are checked
  std::vector<std::string> optional;  // keys it may use besides needs and the common keys
  ClaimEvaluate evaluate;
  const char* description;  // one line: what PASS means
  const char* doc_anchor;   // <a id="..."> in docs/spec-format.md (its row of the types table)
};

// Every row, indexed by ClaimKind: claim_kinds().row(kind), .name(kind), .find(text), .names().
const KindTable<ClaimKindRow>& claim_kinds();
// Keys every kind may use: id, text, type, metric, where, confidence, doc.
const std::vector<std::string>& claim_common_keys();
// The keys a size claim's `size` names: "model.m", or a product "model.heads * model.m *
// model.bits" (spaces around '*' optional), in order; an empty factor is kept as "".
std::vector<std::string> claim_size_keys(const std::string& size);

}  // namespace attn
