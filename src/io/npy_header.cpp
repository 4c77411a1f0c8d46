// The .npy header: writing it exactly as numpy 1.24 does, and parsing the header dict
// (a small parser for the Python literals numpy writes) into a supported dtype and shape.
// Shapes: a header describes one C-order array of shape (d0, d1, ...), 0-d as ().
#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/error.h"
#include "io/npy_internal.h"

namespace attn::npy_detail {

// ---- shapes ----

std::string shape_repr(const std::vector<int64_t>& shape) {  // Python's repr of a tuple
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// Product of dims times item size, or false on overflow past 2^62.
bool shape_bytes(const std::vector<int64_t>& shape, int64_t item, uint64_t& out) {
  constexpr uint64_t limit = uint64_t{1} << 62;
  uint64_t n = static_cast<uint64_t>(item);
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > limit / static_cast<uint64_t>(d)) return false;
    n *= static_cast<uint64_t>(d);
  }
  // A zero dim with a huge rest is still an empty array.
  for (int64_t d : shape) if (d == 0) n = 0;
  out = n;
  return true;
}

// ---- the .npy header, as numpy 1.24 writes it ----

std::string npy_header(DType dtype, int64_t chars, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '" + dtype_descr(dtype, chars) +
                     "', 'fortran_order': False, 'shape': " + shape_repr(shape) + ", }";
  // numpy leaves room to grow the first axis in place (GROWTH_AXIS_MAX_DIGITS = 21).
  if (!shape.empty()) {
    const size_t digits = std::to_string(shape[0]).size();
    if (digits < 21) dict.append(21 - digits, ' ');
  }
  const uint64_t hlen = dict.size() + 1;  // + '\n'
  uint64_t pad = 64 - ((8 + 2 + hlen) % 64);
  int version = 1;
  if (hlen + pad > 65535) {
    version = 2;
    pad = 64 - ((8 + 4 + hlen) % 64);
  }
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(version));
  out.push_back(0);
  if (version == 1) put16(out, static_cast<uint32_t>(hlen + pad));
  else put32(out, static_cast<uint32_t>(hlen + pad));
  out += dict;
  out.append(pad, ' ');
  out.push_back('\n');
  return out;
}

// ---- the header dict: a small parser for the Python literals numpy writes ----

namespace {

struct PyValue {
  enum class Kind { Str, Int, Bool, None, Tuple, List, Dict };
  Kind kind = Kind::None;
  std::string str;
  int64_t num = 0;
  bool flag = false;
  std::vector<PyValue> items;     // Tuple, List; Dict values
  std::vector<std::string> keys;  // Dict keys
};

class LiteralParser {
 public:
  LiteralParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  PyValue parse() {
    PyValue v = value(0);
    skip_ws();
    if (i_ != s_.size()) fail("unexpected text after the dict");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw IoError(where_ + ": corrupt .npy header (" + what + " at byte " + std::to_string(i_) +
                  " of the header); the file is damaged, re-create it");
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  PyValue value(int depth) {
    if (depth > 16) fail("nesting too deep");
    skip_ws();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '\'' || c == '"') return string_value();
    if (c == '(') return sequence(')', PyValue::Kind::Tuple, depth);
    if (c == '[') return sequence(']', PyValue::Kind::List, depth);
    if (c == '{') return dict(depth);
    if (c == '-' || (c >= '0' && c <= '9')) return integer();
    size_t j = i_;
    while (j < s_.size() && std::isalpha(static_cast<unsigned char>(s_[j]))) ++j;
    const std::string word = s_.substr(i_, j - i_);
    PyValue v;
    if (word == "True" || word == "False") {
      v.kind = PyValue::Kind::Bool;
      v.flag = word == "True";
    } else if (word == "None") {
      v.kind = PyValue::Kind::None;
    } else {
      fail("unexpected character '" + std::string(1, c) + "'");
    }
    i_ = j;
    return v;
  }

  PyValue string_value() {
    const char q = s_[i_++];
    PyValue v;
    v.kind = PyValue::Kind::Str;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == q) break;
      if (c == '\\') {
        if (i_ >= s_.size()) fail("unterminated string");
        c = s_[i_++];
      }
      v.str.push_back(c);
    }
    return v;
  }

  PyValue integer() {
    PyValue v;
    v.kind = PyValue::Kind::Int;
    bool neg = false;
    if (s_[i_] == '-') {
      neg = true;
      ++i_;
    }
    const size_t start = i_;
    uint64_t n = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      n = n * 10 + static_cast<uint64_t>(s_[i_] - '0');
      if (n > (uint64_t{1} << 62)) fail("integer too large");
      ++i_;
    }
    if (i_ == start) fail("expected a digit");
    if (i_ < s_.size() && (s_[i_] == 'L' || s_[i_] == 'l')) ++i_;  // Python 2 longs
    v.num = neg ? -static_cast<int64_t>(n) : static_cast<int64_t>(n);
    return v;
  }

  PyValue sequence(char close, PyValue::Kind kind, int depth) {
    ++i_;
    PyValue v;
    v.kind = kind;
    bool comma = false;
    while (true) {
      if (eat(close)) break;
      v.items.push_back(value(depth + 1));
      comma = eat(',');
      if (!comma) {
        if (eat(close)) break;
        fail(std::string("expected ',' or '") + close + "'");
      }
    }
    // "(3)" is the number 3 in Python, not a tuple.
    if (kind == PyValue::Kind::Tuple && v.items.size() == 1 && !comma) return v.items[0];
    return v;
  }

  PyValue dict(int depth) {
    ++i_;
    PyValue v;
    v.kind = PyValue::Kind::Dict;
    while (true) {
      if (eat('}')) break;
      PyValue key = value(depth + 1);
      if (key.kind != PyValue::Kind::Str) fail("dict key is not a string");
      if (!eat(':')) fail("expected ':'");
      v.keys.push_back(key.str);
      v.items.push_back(value(depth + 1));
      if (!eat(',')) {
        if (eat('}')) break;
        fail("expected ',' or '}'");
      }
    }
    return v;
  }

  const std::string& s_;
  const std::string& where_;
  size_t i_ = 0;
};

// Parses a descr string; returns false (with why) for anything this reader does not support.
bool descr_parse(const std::string& descr, DType& dtype, int64_t& chars, std::string& why) {
  std::string body = descr;
  char order = 0;
  if (!body.empty() && std::strchr("<>|=", body[0])) {
    order = body[0];
    body = body.substr(1);
  }
  chars = 0;
  bool one_byte = false;
  if (body == "f8") dtype = DType::F64;
  else if (body == "f4") dtype = DType::F32;
  else if (body == "i8") dtype = DType::I64;
  else if (body == "i4") dtype = DType::I32;
  else if (body == "u1") dtype = DType::U8, one_byte = true;
  else if (body == "b1" || body == "?") dtype = DType::Bool, one_byte = true;
  else if (!body.empty() && body[0] == 'U' &&
           std::all_of(body.begin() + 1, body.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           body.size() <= 13) {
    dtype = DType::Unicode;
    chars = body.size() > 1 ? std::stoll(body.substr(1)) : 0;
  } else if (body == "O") {
    why = "object dtype '" + descr +
          "' (pickled Python objects) is not supported; save a numeric or string array";
    return false;
  } else {
    why = "unsupported dtype '" + descr +
          "' (supported: <f8 <f4 <i8 <i4 |u1 |b1 <U{n}); convert it first, e.g. a.astype('<f8')";
    return false;
  }
  if (order == '>' && !one_byte) {
    why = "big-endian dtype '" + descr + "' is not supported; convert it first with a.astype('<" +
          body + "')";
    return false;
  }
  return true;
}

}  // namespace

NpyHeader npy_header_parse(const std::string& text, const std::string& where) {
  const PyValue d = LiteralParser(text, where).parse();
  if (d.kind != PyValue::Kind::Dict) {
    throw IoError(where + ": corrupt .npy header (not a dict); the file is damaged, re-create it");
  }
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (size_t i = 0; i < d.keys.size(); ++i) {
    const std::string& k = d.keys[i];
    const PyValue* v = &d.items[i];
    if (k == "descr") descr = v;
    else if (k == "fortran_order") fortran = v;
    else if (k == "shape") shape = v;
    else
      throw IoError(where + ": corrupt .npy header (unexpected key '" + k +
                    "'); re-create the file");
  }
  if (!descr || !fortran || !shape) {
    throw IoError(
        where +
        ": corrupt .npy header (needs 'descr', 'fortran_order' and 'shape'); re-create the file");
  }
  NpyHeader h;
  if (descr->kind != PyValue::Kind::Str) {
    throw IoError(
        where +
        ": structured dtype (a record array) is not supported; save each field as its own array");
  }
  std::string why;
  if (!descr_parse(descr->str, h.dtype, h.chars, why)) throw IoError(where + ": " + why);
  if (fortran->kind != PyValue::Kind::Bool || shape->kind != PyValue::Kind::Tuple) {
    throw IoError(where +
                  ": corrupt .npy header ('fortran_order' must be True/False, 'shape' a tuple); "
                  "re-create the file");
  }
  if (shape->items.size() > static_cast<size_t>(kMaxDims)) {
    throw IoError(where + ": " + std::to_string(shape->items.size()) + " dimensions; at most " +
                  std::to_string(kMaxDims) + " are supported");
  }
  for (const PyValue& v : shape->items) {
    if (v.kind != PyValue::Kind::Int || v.num < 0) {
      throw IoError(
          where +
          ": corrupt .npy header (shape entries must be integers >= 0); re-create the file");
    }
    h.shape.push_back(v.num);
  }
  // For 0-d and 1-d arrays Fortran and C order are the same bytes.
  if (fortran->flag && h.shape.size() >= 2) {
    throw IoError(where + ": array is stored in Fortran order; re-save it in C order with "
                          "np.save(path, np.ascontiguousarray(a))");
  }
  if (!shape_bytes(h.shape, dtype_size(h.dtype, h.chars), h.data_bytes)) {
    throw IoError(where + ": shape " + shape_repr(h.shape) +
                  " is too large; the header is corrupt");
  }
  return h;
}

}  // namespace attn::npy_detail
