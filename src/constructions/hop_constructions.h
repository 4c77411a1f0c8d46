// The hop task's constructions (hop_constructions.cpp), for the registry in construction.cpp:
//   induction_head  the two-layer induction head (previous-token head, then a match head with
//                   the rightmost match winning): hop_1 at every position, whatever the k token
//   hop_doubling    the k-hop circuit by pointer doubling with model.layers layers (0: the
//                   fewest that cover task.k_max), exact for k <= 2^(layers − 1) − 1
#pragma once

#include <memory>

#include "constructions/construction.h"

namespace attn {

std::unique_ptr<Construction> induction_head_make(const ConstructionSetup& s);
std::unique_ptr<Construction> hop_doubling_make(const ConstructionSetup& s);

}  // namespace attn
