// numpy .npy / .npz reading and writing (see npy.h for the contract).
//
// Layout of this file: dtype table; .npy header writing (numpy 1.24's exact layout);
// npy_write; ZIP writing (npz_write); reading sources (file region, inflate, CRC);
// the header-dict parser; npy_read / npz_read; NpyArray conversions.
// Host byte order is little-endian (checked at compile time), so array bytes are copied as is.
#include "io/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/memory.h"
#include "io/atomic_file.h"

namespace attn {

static_assert(std::endian::native == std::endian::little, "npy.cpp assumes a little-endian host");

namespace {

constexpr int kMaxDims = 64;                  // numpy 2's limit (numpy 1: 32)
constexpr uint64_t kMaxHeaderBytes = 1 << 20;  // numpy itself refuses headers over 10000 bytes
constexpr uint32_t k32 = 0xFFFFFFFFu;        // ZIP sentinel: "see the ZIP64 record"
constexpr uint32_t k16 = 0xFFFFu;

// ---- small helpers ----

void put16(std::string& s, uint32_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>((v >> 8) & 0xFF));
}
void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}
void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v & k32));
  put32(s, static_cast<uint32_t>(v >> 32));
}
uint32_t get16(const unsigned char* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }
uint32_t get32(const unsigned char* p) { return get16(p) | (get16(p + 2) << 16); }
uint64_t get64(const unsigned char* p) { return uint64_t{get32(p)} | (uint64_t{get32(p + 4)} << 32); }

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

uint32_t crc_update(uint32_t crc, const void* data, uint64_t n) {
  if (n == 0) return crc;  // zlib treats a null buffer as "return the initial value"
  return static_cast<uint32_t>(crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(n)));
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

// Validates a view; returns its data size in bytes. label names it in messages.
uint64_t view_bytes(const NpyView& a, const std::string& label) {
  if (a.shape.size() > static_cast<size_t>(kMaxDims)) {
    throw UserError(label + ": " + std::to_string(a.shape.size()) + " dimensions; at most " +
                    std::to_string(kMaxDims) + " are supported");
  }
  for (int64_t d : a.shape) {
    if (d < 0) {
      throw UserError(label + ": negative dimension in shape " + shape_repr(a.shape) +
                      "; dimensions must be >= 0");
    }
  }
  if (a.dtype == DType::Unicode && a.unicode_chars < 0) {
    throw UserError(label + ": negative unicode_chars " + std::to_string(a.unicode_chars));
  }
  uint64_t n = 0;
  if (!shape_bytes(a.shape, dtype_size(a.dtype, a.unicode_chars), n)) {
    throw UserError(label + ": shape " + shape_repr(a.shape) + " is too large to store");
  }
  if (n > 0 && a.data == nullptr) throw UserError(label + ": data pointer is null");
  return n;
}

// ---- reading: a file, and byte sources over it ----

class ReadFile {
 public:
  explicit ReadFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int err = errno;
      if (err == ENOENT) throw IoError("cannot read " + path + ": no such file; check the path");
      throw IoError("cannot read " + path + ": " + std::strerror(err) +
                    "; check the path and its permissions");
    }
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw IoError("cannot read " + path + ": not a regular file; give the path of a .npy/.npz file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~ReadFile() { ::close(fd_); }
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;

  uint64_t size() const { return size_; }

  // Reads exactly n bytes at off (the caller has checked off + n <= size()).
  void read_at(uint64_t off, void* dst, size_t n, const std::string& where) const {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t k = ::pread(fd_, p, std::min<size_t>(n, size_t{1} << 30), static_cast<off_t>(off));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) {
        throw IoError(where + ": read error: " + std::strerror(errno) + "; check the disk");
      }
      if (k == 0) {
        throw IoError(where + ": file ended early (at byte " + std::to_string(off) +
                      "); it is truncated or was changed while being read");
      }
      p += k;
      n -= static_cast<size_t>(k);
      off += static_cast<uint64_t>(k);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; returns fewer than n only at the end of the data.
  virtual size_t read(unsigned char* dst, size_t n) = 0;
};

class RegionSource final : public ByteSource {
 public:
  RegionSource(const ReadFile& f, uint64_t begin, uint64_t length, std::string where)
      : f_(f), pos_(begin), end_(begin + length), where_(std::move(where)) {}
  size_t read(unsigned char* dst, size_t n) override {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, end_ - pos_));
    if (k > 0) f_.read_at(pos_, dst, k, where_);
    pos_ += k;
    return k;
  }
  uint64_t remaining() const { return end_ - pos_; }

 private:
  const ReadFile& f_;
  uint64_t pos_, end_;
  std::string where_;
};

class InflateSource final : public ByteSource {  // raw deflate, as in ZIP method 8
 public:
  InflateSource(RegionSource& in, std::string where) : in_(in), where_(std::move(where)), buf_(1 << 16) {
    std::memset(&zs_, 0, sizeof zs_);
    if (inflateInit2(&zs_, -MAX_WBITS) != Z_OK) throw IoError(where_ + ": cannot start zlib inflate");
  }
  ~InflateSource() override { inflateEnd(&zs_); }
  InflateSource(const InflateSource&) = delete;
  InflateSource& operator=(const InflateSource&) = delete;

  size_t read(unsigned char* dst, size_t n) override {
    size_t produced = 0;
    while (produced < n && !ended_) {
      if (zs_.avail_in == 0) {
        zs_.avail_in = static_cast<uInt>(in_.read(buf_.data(), buf_.size()));
        zs_.next_in = buf_.data();
      }
      const size_t want = std::min<size_t>(n - produced, size_t{1} << 30);
      zs_.next_out = dst + produced;
      zs_.avail_out = static_cast<uInt>(want);
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      produced += want - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc == Z_BUF_ERROR && zs_.avail_in == 0 && in_.remaining() == 0) {
        throw IoError(where_ + ": compressed data ends early; the file is truncated, re-create it");
      } else if (rc != Z_OK) {
        throw IoError(where_ + ": corrupt compressed data (zlib: " +
                      std::string(zs_.msg ? zs_.msg : "error " + std::to_string(rc)) +
                      "); re-create the file");
      }
    }
    return produced;
  }

 private:
  RegionSource& in_;
  std::string where_;
  std::vector<unsigned char> buf_;
  z_stream zs_;
  bool ended_ = false;
};

class CrcSource final : public ByteSource {
 public:
  explicit CrcSource(ByteSource& in) : in_(in) {}
  size_t read(unsigned char* dst, size_t n) override {
    const size_t k = in_.read(dst, n);
    crc_ = crc_update(crc_, dst, k);
    return k;
  }
  uint32_t crc() const { return crc_; }

 private:
  ByteSource& in_;
  uint32_t crc_ = 0;
};

void read_exact(ByteSource& src, void* dst, size_t n, const std::string& where) {
  if (src.read(static_cast<unsigned char*>(dst), n) != n) {
    throw IoError(where + ": data ends early; the file is truncated, re-create it");
  }
}

// ---- the header dict: a small parser for the Python literals numpy writes ----

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
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
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
    why = "object dtype '" + descr + "' (pickled Python objects) is not supported; save a numeric or string array";
    return false;
  } else {
    why = "unsupported dtype '" + descr +
          "' (supported: <f8 <f4 <i8 <i4 |u1 |b1 <U{n}); convert it first, e.g. a.astype('<f8')";
    return false;
  }
  if (order == '>' && !one_byte) {
    why = "big-endian dtype '" + descr + "' is not supported; convert it first with a.astype('<" + body + "')";
    return false;
  }
  return true;
}

struct NpyHeader {
  DType dtype = DType::F64;
  int64_t chars = 0;
  std::vector<int64_t> shape;
  uint64_t data_bytes = 0;
};

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
    else throw IoError(where + ": corrupt .npy header (unexpected key '" + k + "'); re-create the file");
  }
  if (!descr || !fortran || !shape) {
    throw IoError(where + ": corrupt .npy header (needs 'descr', 'fortran_order' and 'shape'); re-create the file");
  }
  NpyHeader h;
  if (descr->kind != PyValue::Kind::Str) {
    throw IoError(where + ": structured dtype (a record array) is not supported; save each field as its own array");
  }
  std::string why;
  if (!descr_parse(descr->str, h.dtype, h.chars, why)) throw IoError(where + ": " + why);
  if (fortran->kind != PyValue::Kind::Bool || shape->kind != PyValue::Kind::Tuple) {
    throw IoError(where + ": corrupt .npy header ('fortran_order' must be True/False, 'shape' a tuple); re-create the file");
  }
  if (shape->items.size() > static_cast<size_t>(kMaxDims)) {
    throw IoError(where + ": " + std::to_string(shape->items.size()) + " dimensions; at most " +
                  std::to_string(kMaxDims) + " are supported");
  }
  for (const PyValue& v : shape->items) {
    if (v.kind != PyValue::Kind::Int || v.num < 0) {
      throw IoError(where + ": corrupt .npy header (shape entries must be integers >= 0); re-create the file");
    }
    h.shape.push_back(v.num);
  }
  // For 0-d and 1-d arrays Fortran and C order are the same bytes.
  if (fortran->flag && h.shape.size() >= 2) {
    throw IoError(where + ": array is stored in Fortran order; re-save it in C order with "
                          "np.save(path, np.ascontiguousarray(a))");
  }
  if (!shape_bytes(h.shape, dtype_size(h.dtype, h.chars), h.data_bytes)) {
    throw IoError(where + ": shape " + shape_repr(h.shape) + " is too large; the header is corrupt");
  }
  return h;
}

// Reads one .npy image of exactly `total` bytes from src.
NpyArray npy_from_source(ByteSource& src, uint64_t total, const std::string& where) {
  unsigned char pre[12];
  if (total < 10) {
    throw IoError(where + ": not a .npy array (only " + std::to_string(total) +
                  " bytes); the file is truncated or empty");
  }
  read_exact(src, pre, 10, where);
  if (std::memcmp(pre, "\x93NUMPY", 6) != 0) {
    const bool zip = pre[0] == 'P' && pre[1] == 'K';
    throw IoError(where + ": not a .npy array (wrong magic bytes)" +
                  (zip ? "; it is a ZIP archive: read it as .npz" : "; give a file written by np.save"));
  }
  const int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0) {
    throw IoError(where + ": unsupported .npy format version " + std::to_string(major) + "." +
                  std::to_string(minor) + " (this reader knows 1.0, 2.0, 3.0); re-save it with np.save");
  }
  uint64_t prefix = 10, hlen = get16(pre + 8);
  if (major >= 2) {
    if (total < 12) throw IoError(where + ": truncated .npy header; re-create the file");
    read_exact(src, pre + 10, 2, where);
    prefix = 12;
    hlen = get32(pre + 8);
  }
  if (hlen > total - prefix) {
    throw IoError(where + ": header length " + std::to_string(hlen) + " points past the end of the data (" +
                  std::to_string(total) + " bytes); the file is truncated or corrupt, re-create it");
  }
  if (hlen > kMaxHeaderBytes) {
    throw IoError(where + ": header of " + std::to_string(hlen) + " bytes is implausibly large; the file is corrupt");
  }
  std::string text(hlen, '\0');
  read_exact(src, text.data(), hlen, where);
  const NpyHeader h = npy_header_parse(text, where);
  const uint64_t avail = total - prefix - hlen;
  if (h.data_bytes > avail) {
    throw IoError(where + ": truncated: shape " + shape_repr(h.shape) + " needs " + format_bytes(h.data_bytes) +
                  " of data but " + format_bytes(avail) + " follow the header; re-create the file");
  }
  if (h.data_bytes < avail) {
    throw IoError(where + ": " + std::to_string(avail - h.data_bytes) +
                  " unexpected bytes after the array data; the header does not match the data, re-create the file");
  }
  memory_check(h.data_bytes, where + ": the array", "read it on a machine with more memory");
  NpyArray a;
  a.dtype = h.dtype;
  a.unicode_chars = h.chars;
  a.shape = h.shape;
  a.bytes.resize(h.data_bytes);
  read_exact(src, a.bytes.data(), h.data_bytes, where);
  return a;
}

// ---- ZIP structures ----

struct ZipEntry {
  std::string name;
  uint32_t flags = 0, method = 0, crc = 0;
  uint64_t csize = 0, usize = 0, offset = 0;
};

constexpr uint32_t kSigLocal = 0x04034b50, kSigCentral = 0x02014b50, kSigEnd = 0x06054b50;
constexpr uint32_t kSigEnd64 = 0x06064b50, kSigLocator64 = 0x07064b50;
constexpr uint32_t kDosTime = 0, kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01 00:00

bool name_is_utf8(const std::string& name) {  // ZIP flag bit 11 marks non-ASCII names
  return std::any_of(name.begin(), name.end(), [](char c) { return (c & 0x80) != 0; });
}

std::vector<ZipEntry> zip_directory(const ReadFile& f, const std::string& path) {
  auto corrupt = [&](const std::string& what) {
    return IoError(path + ": corrupt .npz (" + what + "); the file is damaged or truncated, re-create it");
  };
  const uint64_t size = f.size();
  if (size < 22) {
    throw IoError(path + ": not a .npz file (" + std::to_string(size) +
                  " bytes, too short for a ZIP archive); give a file written by np.savez");
  }
  const uint64_t tail_len = std::min<uint64_t>(size, 22 + 65535);
  std::vector<unsigned char> tail(tail_len);
  f.read_at(size - tail_len, tail.data(), tail_len, path);
  int64_t at = -1;  // position of the end record within tail
  for (int64_t i = static_cast<int64_t>(tail_len) - 22; i >= 0; --i) {
    const unsigned char* p = tail.data() + i;
    if (get32(p) == kSigEnd && static_cast<uint64_t>(i) + 22 + get16(p + 20) == tail_len) {
      at = i;
      break;
    }
  }
  if (at < 0) {
    unsigned char head[6] = {0};
    f.read_at(0, head, std::min<uint64_t>(6, size), path);
    if (std::memcmp(head, "\x93NUMPY", 6) == 0) {
      throw IoError(path + ": this is a .npy file, not .npz; read it as .npy");
    }
    throw IoError(path + ": not a .npz file (no ZIP end record); it is another format or truncated, re-create it");
  }
  const uint64_t end_pos = size - tail_len + static_cast<uint64_t>(at);
  const unsigned char* e = tail.data() + at;
  uint64_t disk = get16(e + 4), cd_disk = get16(e + 6), n_disk = get16(e + 8), n_total = get16(e + 10);
  uint64_t cd_size = get32(e + 12), cd_offset = get32(e + 16);
  uint64_t cd_limit = end_pos;  // the central directory ends before this
  if (end_pos >= 20 && get32(e - 20) == kSigLocator64) {
    const unsigned char* loc = e - 20;
    const uint64_t z = get64(loc + 8);
    if (get32(loc + 4) != 0 || get32(loc + 16) != 1) {
      throw IoError(path + ": multi-volume ZIP archives are not supported; re-create it as one file");
    }
    if (z > end_pos - 20 || end_pos - 20 - z < 56) throw corrupt("ZIP64 end record outside the file");
    unsigned char r[56];
    f.read_at(z, r, 56, path);
    if (get32(r) != kSigEnd64) throw corrupt("bad ZIP64 end record signature");
    disk = get32(r + 16);
    cd_disk = get32(r + 20);
    n_disk = get64(r + 24);
    n_total = get64(r + 32);
    cd_size = get64(r + 40);
    cd_offset = get64(r + 48);
    cd_limit = z;
  }
  if (disk != 0 || cd_disk != 0 || n_disk != n_total) {
    throw IoError(path + ": multi-volume ZIP archives are not supported; re-create it as one file");
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) {
    throw corrupt("central directory at " + std::to_string(cd_offset) + " (+" + std::to_string(cd_size) +
                  " bytes) lies outside the file");
  }
  if (n_total > cd_size / 46) throw corrupt("entry count does not fit the central directory");
  std::vector<unsigned char> cd(cd_size);
  f.read_at(cd_offset, cd.data(), cd_size, path);

  std::vector<ZipEntry> entries;
  uint64_t p = 0;
  for (uint64_t k = 0; k < n_total; ++k) {
    if (cd_size - p < 46 || get32(cd.data() + p) != kSigCentral) throw corrupt("bad central directory entry");
    const unsigned char* c = cd.data() + p;
    ZipEntry z;
    z.flags = get16(c + 8);
    z.method = get16(c + 10);
    z.crc = get32(c + 16);
    z.csize = get32(c + 20);
    z.usize = get32(c + 24);
    const uint64_t nlen = get16(c + 28), xlen = get16(c + 30), clen = get16(c + 32);
    z.offset = get32(c + 42);
    if (cd_size - p - 46 < nlen + xlen + clen) throw corrupt("central directory entry runs past its end");
    z.name.assign(reinterpret_cast<const char*>(c + 46), nlen);
    // ZIP64 extra field: the 64-bit values of the fields that hold 0xFFFFFFFF, in order.
    const unsigned char* x = c + 46 + nlen;
    for (uint64_t q = 0; q + 4 <= xlen;) {
      const uint32_t id = get16(x + q), len = get16(x + q + 2);
      if (q + 4 + len > xlen) throw corrupt("extra field of '" + z.name + "' runs past its end");
      if (id == 0x0001) {
        const unsigned char* v = x + q + 4;
        uint32_t used = 0;
        for (uint64_t* field : {&z.usize, &z.csize, &z.offset}) {
          if (*field != k32) continue;
          if (used + 8 > len) throw corrupt("short ZIP64 field of '" + z.name + "'");
          *field = get64(v + used);
          used += 8;
        }
      }
      q += 4 + len;
    }
    entries.push_back(std::move(z));
    p += 46 + nlen + xlen + clen;
  }
  // Each entry's local header and data must lie before the central directory.
  for (ZipEntry& z : entries) {
    const std::string where = path + " (entry '" + z.name + "')";
    if (z.offset > cd_offset || cd_offset - z.offset < 30) throw corrupt("entry '" + z.name + "' lies outside the file");
    unsigned char h[30];
    f.read_at(z.offset, h, 30, where);
    if (get32(h) != kSigLocal) throw corrupt("bad local header of '" + z.name + "'");
    const uint64_t nlen = get16(h + 26), xlen = get16(h + 28);
    if (cd_offset - z.offset - 30 < nlen + xlen) throw corrupt("entry '" + z.name + "' lies outside the file");
    std::string local_name(nlen, '\0');
    f.read_at(z.offset + 30, local_name.data(), nlen, where);
    if (local_name != z.name) throw corrupt("entry names '" + z.name + "' and '" + local_name + "' disagree");
    z.offset += 30 + nlen + xlen;  // now: where the data starts
    if (z.csize > cd_offset - z.offset) throw corrupt("data of entry '" + z.name + "' runs past its end");
  }
  return entries;
}

// ---- ZIP writing ----

struct NpzEntryPlan {
  std::string zip_name, npy_header;
  const NpyView* view = nullptr;
  uint64_t data_bytes = 0, size = 0, offset = 0;  // size = npy header + data
  uint32_t crc = 0;
  bool zip64_size = false, zip64_offset = false;  // which fields go to a ZIP64 extra field
};

std::string zip_local_header(const NpzEntryPlan& p) {
  std::string h;
  put32(h, kSigLocal);
  put16(h, p.zip64_size ? 45 : 20);                 // version needed
  put16(h, name_is_utf8(p.zip_name) ? 0x0800 : 0);  // flags
  put16(h, 0);                                      // method: STORED
  put16(h, kDosTime);
  put16(h, kDosDate);
  put32(h, p.crc);
  put32(h, p.zip64_size ? k32 : static_cast<uint32_t>(p.size));  // compressed
  put32(h, p.zip64_size ? k32 : static_cast<uint32_t>(p.size));  // uncompressed
  put16(h, static_cast<uint32_t>(p.zip_name.size()));
  put16(h, p.zip64_size ? 20 : 0);
  h += p.zip_name;
  if (p.zip64_size) {
    put16(h, 0x0001);
    put16(h, 16);
    put64(h, p.size);
    put64(h, p.size);
  }
  return h;
}

void zip_central_entry(std::string& cd, const NpzEntryPlan& p) {
  const uint32_t version = (p.zip64_size || p.zip64_offset) ? 45 : 20;
  std::string extra;
  if (p.zip64_size) {
    put64(extra, p.size);
    put64(extra, p.size);
  }
  if (p.zip64_offset) put64(extra, p.offset);
  put32(cd, kSigCentral);
  put16(cd, (3u << 8) | version);  // made by: Unix
  put16(cd, version);
  put16(cd, name_is_utf8(p.zip_name) ? 0x0800 : 0);
  put16(cd, 0);  // STORED
  put16(cd, kDosTime);
  put16(cd, kDosDate);
  put32(cd, p.crc);
  put32(cd, p.zip64_size ? k32 : static_cast<uint32_t>(p.size));
  put32(cd, p.zip64_size ? k32 : static_cast<uint32_t>(p.size));
  put16(cd, static_cast<uint32_t>(p.zip_name.size()));
  put16(cd, extra.empty() ? 0 : static_cast<uint32_t>(4 + extra.size()));
  put16(cd, 0);               // comment
  put16(cd, 0);               // disk
  put16(cd, 0);               // internal attributes
  put32(cd, 0100644u << 16);  // external: regular file, rw-r--r--
  put32(cd, p.zip64_offset ? k32 : static_cast<uint32_t>(p.offset));
  cd += p.zip_name;
  if (!extra.empty()) {
    put16(cd, 0x0001);
    put16(cd, static_cast<uint32_t>(extra.size()));
    cd += extra;
  }
}

// ZIP64 end record and locator (if zip64), then the classic end record.
std::string zip_end_records(uint64_t n, uint64_t cd_offset, uint64_t cd_size, bool zip64, bool force) {
  std::string end;
  if (zip64) {
    put32(end, kSigEnd64);
    put64(end, 44);  // size of the rest of this record
    put16(end, (3u << 8) | 45);
    put16(end, 45);
    put32(end, 0);  // this disk
    put32(end, 0);  // disk of the central directory
    put64(end, n);
    put64(end, n);
    put64(end, cd_size);
    put64(end, cd_offset);
    put32(end, kSigLocator64);
    put32(end, 0);
    put64(end, cd_offset + cd_size);  // where the ZIP64 end record starts
    put32(end, 1);                    // disks in total
  }
  const uint32_t n16 = (force || n >= k16) ? k16 : static_cast<uint32_t>(n);
  put32(end, kSigEnd);
  put16(end, 0);
  put16(end, 0);
  put16(end, n16);
  put16(end, n16);
  put32(end, (force || cd_size >= k32) ? k32 : static_cast<uint32_t>(cd_size));
  put32(end, (force || cd_offset >= k32) ? k32 : static_cast<uint32_t>(cd_offset));
  put16(end, 0);  // comment
  return end;
}

}  // namespace

// ---- public: dtypes ----

int64_t dtype_size(DType dtype, int64_t unicode_chars) {
  switch (dtype) {
    case DType::F64: case DType::I64: return 8;
    case DType::F32: case DType::I32: return 4;
    case DType::U8: case DType::Bool: return 1;
    case DType::Unicode: return 4 * unicode_chars;
  }
  ATTN_ASSERT(false, "unknown DType");
}

std::string dtype_descr(DType dtype, int64_t unicode_chars) {
  switch (dtype) {
    case DType::F64: return "<f8";
    case DType::F32: return "<f4";
    case DType::I64: return "<i8";
    case DType::I32: return "<i4";
    case DType::U8: return "|u1";
    case DType::Bool: return "|b1";
    case DType::Unicode: return "<U" + std::to_string(unicode_chars);
  }
  ATTN_ASSERT(false, "unknown DType");
}

NpyView npy_text(const std::string& name, const std::u32string& storage) {
  // An empty string views its terminating NUL: numpy stores '' as '<U1'.
  const int64_t chars = std::max<int64_t>(1, static_cast<int64_t>(storage.size()));
  return NpyView{name, DType::Unicode, {}, storage.data(), chars};
}

// ---- public: writing ----

void npy_write(const std::string& path, const NpyView& a) {
  const std::string label = a.name.empty() ? path : "array '" + a.name + "'";
  const uint64_t nbytes = view_bytes(a, label);
  const std::string header = npy_header(a.dtype, a.unicode_chars, a.shape);
  output_path_check(path, header.size() + nbytes);
  AtomicFile file(path);
  file.write(header.data(), header.size());
  if (nbytes > 0) file.write(a.data, nbytes);
  file.commit();
}

void npz_write(const std::string& path, const std::vector<NpyView>& arrays, bool force_zip64) {
  // Plan every size and offset first, so that bad arguments and a full disk are reported
  // before any work (CRCs of large arrays) or any file is made.
  std::vector<NpzEntryPlan> plan;
  std::set<std::string> names;
  uint64_t offset = 0, cd_size = 0;
  for (const NpyView& a : arrays) {
    if (a.name.empty()) throw UserError(path + ": an array has an empty name; give every npz entry a name");
    if (!names.insert(a.name).second) {
      throw UserError(path + ": two arrays are named '" + a.name + "'; npz entry names must be distinct");
    }
    NpzEntryPlan p;
    p.view = &a;
    p.zip_name = a.name + ".npy";
    if (p.zip_name.size() > 0xFFFF) {
      throw UserError(path + ": array name '" + a.name.substr(0, 40) + "...' is too long for a ZIP entry");
    }
    p.data_bytes = view_bytes(a, path + ": array '" + a.name + "'");
    p.npy_header = npy_header(a.dtype, a.unicode_chars, a.shape);
    p.size = p.npy_header.size() + p.data_bytes;
    p.offset = offset;
    p.zip64_size = force_zip64 || p.size >= k32;
    p.zip64_offset = force_zip64 || p.offset >= k32;
    offset += 30 + p.zip_name.size() + (p.zip64_size ? 20 : 0) + p.size;
    const int wide = (p.zip64_size ? 2 : 0) + (p.zip64_offset ? 1 : 0);
    cd_size += 46 + p.zip_name.size() + (wide ? 4 + 8 * wide : 0);
    plan.push_back(std::move(p));
  }
  const uint64_t cd_offset = offset;
  const bool zip64_end = force_zip64 || plan.size() >= k16 || cd_size >= k32 || cd_offset >= k32;
  const uint64_t total = cd_offset + cd_size + 22 + (zip64_end ? 56 + 20 : 0);
  output_path_check(path, total);

  for (NpzEntryPlan& p : plan) {
    p.crc = crc_update(0, p.npy_header.data(), p.npy_header.size());
    p.crc = crc_update(p.crc, p.view->data, p.data_bytes);
  }
  AtomicFile file(path);
  for (const NpzEntryPlan& p : plan) {
    ATTN_ASSERT(file.bytes_written() == p.offset, "npz entry offset");
    const std::string local = zip_local_header(p);
    file.write(local.data(), local.size());
    file.write(p.npy_header.data(), p.npy_header.size());
    if (p.data_bytes > 0) file.write(p.view->data, p.data_bytes);
  }
  std::string cd;
  for (const NpzEntryPlan& p : plan) zip_central_entry(cd, p);
  ATTN_ASSERT(cd.size() == cd_size, "npz central directory size");
  const std::string end = zip_end_records(plan.size(), cd_offset, cd_size, zip64_end, force_zip64);
  file.write(cd.data(), cd.size());
  file.write(end.data(), end.size());
  ATTN_ASSERT(file.bytes_written() == total, "npz size");
  file.commit();
}

// ---- public: reading ----

NpyArray npy_read(const std::string& path) {
  ReadFile f(path);
  RegionSource src(f, 0, f.size(), path);
  return npy_from_source(src, f.size(), path);
}

std::map<std::string, NpyArray> npz_read(const std::string& path) {
  ReadFile f(path);
  const std::vector<ZipEntry> entries = zip_directory(f, path);
  std::map<std::string, NpyArray> out;
  for (const ZipEntry& z : entries) {
    const std::string where = path + " (entry '" + z.name + "')";
    if (z.flags & 1) throw IoError(where + ": encrypted entries are not supported; save it without encryption");
    if (z.name.size() < 4 || z.name.compare(z.name.size() - 4, 4, ".npy") != 0) {
      throw IoError(where + ": not a .npy entry; an .npz holds only NAME.npy arrays (np.savez)");
    }
    const std::string key = z.name.substr(0, z.name.size() - 4);
    if (out.count(key)) throw IoError(where + ": duplicate entry; the archive is corrupt, re-create it");
    RegionSource raw(f, z.offset, z.csize, where);
    NpyArray a;
    uint32_t crc = 0;
    if (z.method == 0) {
      if (z.csize != z.usize) {
        throw IoError(where + ": corrupt .npz (stored entry with different sizes); re-create it");
      }
      CrcSource src(raw);
      a = npy_from_source(src, z.usize, where);
      crc = src.crc();
    } else if (z.method == 8) {
      // deflate expands at most ~1032:1; a larger claim is a corrupt size field.
      if (z.usize / 1032 > z.csize + 64) {
        throw IoError(where + ": corrupt .npz (uncompressed size " + std::to_string(z.usize) +
                      " is impossible for " + std::to_string(z.csize) + " compressed bytes); re-create it");
      }
      InflateSource inflater(raw, where);
      CrcSource src(inflater);
      a = npy_from_source(src, z.usize, where);
      unsigned char extra;
      if (src.read(&extra, 1) != 0) {
        throw IoError(where + ": corrupt .npz (decompresses to more bytes than recorded); re-create it");
      }
      crc = src.crc();
    } else {
      throw IoError(where + ": compression method " + std::to_string(z.method) +
                    " is not supported (only stored and deflated, as np.savez and np.savez_compressed write)");
    }
    if (crc != z.crc) {
      char buf[80];
      std::snprintf(buf, sizeof buf, "CRC mismatch (recorded %08x, computed %08x)", z.crc, crc);
      throw IoError(where + ": " + buf + "; the file is corrupt, re-create it");
    }
    out.emplace(key, std::move(a));
  }
  return out;
}

// ---- public: NpyArray ----

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {
void array_check(const NpyArray& a) {
  uint64_t n = 0;
  const bool ok = shape_bytes(a.shape, dtype_size(a.dtype, a.unicode_chars), n) && n == a.bytes.size();
  ATTN_ASSERT(ok, "NpyArray bytes do not match its dtype and shape");
}

template <typename T>
T element(const std::vector<unsigned char>& bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
}  // namespace

std::vector<double> NpyArray::to_f64() const {
  array_check(*this);
  const int64_t n = size();
  std::vector<double> out(static_cast<size_t>(n));
  switch (dtype) {
    case DType::F64: if (n) std::memcpy(out.data(), bytes.data(), bytes.size()); break;
    case DType::F32: for (int64_t i = 0; i < n; ++i) out[i] = element<float>(bytes, i); break;
    case DType::I64: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(element<int64_t>(bytes, i)); break;
    case DType::I32: for (int64_t i = 0; i < n; ++i) out[i] = element<int32_t>(bytes, i); break;
    case DType::U8: for (int64_t i = 0; i < n; ++i) out[i] = bytes[i]; break;
    case DType::Bool: for (int64_t i = 0; i < n; ++i) out[i] = bytes[i] ? 1.0 : 0.0; break;
    case DType::Unicode:
      throw UserError("array of text ('" + dtype_descr(dtype, unicode_chars) + "') has no numeric values; read it with text()");
  }
  return out;
}

std::vector<int64_t> NpyArray::to_i64() const {
  array_check(*this);
  const int64_t n = size();
  std::vector<int64_t> out(static_cast<size_t>(n));
  switch (dtype) {
    case DType::I64: if (n) std::memcpy(out.data(), bytes.data(), bytes.size()); break;
    case DType::I32: for (int64_t i = 0; i < n; ++i) out[i] = element<int32_t>(bytes, i); break;
    case DType::U8: for (int64_t i = 0; i < n; ++i) out[i] = bytes[i]; break;
    case DType::Bool: for (int64_t i = 0; i < n; ++i) out[i] = bytes[i] ? 1 : 0; break;
    case DType::F64: case DType::F32: case DType::Unicode:
      throw UserError("array of dtype '" + dtype_descr(dtype, unicode_chars) +
                      "' is not an integer array; read it with " +
                      (dtype == DType::Unicode ? "text()" : "to_f64()"));
  }
  return out;
}

std::string NpyArray::text() const {
  if (dtype != DType::Unicode) {
    throw UserError("array of dtype '" + dtype_descr(dtype, unicode_chars) + "' is not text; read it with to_f64()");
  }
  array_check(*this);
  if (size() != 1) {
    throw UserError("text() needs a single string; this array has " + std::to_string(size()) + " elements");
  }
  std::u32string s(static_cast<size_t>(unicode_chars), U'\0');
  if (!s.empty()) std::memcpy(s.data(), bytes.data(), 4 * s.size());
  while (!s.empty() && s.back() == U'\0') s.pop_back();
  std::string out;
  for (char32_t c : s) {
    const uint32_t u = static_cast<uint32_t>(c);
    if (u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "invalid Unicode code point U+%X", u);
      throw IoError(std::string("text array holds an ") + buf + "; the data is corrupt");
    }
    if (u < 0x80) {
      out.push_back(static_cast<char>(u));
    } else if (u < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (u >> 6)));
      out.push_back(static_cast<char>(0x80 | (u & 0x3F)));
    } else if (u < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (u >> 12)));
      out.push_back(static_cast<char>(0x80 | ((u >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (u & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (u >> 18)));
      out.push_back(static_cast<char>(0x80 | ((u >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((u >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (u & 0x3F)));
    }
  }
  return out;
}

}  // namespace attn
