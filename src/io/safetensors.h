// safetensors files (Hugging Face): read any, write F64/F32/F16/BF16, without Python.
//
// Format: an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON (the header, padded
// with spaces), then the data section. The header maps tensor names to
//   {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [begin, end]}
// (byte offsets into the data section, C order, little-endian) and may hold one
// "__metadata__" object of string -> string.
//
// Contract:
// - The reader trusts nothing: the header length, every offset and every size are checked
//   against the file (and each other) before anything is read or allocated. A header over
//   100 MiB, header JSON that is not an object (or nests deeper than the format allows,
//   or repeats a key), a missing or ill-typed field, begin > end, end past the data
//   section, a byte size that disagrees with dtype × shape, or two tensors whose bytes
//   overlap all throw attn::IoError naming the file and the tensor. The same input never
//   reads out of bounds (fuzzed with libFuzzer: fuzz/safetensors_fuzz.cpp).
// - Every safetensors dtype is indexed (BOOL, U8, I8, F8_*, I16, U16, F16, BF16, I32,
//   U32, F32, I64, U64, F64); an unknown dtype name is indexed as Other with its offsets
//   checked but its size unchecked. read_f64 converts F64/F32/F16/BF16 (exactly: every
//   such value is a double) and refuses other dtypes with a UserError.
// - Tensors are read on demand (pread), so a large checkpoint costs only what is read;
//   each read is checked against available memory first.
// - safetensors_write is atomic (io/atomic_file.h) and deterministic: "__metadata__"
//   first (if any), then the tensors in the order given, data contiguous in that order,
//   header padded with spaces to a multiple of 8 bytes (as the Python library does).
//   Values are given as doubles and rounded to the dtype (F16/BF16: via float, to
//   nearest even).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {

enum class SafetensorsDType { F64, F32, F16, BF16, Other };

// "F64", "F32", "F16", "BF16" (Other: "other").
const char* safetensors_dtype_name(SafetensorsDType dtype);

// One tensor of the header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype_name;  // as written in the file, e.g. "BF16", "I64"
  SafetensorsDType dtype = SafetensorsDType::Other;  // Other: not convertible to double
  int64_t item_bytes = 0;  // bytes per element; 0 for an unknown dtype name
  std::vector<int64_t> shape;  // {} is a scalar (one element)
  uint64_t begin = 0, end = 0;  // byte range in the data section

  int64_t size() const;  // number of elements
};

class SafetensorsFile {
 public:
  // Opens and validates PATH. Throws IoError (missing, unreadable, malformed).
  explicit SafetensorsFile(const std::string& path);
  // Validates an in-memory image of a file; `data` must outlive the object. `label`
  // names it in messages.
  static SafetensorsFile from_memory(const void* data, size_t size, const std::string& label);

  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) = delete;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& label() const { return label_; }
  // All tensors, sorted by name.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  // The tensor of that name, or nullptr.
  const SafetensorsEntry* find(const std::string& name) const;
  // The "__metadata__" object (empty if the file has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The tensor's values, converted to double, C order. UserError if the name is absent
  // or the dtype is not F64/F32/F16/BF16; IoError if the file cannot be read.
  std::vector<double> read_f64(const std::string& name) const;

 private:
  SafetensorsFile() = default;
  void parse();  // reads and validates the header; fills entries_ and metadata_
  void read_at(uint64_t offset, void* dst, size_t n) const;

  std::string label_;
  int fd_ = -1;                               // file mode
  const unsigned char* memory_ = nullptr;     // memory mode
  uint64_t file_size_ = 0;
  uint64_t data_start_ = 0;                   // 8 + header length
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// A tensor to write: `data` holds shape-product doubles (C order), rounded to dtype.
struct SafetensorsView {
  std::string name;
  SafetensorsDType dtype = SafetensorsDType::F32;  // F64, F32, F16 or BF16
  std::vector<int64_t> shape;
  const double* data = nullptr;
};

// Writes the tensors and metadata as a safetensors file, atomically. UserError for a bad
// view (empty, duplicate or reserved name, Other dtype, negative dimension, null data),
// IoError for file problems (checked before writing).
void safetensors_write(const std::string& path, const std::vector<SafetensorsView>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace attn
