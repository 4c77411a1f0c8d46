// "Did you mean" hints for misspelt names (edit distance).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attn {

// Edit distance between a and b (adjacent swaps count as one edit; case-insensitive).
int edit_distance(std::string_view a, std::string_view b);

// The closest candidate to `word`, or "" when none is plausibly a misspelling.
std::string suggest_closest(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c": names joined for a message.
std::string join_names(const std::vector<std::string>& names, const std::string& separator = ", ");

// " (did you mean 'x'?)" or "" — ready to append to an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace attn
