// Edit-distance suggestions for misspelt keys, tasks and choices.
#include "core/suggest.h"

#include <algorithm>
#include <cctype>

namespace attn {

int edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of
  // adjacent letters each cost 1 (case-insensitive).
  auto same = [](char x, char y) { return std::tolower(x) == std::tolower(y); };
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> dist(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) dist[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) dist[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      dist[i][j] = std::min({dist[i - 1][j] + 1, dist[i][j - 1] + 1,
                             dist[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        dist[i][j] = std::min(dist[i][j], dist[i - 2][j - 2] + 1);
    }
  }
  return dist[n][m];
}

std::string suggest_closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = 1 << 30;
  for (const auto& c : candidates) {
    const int dist = edit_distance(word, c);
    if (dist < best_distance) {
      best_distance = dist;
      best = c;
    }
  }
  // Plausible: at most a third of the longer word differs (and at least one edit allowed).
  const int allowed = std::max<int>(1, static_cast<int>(std::max(word.size(), best.size())) / 3);
  return best_distance <= allowed ? best : std::string();
}

std::string join_names(const std::vector<std::string>& names, const std::string& separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = suggest_closest(word, candidates);
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

}  // namespace attn
