// numpy .npy and .npz files, read and written without numpy (zlib only).
//
// Contract:
// - Arrays are C order and little-endian. Writers take a view (no copy); readers return
//   owned bytes plus dtype and shape.
// - npy_write / npz_write are atomic (io/atomic_file.h): the target is complete or untouched.
//   Their bytes depend only on the arrays: the same arrays give byte-identical files.
//   .npy headers are laid out as numpy 1.24 lays them out (version 1.0, or 2.0 when the
//   header exceeds 65535 bytes), so npy_write gives the same bytes as np.save.
// - .npz: ZIP entries "NAME.npy", STORED, DOS time 1980-01-01 00:00, ZIP64 records only
//   where a size, offset or entry count needs them (np.load reads them all).
// - Readers accept npy versions 1.0/2.0/3.0 and the dtypes below, npz entries STORED or
//   DEFLATED (np.savez_compressed) and ZIP64. Anything else (big-endian, Fortran order with
//   ndim >= 2, object or other dtypes, encryption, truncation, a bad CRC) throws
//   attn::IoError naming the path and entry; no size or offset is trusted before it is
//   checked against the file length.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {

// numpy descr: F64 '<f8', F32 '<f4', I64 '<i8', I32 '<i4', U8 '|u1', Bool '|b1' (one byte,
// 0 or 1), Unicode '<U{chars}' (each element is `chars` UTF-32LE code points, NUL-padded).
enum class DType { F64, F32, I64, I32, U8, Bool, Unicode };

// Bytes of one element (Unicode: 4 * unicode_chars).
int64_t dtype_size(DType dtype, int64_t unicode_chars = 0);
// The numpy descr string, e.g. "<f8" or "<U5".
std::string dtype_descr(DType dtype, int64_t unicode_chars = 0);

// An array to write: C order, little-endian, not copied (data must outlive the write).
// shape {} is a 0-d array (one element); a zero in shape gives an empty array.
struct NpyView {
  std::string name;  // npz entry name without ".npy" (unused by npy_write)
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
  int64_t unicode_chars = 0;  // Unicode only: code points per element
};

// A 0-d '<U' array viewing storage (the caller keeps storage alive). An empty string is
// stored as '<U1' holding one NUL, as numpy does.
NpyView npy_text(const std::string& name, const std::u32string& storage);

// Writes one array as .npy, atomically. Throws UserError for a malformed view, IoError
// for file problems (checked before writing: directory, permissions, free space).
void npy_write(const std::string& path, const NpyView& a);

// Writes arrays as entries "NAME.npy" of an uncompressed .npz, atomically. Names must be
// non-empty and distinct. force_zip64 writes ZIP64 records even for small files (tests).
void npz_write(const std::string& path, const std::vector<NpyView>& arrays,
               bool force_zip64 = false);

// An array read from a file: raw little-endian bytes in C order.
struct NpyArray {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  int64_t unicode_chars = 0;

  int64_t size() const;                // number of elements (1 for 0-d)
  std::vector<double> to_f64() const;  // any numeric or Bool dtype; UserError for Unicode
  std::vector<int64_t> to_i64() const; // I64/I32/U8/Bool; UserError for F64/F32/Unicode
  std::string text() const;  // a one-element Unicode array as UTF-8 (trailing NULs dropped)
};

NpyArray npy_read(const std::string& path);
// Keys are the entry names without ".npy".
std::map<std::string, NpyArray> npz_read(const std::string& path);

}  // namespace attn
