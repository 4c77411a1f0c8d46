// Names what CLI11 could not place: an unknown subcommand or option. CLI11 checks required
// options before it reports leftovers, so `attnlab frobnicate` would say "A subcommand is
// required" and `attnlab data qsa --num 5` "--n is required"; these blame the wrong thing.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace attn {

// One line for the first argument `app` (after a failed parse) could not use, with a
// "did you mean" hint; "" when every argument was used.
std::string cli_unknown_argument(const CLI::App& app);

}  // namespace attn
