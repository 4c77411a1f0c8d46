// Query/key weight layouts (see qk_layout.h): pattern matching, detection, head counts,
// and loading one layer as W_q, W_k of shape (out, in) = (H·hs, D), row-major doubles.
#include "analysis/qk_layout.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/error.h"
#include "core/front_option.h"

namespace attn {
namespace {

constexpr const char* kBertQuery = "encoder.layer.{l}.attention.self.query.weight";
constexpr const char* kBertKey = "encoder.layer.{l}.attention.self.key.weight";
constexpr const char* kGpt2Fused = "h.{l}.attn.c_attn.weight";
constexpr const char* kLayerMark = "{l}";

// How the front end spells an option, alone or set to a value (core/front_option.h).
std::string opt(FrontOption option) { return front_option(option); }
std::string opt(FrontOption option, const std::string& value) {
  return front_option_with(option, value);
}
const FrontOption kQp = FrontOption::kQueryPattern, kKp = FrontOption::kKeyPattern;
const FrontOption kLayoutOpt = FrontOption::kLayout, kHeadsOpt = FrontOption::kHeads;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void pattern_check(const std::string& pattern, const std::string& option) {
  const auto first = pattern.find(kLayerMark);
  ATTN_CHECK(first != std::string::npos && pattern.find(kLayerMark, first + 1) == std::string::npos,
             option + " '" + pattern + "' must contain {l} exactly once (the layer number), e.g. "
             "'model.layers.{l}.self_attn.q_proj.weight'");
}

// Name -> (layer, prefix) matches of one pattern: layer -> name, plus the prefixes seen.
struct Matches {
  std::map<int64_t, std::string> names;
  std::set<std::string> prefixes;
};

Matches pattern_matches(const std::string& pattern, const std::vector<std::string>& names) {
  Matches m;
  for (const auto& name : names) {
    int64_t layer = 0;
    std::string prefix;
    if (qk_pattern_match(pattern, name, &layer, &prefix)) {
      m.names[layer] = name;
      m.prefixes.insert(prefix);
    }
  }
  return m;
}

std::string join_prefixes(const std::set<std::string>& prefixes) {
  std::string s;
  for (const auto& p : prefixes) s += (s.empty() ? "'" : ", '") + p + "'";
  return s;
}

// A few tensor names, attention-looking ones first, for "nothing matched" messages.
std::string name_sample(const std::vector<std::string>& names) {
  std::vector<std::string> pick;
  for (const char* hint : {"attn", "attention", "query", "q_proj", "qkv"}) {
    for (const auto& n : names) {
      if (pick.size() < 4 && n.find(hint) != std::string::npos &&
          std::find(pick.begin(), pick.end(), n) == pick.end())
        pick.push_back(n);
    }
  }
  for (const auto& n : names) {
    if (pick.size() < 4 && std::find(pick.begin(), pick.end(), n) == pick.end()) pick.push_back(n);
  }
  std::string s;
  for (const auto& n : pick) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(none)" : s;
}

// Builds the layout from matches; empty layers if nothing matched.
QkLayout layout_build(const std::string& name, QkLayoutKind kind, const std::string& qp,
                      const std::string& kp, const std::vector<std::string>& names,
                      const std::string& label) {
  QkLayout layout;
  layout.name = name;
  layout.kind = kind;
  layout.query_pattern = qp;
  layout.key_pattern = kp;
  const Matches q = pattern_matches(qp, names);
  const Matches k = kind == QkLayoutKind::Separate ? pattern_matches(kp, names) : q;
  std::set<std::string> prefixes = q.prefixes;
  prefixes.insert(k.prefixes.begin(), k.prefixes.end());
  if (q.names.empty() && k.names.empty()) return layout;
  ATTN_CHECK(prefixes.size() == 1, label + ": the " + name + " pattern '" + qp +
                                       "' matches tensors under several prefixes (" +
                                       join_prefixes(prefixes) + "); put the prefix you want in " +
                                       opt(kQp) + "/" + opt(kKp));
  layout.prefix = *prefixes.begin();
  for (const auto& [layer, qname] : q.names) {
    const auto it = k.names.find(layer);
    ATTN_CHECK(it != k.names.end(), label + ": layer " + std::to_string(layer) +
                                        " has query weight " + qname +
                                        " but no key weight matching '" + kp + "'");
    layout.layers.push_back({layer, qname, it->second});
  }
  for (const auto& [layer, kname] : k.names) {
    ATTN_CHECK(q.names.count(layer), label + ": layer " + std::to_string(layer) +
                                         " has key weight " + kname +
                                         " but no query weight matching '" + qp + "'");
  }
  return layout;
}

int64_t metadata_int(const std::string& key, const std::string& text) {
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  ATTN_CHECK(used == text.size() && v >= 1 && v <= (1 << 20),
             "__metadata__." + key + " = '" + text.substr(0, 40) + "' is not a head count; give " +
                 opt(kHeadsOpt, "H") + " to override it");
  return v;
}

}  // namespace

bool qk_pattern_match(const std::string& pattern, const std::string& name, int64_t* layer,
                      std::string* prefix) {
  const auto mark = pattern.find(kLayerMark);
  if (mark == std::string::npos) return false;
  const std::string pre = pattern.substr(0, mark);
  const std::string post = pattern.substr(mark + 3);
  if (!ends_with(name, post)) return false;
  const size_t digits_end = name.size() - post.size();
  // Try every digit run ending at digits_end (1 to 9 digits, no leading zero).
  for (size_t len = 1; len <= 9 && len <= digits_end; ++len) {
    const size_t start = digits_end - len;
    if (!std::isdigit(static_cast<unsigned char>(name[start]))) break;
    if (len > 1 && name[start] == '0') continue;
    if (start < pre.size() || name.compare(start - pre.size(), pre.size(), pre) != 0) continue;
    const size_t head = start - pre.size();
    if (head > 0 && name[head - 1] != '.') continue;
    *layer = std::stoll(name.substr(start, len));
    *prefix = name.substr(0, head);
    return true;
  }
  return false;
}

QkLayout qk_layout_detect(const std::vector<std::string>& names, const QkLayoutOptions& o,
                          const std::string& label) {
  const bool patterns = !o.query_pattern.empty() || !o.key_pattern.empty();
  std::string layout = o.layout;
  if (layout == "auto" && patterns) layout = "custom";
  ATTN_CHECK(layout == "auto" || layout == "bert" || layout == "gpt2" || layout == "custom",
             opt(kLayoutOpt, layout) + " is not one of auto, bert, gpt2, custom");
  if (layout == "gpt2") {
    ATTN_CHECK(o.key_pattern.empty(),
               opt(kKp) + ": the gpt2 layout fuses q, k, v into one tensor; give only " + opt(kQp) +
                   " (the fused weight's name)");
    if (!o.query_pattern.empty()) pattern_check(o.query_pattern, opt(kQp));
    const std::string qp = o.query_pattern.empty() ? kGpt2Fused : o.query_pattern;
    QkLayout l = layout_build("gpt2", QkLayoutKind::FusedConv1D, qp, "", names, label);
    ATTN_CHECK(!l.layers.empty(), label + ": no tensor matches the gpt2 pattern '" + qp +
                                      "'; tensors include " + name_sample(names) +
                                      "; choose another " + opt(kLayoutOpt) + " or give " +
                                      opt(kQp));
    return l;
  }
  if (layout == "custom" || patterns) {
    ATTN_CHECK(!o.query_pattern.empty() && !o.key_pattern.empty(),
               opt(kLayoutOpt, layout) + " with custom names needs both " + opt(kQp) + " and " +
                   opt(kKp) + ", e.g. " + opt(kQp, "'layers.{l}.q.weight'") + " " +
                   opt(kKp, "'layers.{l}.k.weight'"));
    pattern_check(o.query_pattern, opt(kQp));
    pattern_check(o.key_pattern, opt(kKp));
    ATTN_CHECK(o.query_pattern != o.key_pattern,
               opt(kQp) + " and " + opt(kKp) + " are the same; for a fused q/k/v weight use " +
                   opt(kLayoutOpt, "gpt2"));
    QkLayout l = layout_build(layout == "bert" ? "bert" : "custom", QkLayoutKind::Separate,
                              o.query_pattern, o.key_pattern, names, label);
    ATTN_CHECK(!l.layers.empty(), label + ": no tensor matches " + opt(kQp) + " '" +
                                      o.query_pattern + "'; tensors include " + name_sample(names));
    return l;
  }
  QkLayout bert = layout_build("bert", QkLayoutKind::Separate, kBertQuery, kBertKey, names, label);
  if (layout == "bert") {
    ATTN_CHECK(!bert.layers.empty(), label + ": no tensor matches the bert pattern '" +
                                         std::string(kBertQuery) + "'; tensors include " +
                                         name_sample(names) + "; choose another " +
                                         opt(kLayoutOpt) + " or give " + opt(kQp) + "/" + opt(kKp));
    return bert;
  }
  QkLayout gpt2 = layout_build("gpt2", QkLayoutKind::FusedConv1D, kGpt2Fused, "", names, label);
  ATTN_CHECK(
      bert.layers.empty() || gpt2.layers.empty(),
      label + ": both the bert and the gpt2 layouts match; choose one with " + opt(kLayoutOpt));
  if (!bert.layers.empty()) return bert;
  if (!gpt2.layers.empty()) return gpt2;
  throw UserError(label + ": no query/key weights found (tried bert '" + std::string(kBertQuery) +
                  "' and gpt2 '" + kGpt2Fused + "'); tensors include " + name_sample(names) + " (" +
                  std::to_string(names.size()) + " in all); give " + opt(kLayoutOpt) + ", or " +
                  opt(kQp) + " and " + opt(kKp));
}

QkLayerShape qk_layer_shape(const SafetensorsFile& file, const QkLayout& layout,
                            const QkLayerSource& src) {
  const SafetensorsEntry* q = file.find(src.query_name);
  const SafetensorsEntry* k = file.find(src.key_name);
  ATTN_ASSERT(q != nullptr && k != nullptr, "layout names a tensor the file does not have");
  const std::string where = file.label() + ": layer " + std::to_string(src.layer) + ": ";
  for (const SafetensorsEntry* e : {q, k}) {
    ATTN_CHECK(e->dtype != SafetensorsDType::Other,
               where + e->name + " has dtype " + e->dtype_name +
                   "; only F64, F32, F16 and BF16 weights can be analysed");
    ATTN_CHECK(e->shape.size() == 2 && e->shape[0] >= 1 && e->shape[1] >= 1,
               where + e->name + " is not a 2-D weight matrix; check " + opt(kLayoutOpt) +
                   " or the patterns");
  }
  if (layout.kind == QkLayoutKind::FusedConv1D) {
    const int64_t D = q->shape[0];
    ATTN_CHECK(q->shape[1] == 3 * D, where + q->name + " has shape (" + std::to_string(D) + ", " +
                                         std::to_string(q->shape[1]) +
                                         "); a GPT-2 Conv1D c_attn weight is (D, 3D)");
    return {D, D};
  }
  ATTN_CHECK(q->shape == k->shape, where + "query " + q->name + " and key " + k->name +
                                       " have different shapes; they must both be (H·hs, D)");
  return {q->shape[0], q->shape[1]};
}

QkHeads qk_heads_resolve(int64_t out, int64_t heads, int64_t head_size,
                         const std::map<std::string, std::string>& metadata) {
  const std::string heads_text = opt(kHeadsOpt, std::to_string(heads));
  const std::string size_text = opt(FrontOption::kHeadSize, std::to_string(head_size));
  ATTN_CHECK(heads >= 0, heads_text + " must be at least 1");
  ATTN_CHECK(head_size >= 0, size_text + " must be at least 1");
  const std::string dims = "the query weight has " + std::to_string(out) + " output rows";
  if (heads > 0) {
    ATTN_CHECK(out % heads == 0, heads_text + " does not divide " + dims +
                                     "; give a head count that divides " + std::to_string(out));
    ATTN_CHECK(head_size == 0 || heads * head_size == out,
               heads_text + " × " + size_text + " is not " + std::to_string(out) + " (" + dims +
                   "); give only one of them");
    return {heads, out / heads, opt(kHeadsOpt)};
  }
  if (head_size > 0) {
    ATTN_CHECK(out % head_size == 0, size_text + " does not divide " + dims);
    return {out / head_size, head_size, opt(FrontOption::kHeadSize)};
  }
  for (const char* key : {"num_attention_heads", "n_head", "num_heads"}) {
    const auto it = metadata.find(key);
    if (it == metadata.end()) continue;
    const int64_t h = metadata_int(key, it->second);
    ATTN_CHECK(out % h == 0, "__metadata__." + std::string(key) + " = " + it->second +
                                 " does not divide " + dims + "; give " + opt(kHeadsOpt, "H") +
                                 " to override it");
    return {h, out / h, "__metadata__." + std::string(key)};
  }
  throw UserError("the head count cannot be read from the weights alone (" + dims +
                  ", e.g. 768 is 12 heads of 64 or 8 of 96) and the file's metadata does not say; "
                  "give " +
                  opt(kHeadsOpt, "H") + " (BERT-base and GPT-2 small: " + opt(kHeadsOpt, "12") +
                  ") or " + opt(FrontOption::kHeadSize, "S"));
}

QkLayerWeights qk_layer_load(const SafetensorsFile& file, const QkLayout& layout,
                             const QkLayerSource& src) {
  const QkLayerShape shape = qk_layer_shape(file, layout, src);
  QkLayerWeights w;
  w.layer = src.layer;
  w.out = shape.out;
  w.in = shape.in;
  if (layout.kind == QkLayoutKind::Separate) {
    w.wq = file.read_f64(src.query_name);
    w.wk = file.read_f64(src.key_name);
    return w;
  }
  // Conv1D: W is (D, 3D) with [q k v] = h W, so W_q(out=o, in=i) = W[i, o] and
  // W_k(o, i) = W[i, D + o].
  const std::vector<double> fused = file.read_f64(src.query_name);
  const int64_t D = shape.in;
  w.wq.resize(static_cast<size_t>(D * D));
  w.wk.resize(static_cast<size_t>(D * D));
  for (int64_t i = 0; i < D; ++i) {
    const double* row = fused.data() + i * 3 * D;
    for (int64_t o = 0; o < D; ++o) {
      w.wq[static_cast<size_t>(o * D + i)] = row[o];
      w.wk[static_cast<size_t>(o * D + i)] = row[D + o];
    }
  }
  return w;
}

std::vector<int64_t> qk_list_parse(const std::string& text, const std::string& option) {
  const std::string example =
      option + " '" + text + "' must be a list of numbers and ranges, e.g. 0,2,5-7";
  std::set<int64_t> out;
  size_t pos = 0;
  ATTN_CHECK(!text.empty(), example);
  auto number = [&](const std::string& s) -> int64_t {
    ATTN_CHECK(!s.empty() && s.size() <= 9 &&
                   std::all_of(s.begin(), s.end(),
                               [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }),
               example);
    return std::stoll(s);
  };
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      out.insert(number(item));
    } else {
      const int64_t lo = number(item.substr(0, dash)), hi = number(item.substr(dash + 1));
      ATTN_CHECK(lo <= hi && hi - lo <= 100000, example + " (ranges go low-high)");
      for (int64_t v = lo; v <= hi; ++v) out.insert(v);
    }
    pos = comma + 1;
  }
  return {out.begin(), out.end()};
}

}  // namespace attn
