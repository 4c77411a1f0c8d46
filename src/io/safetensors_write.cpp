// safetensors files, the writer (see safetensors.h for the contract): a compact JSON
// header ("__metadata__" first, then the tensors in the order given, each
// {"dtype", "shape", "data_offsets"}), padded with spaces to a multiple of 8 bytes, then
// the tensors' bytes back to back, little-endian, written atomically.
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/memory.h"
#include "io/atomic_file.h"
#include "io/half.h"
#include "io/safetensors.h"

namespace attn {

static_assert(std::endian::native == std::endian::little,
              "safetensors_write.cpp assumes a little-endian host");

namespace {

uint64_t item_bytes(SafetensorsDType dtype) {
  switch (dtype) {
    case SafetensorsDType::F64: return 8;
    case SafetensorsDType::F32: return 4;
    case SafetensorsDType::F16:
    case SafetensorsDType::BF16: return 2;
    case SafetensorsDType::Other: break;
  }
  return 0;
}

constexpr const char* kMetadataKey = "__metadata__";

}  // namespace

void safetensors_write(const std::string& path, const std::vector<SafetensorsView>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto& m = header[kMetadataKey] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
  }
  std::set<std::string> names;
  std::vector<uint64_t> counts;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    const std::string where = path + ": tensor \"" + t.name + "\"";
    if (t.name.empty())
      throw UserError(path + ": a tensor name is empty; give every tensor a name");
    if (t.name == kMetadataKey) throw UserError(where + ": the name is reserved for metadata");
    if (!names.insert(t.name).second) throw UserError(where + ": the name is used twice");
    if (t.dtype == SafetensorsDType::Other)
      throw UserError(where + ": dtype must be F64, F32, F16 or BF16");
    uint64_t count = 1;
    for (int64_t d : t.shape) {
      if (d < 0) throw UserError(where + ": negative dimension " + std::to_string(d));
      if (!checked_mul(count, static_cast<uint64_t>(d), &count) || count > (uint64_t{1} << 60)) {
        throw UserError(where + ": shape is too large to store");
      }
    }
    if (count > 0 && t.data == nullptr) throw UserError(where + ": data pointer is null");
    const uint64_t item = item_bytes(t.dtype);
    auto& entry = header[t.name];
    entry["dtype"] = safetensors_dtype_name(t.dtype);
    entry["shape"] = t.shape;
    entry["data_offsets"] = {offset, offset + count * item};
    offset += count * item;
    counts.push_back(count);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  output_path_check(path, 8 + text.size() + offset);

  AtomicFile out(path);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((text.size() >> (8 * i)) & 0xFF);
  out.write(len, 8);
  out.write(text.data(), text.size());
  std::vector<unsigned char> buf;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const SafetensorsView& t = tensors[k];
    const size_t count = static_cast<size_t>(counts[k]);
    switch (t.dtype) {
      case SafetensorsDType::F64:
        if (count > 0) out.write(t.data, count * 8);
        continue;
      case SafetensorsDType::F32:
        buf.resize(count * 4);
        for (size_t i = 0; i < count; ++i) {
          const float v = static_cast<float>(t.data[i]);
          std::memcpy(buf.data() + 4 * i, &v, 4);
        }
        break;
      case SafetensorsDType::F16:
      case SafetensorsDType::BF16:
        buf.resize(count * 2);
        for (size_t i = 0; i < count; ++i) {
          const float v = static_cast<float>(t.data[i]);
          const uint16_t h =
              t.dtype == SafetensorsDType::F16 ? f16_from_float(v) : bf16_from_float(v);
          buf[2 * i] = static_cast<unsigned char>(h & 0xFF);
          buf[2 * i + 1] = static_cast<unsigned char>(h >> 8);
        }
        break;
      case SafetensorsDType::Other:
        ATTN_ASSERT(false, "unreachable");
    }
    out.write(buf.data(), buf.size());
  }
  out.commit();
}

}  // namespace attn
