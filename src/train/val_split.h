// The validation split of a fixed training set (train.val_fraction), one rule for every
// model (ridge and gradient-trained alike): of n samples the last
//   n_val = fraction > 0 ? max(1, round(fraction · n)) : 0
// are held out (round half away from zero, std::llround), the first n − n_val are fitted.
// The shipped specs resolve the same as under the earlier rules (ridge round(f·n), neural
// max(1, ceil(f·n))): their ridge f·n are not integers, their neural f·n are.
#pragma once

#include <cstdint>

namespace attn {

int64_t val_split_count(double fraction, int64_t n);

}  // namespace attn
