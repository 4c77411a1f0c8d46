// Internals shared by the .npy/.npz implementation (npy.cpp, npy_header.cpp, npz.cpp);
// not part of the API (that is io/npy.h) and included by no other file.
//
// Holds: little-endian byte packing, shape helpers, the .npy header writer and parser
// (npy_header.cpp), view validation, the file reader and byte sources, and the reader of
// one .npy image from a byte source (npy.cpp). npz.cpp adds inflate and CRC sources.
// Host byte order is little-endian (checked below), so array bytes are copied as is.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/npy.h"

namespace attn::npy_detail {

static_assert(std::endian::native == std::endian::little,
              "io/npy*.cpp assume a little-endian host");

constexpr int kMaxDims = 64;  // numpy 2's limit (numpy 1: 32)

// ---- little-endian byte packing ----

inline void put16(std::string& s, uint32_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>((v >> 8) & 0xFF));
}
inline void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}
inline void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v & 0xFFFFFFFFu));
  put32(s, static_cast<uint32_t>(v >> 32));
}
inline uint32_t get16(const unsigned char* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }
inline uint32_t get32(const unsigned char* p) { return get16(p) | (get16(p + 2) << 16); }
inline uint64_t get64(const unsigned char* p) {
  return uint64_t{get32(p)} | (uint64_t{get32(p + 4)} << 32);
}

// ---- shapes and the .npy header (npy_header.cpp) ----

// Python's repr of a shape tuple: "()", "(3,)", "(2, 3)".
std::string shape_repr(const std::vector<int64_t>& shape);
// Product of dims times item size, or false on overflow past 2^62.
bool shape_bytes(const std::vector<int64_t>& shape, int64_t item, uint64_t& out);

// The complete .npy header (magic, version, length, dict, padding) as numpy 1.24 writes it.
std::string npy_header(DType dtype, int64_t chars, const std::vector<int64_t>& shape);

// A parsed header dict: supported dtype, C-order shape, and the data size it implies.
struct NpyHeader {
  DType dtype = DType::F64;
  int64_t chars = 0;
  std::vector<int64_t> shape;
  uint64_t data_bytes = 0;
};
// Parses the header dict text; throws IoError (naming `where`) for anything unsupported.
NpyHeader npy_header_parse(const std::string& text, const std::string& where);

// ---- writing (npy.cpp) ----

// Validates a view; returns its data size in bytes. label names it in messages.
uint64_t view_bytes(const NpyView& a, const std::string& label);

// ---- reading: a file, and byte sources over it (npy.cpp) ----

class ReadFile {
 public:
  explicit ReadFile(const std::string& path);  // throws IoError if not a readable regular file
  ~ReadFile();
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;

  uint64_t size() const { return size_; }

  // Reads exactly n bytes at off (the caller has checked off + n <= size()).
  void read_at(uint64_t off, void* dst, size_t n, const std::string& where) const;

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

// Reads one .npy image of exactly `total` bytes from src.
NpyArray npy_from_source(ByteSource& src, uint64_t total, const std::string& where);

}  // namespace attn::npy_detail
