// numpy .npy files (see npy.h for the contract): dtypes, npy_write / npy_read, the file
// reader and the reader of one .npy image from a byte source (shared with npz.cpp), and
// NpyArray's conversions. The header itself is in npy_header.cpp; .npz (ZIP) in npz.cpp.
// Arrays are C order, little-endian, of shape (d0, d1, ...); 0-d arrays have shape ().
#include "io/file_read.h"
#include "io/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/memory.h"
#include "io/atomic_file.h"
#include "io/npy_internal.h"

namespace attn {

using namespace npy_detail;

namespace {

constexpr uint64_t kMaxHeaderBytes = 1 << 20;  // numpy itself refuses headers over 10000 bytes

void read_exact(ByteSource& src, void* dst, size_t n, const std::string& where) {
  if (src.read(static_cast<unsigned char*>(dst), n) != n) {
    throw IoError(where + ": data ends early; the file is truncated, re-create it");
  }
}

}  // namespace

namespace npy_detail {

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

// ---- reading: the file, and one .npy image from a byte source ----

ReadFile::ReadFile(const std::string& path) : path_(path) {
  fd_ = file_open_read(path, ".npy/.npz", &size_);
}

ReadFile::~ReadFile() { ::close(fd_); }

void ReadFile::read_at(uint64_t off, void* dst, size_t n, const std::string& where) const {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t k =
        ::pread(fd_, p, std::min<size_t>(n, size_t{1} << 30), static_cast<off_t>(off));
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
    throw IoError(
        where + ": not a .npy array (wrong magic bytes)" +
        (zip ? "; it is a ZIP archive: read it as .npz" : "; give a file written by np.save"));
  }
  const int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0) {
    throw IoError(where + ": unsupported .npy format version " + std::to_string(major) + "." +
                  std::to_string(minor) +
                  " (this reader knows 1.0, 2.0, 3.0); re-save it with np.save");
  }
  uint64_t prefix = 10, hlen = get16(pre + 8);
  if (major >= 2) {
    if (total < 12) throw IoError(where + ": truncated .npy header; re-create the file");
    read_exact(src, pre + 10, 2, where);
    prefix = 12;
    hlen = get32(pre + 8);
  }
  if (hlen > total - prefix) {
    throw IoError(where + ": header length " + std::to_string(hlen) +
                  " points past the end of the data (" + std::to_string(total) +
                  " bytes); the file is truncated or corrupt, re-create it");
  }
  if (hlen > kMaxHeaderBytes) {
    throw IoError(where + ": header of " + std::to_string(hlen) +
                  " bytes is implausibly large; the file is corrupt");
  }
  std::string text(hlen, '\0');
  read_exact(src, text.data(), hlen, where);
  const NpyHeader h = npy_header_parse(text, where);
  const uint64_t avail = total - prefix - hlen;
  if (h.data_bytes > avail) {
    throw IoError(where + ": truncated: shape " + shape_repr(h.shape) + " needs " +
                  format_bytes(h.data_bytes) + " of data but " + format_bytes(avail) +
                  " follow the header; re-create the file");
  }
  if (h.data_bytes < avail) {
    throw IoError(where + ": " + std::to_string(avail - h.data_bytes) +
                  " unexpected bytes after the array data; the header does not match the data, "
                  "re-create the file");
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

}  // namespace npy_detail

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

// ---- public: reading ----

NpyArray npy_read(const std::string& path) {
  ReadFile f(path);
  RegionSource src(f, 0, f.size(), path);
  return npy_from_source(src, f.size(), path);
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
  const bool ok =
      shape_bytes(a.shape, dtype_size(a.dtype, a.unicode_chars), n) && n == a.bytes.size();
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
    case DType::I64:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(element<int64_t>(bytes, i));
      break;
    case DType::I32: for (int64_t i = 0; i < n; ++i) out[i] = element<int32_t>(bytes, i); break;
    case DType::U8: for (int64_t i = 0; i < n; ++i) out[i] = bytes[i]; break;
    case DType::Bool: for (int64_t i = 0; i < n; ++i) out[i] = bytes[i] ? 1.0 : 0.0; break;
    case DType::Unicode:
      throw UserError("array of text ('" + dtype_descr(dtype, unicode_chars) +
                      "') has no numeric values; read it with text()");
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
    throw UserError("array of dtype '" + dtype_descr(dtype, unicode_chars) +
                    "' is not text; read it with to_f64()");
  }
  array_check(*this);
  if (size() != 1) {
    throw UserError("text() needs a single string; this array has " + std::to_string(size()) +
                    " elements");
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
