// Whole-number options of the CLI. CLI11 converts "-1" into a uint64_t by wrapping and
// saturates out-of-range values silently; whole_number() refuses both, before conversion,
// with one line naming the option and the value. Shared by every subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace attn {

// Accepts decimal digits only (no sign, no hex or octal, no exponent) whose value lies in
// [lo, hi]; for the option's own type pass its range (e.g. hi = INT32_MAX for an int).
CLI::Validator whole_number(uint64_t lo, uint64_t hi = UINT64_MAX);

}  // namespace attn
