// libFuzzer target for the .npy and .npz readers (io/npy.cpp, io/npy_header.cpp,
// io/npz.cpp) and the dataset reader on top of them (io/dataset_file.cpp): any byte
// string is read as a .npz file, as a .npy file and as an attnlab dataset; every array
// read is then converted the ways attnlab converts them. A reader must either accept the
// input or throw attn::UserError (IoError is one): a crash, an ASan/UBSan report, an abort
// or another exception is a bug. Seeds: fuzz/corpus/npz_fuzz/; dictionary: fuzz/npz.dict.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "fuzz_file.h"
#include "io/dataset_file.h"
#include "io/npy.h"

namespace {

void convert(const attn::NpyArray& a) {
  try {
    if (a.dtype == attn::DType::Unicode) {
      if (a.size() == 1) (void)a.text();
    } else if (a.to_f64().size() != static_cast<size_t>(a.size())) {
      __builtin_trap();
    }
    if (a.dtype != attn::DType::F64 && a.dtype != attn::DType::F32 &&
        a.dtype != attn::DType::Unicode)
      (void)a.to_i64();
  } catch (const attn::UserError&) {
    // a refused conversion: fine
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = attn_fuzz::fuzz_file(data, size);
  try {
    for (const auto& [name, a] : attn::npz_read(path)) convert(a);
  } catch (const attn::UserError&) {
  }
  try {
    convert(attn::npy_read(path));
  } catch (const attn::UserError&) {
  }
  try {
    std::string meta;
    (void)attn::dataset_read(path, &meta);
  } catch (const attn::UserError&) {
  }
  return 0;
}
