// The table of axis words (axis_words.h): a spec key or a metric's base name, its words with
// the paper's letter, and (metrics) its range.
#include "experiment/axis_words.h"

#include <array>
#include <string_view>

namespace attn {
namespace {

struct WordsRow {
  std::string_view key;
  std::string_view words;
  MetricRange range;  // metrics: what a band is clipped to; keys: any
};

constexpr MetricRange kAny = MetricRange::any, kNonneg = MetricRange::nonnegative,
                      kUnit = MetricRange::unit_interval;

// Keys first (the letters of DESIGN.md: n samples, N sequence length, d token dimension,
// m embedding dimension, H heads, M random features, q sparsity, p bits, λ ridge penalty), then
// the metric rows' base names (every row of train/metric_table.h, and the loss).
constexpr std::array kWords = {
    WordsRow{"task.name", "task", kAny},
    WordsRow{"task.N", "sequence length N", kAny},
    WordsRow{"task.d", "token dimension d", kAny},
    WordsRow{"task.q", "sparsity q", kAny},
    WordsRow{"task.p", "degree p", kAny},
    WordsRow{"task.M", "modulus M", kAny},
    WordsRow{"task.k", "hops k", kAny},
    WordsRow{"model.name", "model", kAny},
    WordsRow{"model.m", "embedding dimension m", kAny},
    WordsRow{"model.attention.m", "attention embedding dimension m", kAny},
    WordsRow{"model.m_prime", "embedding dimension m'", kAny},
    WordsRow{"model.M", "random features M", kAny},
    WordsRow{"model.heads", "heads H", kAny},
    WordsRow{"model.bits", "bits of precision p", kAny},
    WordsRow{"model.width", "width", kAny},
    WordsRow{"model.hidden", "hidden width", kAny},
    WordsRow{"model.layers", "layers", kAny},
    WordsRow{"model.lambda", "ridge penalty λ", kAny},
    WordsRow{"model.construction", "construction", kAny},
    WordsRow{"model.activation", "activation", kAny},
    WordsRow{"train.n", "training samples n", kAny},
    WordsRow{"train.steps", "training steps", kAny},
    WordsRow{"train.lr", "learning rate", kAny},
    WordsRow{"eval.n", "test samples", kAny},
    WordsRow{"eval.instances", "evaluation instances", kAny},
    WordsRow{"step", "training step", kAny},
    WordsRow{"mse", "MSE", kNonneg},
    WordsRow{"nmse", "NMSE", kNonneg},
    WordsRow{"max_abs_err", "largest absolute error", kNonneg},
    WordsRow{"mean_max_pos_err", "mean largest position error", kNonneg},
    WordsRow{"max_pos_err", "largest position error", kNonneg},
    WordsRow{"success_rate", "success rate", kUnit},
    WordsRow{"accuracy", "accuracy", kUnit},
    WordsRow{"balanced_accuracy", "balanced accuracy", kUnit},
    WordsRow{"exact_match", "exact-match rate", kUnit},
    WordsRow{"token_accuracy", "token accuracy", kUnit},
    WordsRow{"token_error", "token error rate", kUnit},
    WordsRow{"disj_accuracy", "disjointness accuracy", kUnit},
    WordsRow{"loss", "loss", kNonneg},
};

// A stored metric's prefix and its words.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kPrefixes = {
    {{"test_", "test "}, {"train_", "training "}, {"val_", "validation "}}};

const WordsRow* find_row(std::string_view key) {
  for (const auto& row : kWords)
    if (row.key == key) return &row;
  return nullptr;
}

// A stored metric split as PREFIX BASE [_by_LABEL] with BASE a row of the table.
struct MetricParts {
  const WordsRow* row = nullptr;
  std::string_view prefix_words, by;
};

MetricParts metric_parts(std::string_view name) {
  MetricParts parts;
  for (const auto& [prefix, words] : kPrefixes)
    if (name.substr(0, prefix.size()) == prefix) {
      parts.prefix_words = words;
      name.remove_prefix(prefix.size());
      break;
    }
  if (const size_t at = name.find("_by_"); at != std::string_view::npos) {
    parts.by = name.substr(at + 4);
    name = name.substr(0, at);
  }
  parts.row = find_row(name);
  return parts;
}

}  // namespace

std::string axis_words(const std::string& key) {
  if (const WordsRow* row = find_row(key); row && row->range == kAny)
    return std::string(row->words);
  const MetricParts parts = metric_parts(key);
  if (!parts.row || parts.row->range == kAny) return key;
  std::string out = std::string(parts.prefix_words) + std::string(parts.row->words);
  if (!parts.by.empty()) out += " by " + std::string(parts.by);
  return out;
}

std::string axis_words_list(const std::string& keys) {
  std::string out, key;
  auto flush = [&] {
    const size_t a = key.find_first_not_of(' '), b = key.find_last_not_of(' ');
    if (a != std::string::npos)
      out += (out.empty() ? "" : ", ") + axis_words(key.substr(a, b - a + 1));
    key.clear();
  };
  for (char ch : keys) ch == ',' ? flush() : void(key += ch);
  flush();
  return out;
}

MetricRange metric_range_of(const std::string& metric) {
  const MetricParts parts = metric_parts(metric);
  return parts.row ? parts.row->range : kAny;
}

bool axis_words_has_metric(const std::string& base) {
  const WordsRow* row = find_row(base);
  return row && row->range != kAny;
}

}  // namespace attn
