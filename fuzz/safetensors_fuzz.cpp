// libFuzzer target for the safetensors reader (io/safetensors.cpp): any byte string is
// parsed as an in-memory file; every tensor the header declares is then read and
// converted. The reader must either accept the input or throw attn::UserError/IoError:
// a crash, an ASan/UBSan report, an abort (ATTN_ASSERT) or another exception is a bug.
//
// Build (clang only, see fuzz/CMakeLists.txt) and run:
//   cmake -B build-fuzz -DATTNLAB_FUZZ=ON -DATTNLAB_BUILD_TESTS=OFF \
//         -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
//   cmake --build build-fuzz --target safetensors_fuzz -j2
//   build-fuzz/fuzz/safetensors_fuzz -max_total_time=180 -max_len=4096 \
//         build-fuzz/fuzz/corpus fuzz/corpus
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    attn::SafetensorsFile file = attn::SafetensorsFile::from_memory(data, size, "fuzz.safetensors");
    for (const auto& e : file.entries()) {
      if (e.dtype == attn::SafetensorsDType::Other) continue;
      const std::vector<double> values = file.read_f64(e.name);
      if (values.size() != static_cast<size_t>(e.size())) __builtin_trap();
    }
    (void)file.find("a");
    (void)file.metadata();
  } catch (const attn::UserError&) {
    // a refused input: fine
  }
  return 0;
}
