// Whole-number options of the CLI: see cli_numbers.h.
#include "apps/cli_numbers.h"

#include <charconv>
#include <system_error>

namespace attn {
namespace {

std::string whole_number_problem(const std::string& text, uint64_t lo, uint64_t hi) {
  const std::string range =
      "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  bool digits = !text.empty();
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (!digits) return "'" + text + "' is not " + range + " (decimal digits only)";
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || end != text.data() + text.size() || v > hi)
    return text + " is too large: give " + range;
  if (v < lo) return text + " is too small: give " + range;
  return "";
}

}  // namespace

CLI::Validator whole_number(uint64_t lo, uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) { return whole_number_problem(text, lo, hi); },
      "", "whole_number");
}

}  // namespace attn
