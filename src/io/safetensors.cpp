// safetensors files, the reader (see safetensors.h for the contract): header validation
// and on-demand tensor reads with F64/F32/F16/BF16 -> double conversion. The writer is
// in safetensors_write.cpp.
// Layout: [u64 LE header length N][N bytes JSON header][data section]; offsets in the
// header are relative to the start of the data section (byte 8 + N of the file).
#include "io/file_read.h"
#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/memory.h"
#include "io/half.h"

namespace attn {

static_assert(std::endian::native == std::endian::little,
              "safetensors.cpp assumes a little-endian host");

namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the Python library's own limit
constexpr int kMaxHeaderDepth = 3;  // {name: {"shape": [dim]}}: dims sit at depth 3
constexpr size_t kMaxDims = 64;
constexpr const char* kMetadataKey = "__metadata__";

// Bytes per element of a safetensors dtype name (0: unknown name).
int64_t dtype_item_bytes(const std::string& name) {
  static const std::map<std::string, int64_t> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  const auto it = kSizes.find(name);
  return it == kSizes.end() ? 0 : it->second;
}

SafetensorsDType dtype_from_name(const std::string& name) {
  if (name == "F64") return SafetensorsDType::F64;
  if (name == "F32") return SafetensorsDType::F32;
  if (name == "F16") return SafetensorsDType::F16;
  if (name == "BF16") return SafetensorsDType::BF16;
  return SafetensorsDType::Other;
}

uint64_t get64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A hint for files that are something else, from their first bytes.
std::string format_hint(const unsigned char* p, size_t n) {
  auto starts = [&](const char* magic) {
    const size_t k = std::strlen(magic);
    return n >= k && std::memcmp(p, magic, k) == 0;
  };
  if (starts("PK\x03\x04")) {
    return "; it is a ZIP archive (a PyTorch .bin/.pt checkpoint?): convert it with "
           "safetensors.torch.save_file, or give the model's .safetensors file";
  }
  if (n >= 1 && p[0] == 0x80) {
    return "; it looks like a Python pickle (a PyTorch checkpoint?): convert it with "
           "safetensors.torch.save_file";
  }
  if (starts("\x93NUMPY")) return "; it is a numpy .npy file, not safetensors";
  if (starts("GGUF")) return "; it is a GGUF file, not safetensors";
  if (n >= 1 && (p[0] == '{' || p[0] == '[')) {
    return "; it starts with JSON text (a config.json?): give the model's .safetensors file";
  }
  return "; give a .safetensors file";
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const auto close = text.find("] ");
    if (close != std::string::npos) text = text.substr(close + 2);
  }
  return text;
}

// A name from the file, safe to put in a one-line message: control characters become
// '?', and long names are cut.
std::string printable(const std::string& name) {
  std::string s = name.substr(0, 120);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return name.size() > 120 ? s + "..." : s;
}

// A non-negative whole number from the header, or an IoError naming `what`.
uint64_t header_uint(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number_unsigned()) {
    throw IoError(what + " must be a whole number >= 0, not " + v.dump().substr(0, 40));
  }
  return v.get<uint64_t>();
}

}  // namespace

const char* safetensors_dtype_name(SafetensorsDType dtype) {
  switch (dtype) {
    case SafetensorsDType::F64: return "F64";
    case SafetensorsDType::F32: return "F32";
    case SafetensorsDType::F16: return "F16";
    case SafetensorsDType::BF16: return "BF16";
    case SafetensorsDType::Other: return "other";
  }
  return "other";
}

int64_t SafetensorsEntry::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // validated on parse: no overflow
  return n;
}

// ---- opening ----

SafetensorsFile::SafetensorsFile(const std::string& path) {
  label_ = path;
  fd_ = file_open_read(path, ".safetensors", &file_size_);
  try {
    parse();
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

SafetensorsFile SafetensorsFile::from_memory(const void* data, size_t size,
                                             const std::string& label) {
  SafetensorsFile f;
  f.label_ = label;
  f.memory_ = static_cast<const unsigned char*>(data);
  f.file_size_ = size;
  f.parse();
  return f;
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0) ::close(fd_);
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept
    : label_(std::move(o.label_)),
      fd_(std::exchange(o.fd_, -1)),
      memory_(std::exchange(o.memory_, nullptr)),
      file_size_(o.file_size_),
      data_start_(o.data_start_),
      entries_(std::move(o.entries_)),
      metadata_(std::move(o.metadata_)) {}

void SafetensorsFile::read_at(uint64_t offset, void* dst, size_t n) const {
  ATTN_ASSERT(offset <= file_size_ && n <= file_size_ - offset,
              "read past the validated file size");
  if (memory_ != nullptr) {
    if (n > 0) std::memcpy(dst, memory_ + offset, n);
    return;
  }
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t k =
        ::pread(fd_, p, std::min<size_t>(n, size_t{1} << 30), static_cast<off_t>(offset));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw IoError(label_ + ": read error: " + std::strerror(errno) + "; check the disk");
    if (k == 0) {
      throw IoError(label_ + ": file ended early (at byte " + std::to_string(offset) +
                    "); it is truncated or was changed while being read");
    }
    p += k;
    n -= static_cast<size_t>(k);
    offset += static_cast<uint64_t>(k);
  }
}

// ---- the header ----

void SafetensorsFile::parse() {
  const std::string& f = label_;
  unsigned char prefix[16] = {0};
  const size_t got = static_cast<size_t>(std::min<uint64_t>(file_size_, sizeof prefix));
  read_at(0, prefix, got);
  if (file_size_ < 8) {
    throw IoError(
        f + ": not a safetensors file (" + std::to_string(file_size_) +
        " bytes; it must start with an 8-byte header length)" +
        (file_size_ == 0 ? std::string("; the file is empty") : format_hint(prefix, got)));
  }
  const uint64_t n = get64(prefix);
  if (n > kMaxHeaderBytes) {
    throw IoError(f + ": header length " + std::to_string(n) +
                  " is over the 100 MiB limit: not a safetensors file, or a corrupted one" +
                  format_hint(prefix, got));
  }
  if (n > file_size_ - 8) {
    throw IoError(f + ": header length " + std::to_string(n) + " runs past the end of the file (" +
                  std::to_string(file_size_) + " bytes): the file is truncated or not safetensors" +
                  format_hint(prefix, got));
  }
  if (n < 2)
    throw IoError(f + ": empty header (" + std::to_string(n) + " bytes); the file is corrupted");
  data_start_ = 8 + n;
  const uint64_t data_bytes = file_size_ - data_start_;

  std::string text(static_cast<size_t>(n), '\0');
  read_at(8, text.data(), text.size());
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    throw IoError(f + ": the header is not a JSON object" + format_hint(prefix + 8, got - 8));
  }

  // Parse with a callback that refuses deep nesting and repeated keys as they are read.
  std::vector<std::set<std::string>> keys(kMaxHeaderDepth + 2);
  auto guard = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth > kMaxHeaderDepth) {
      throw IoError(
          f +
          ": the header nests JSON deeper than a safetensors header does; the file is corrupted");
    }
    if (event == nlohmann::json::parse_event_t::object_start) {
      keys[static_cast<size_t>(depth) + 1].clear();
    } else if (event == nlohmann::json::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!keys[static_cast<size_t>(depth)].insert(key).second) {
        throw IoError(f + ": the header has key \"" + printable(key) +
                      "\" twice; the file is corrupted");
      }
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, guard);
  } catch (const nlohmann::json::exception& e) {
    throw IoError(f + ": the header is not valid JSON (" + json_error_text(e) +
                  "); the file is corrupted");
  }
  if (!header.is_object())
    throw IoError(f + ": the header is not a JSON object; the file is corrupted");

  for (const auto& [name, v] : header.items()) {
    if (name == kMetadataKey) {
      if (!v.is_object()) throw IoError(f + ": __metadata__ must be an object of strings");
      for (const auto& [key, value] : v.items()) {
        if (!value.is_string()) {
          throw IoError(f + ": __metadata__[\"" + printable(key) + "\"] must be a string, not " +
                        value.dump().substr(0, 40));
        }
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string where = f + ": tensor \"" + printable(name) + "\"";
    if (!v.is_object())
      throw IoError(where + ": entry must be an object with dtype, shape, data_offsets");
    const auto dt = v.find("dtype");
    const auto sh = v.find("shape");
    const auto off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string())
      throw IoError(where + ": missing or non-string \"dtype\"");
    if (sh == v.end() || !sh->is_array()) throw IoError(where + ": missing or non-array \"shape\"");
    if (off == v.end() || !off->is_array() || off->size() != 2) {
      throw IoError(where + ": \"data_offsets\" must be an array [begin, end]");
    }
    if (sh->size() > kMaxDims) {
      throw IoError(where + ": " + std::to_string(sh->size()) + " dimensions; at most " +
                    std::to_string(kMaxDims) + " are supported");
    }
    SafetensorsEntry e;
    e.name = name;
    e.dtype_name = dt->get<std::string>();
    e.dtype = dtype_from_name(e.dtype_name);
    e.item_bytes = dtype_item_bytes(e.dtype_name);
    uint64_t count = 1;
    for (const auto& d : *sh) {
      const uint64_t dim = header_uint(d, where + ": shape entry");
      if (dim > (uint64_t{1} << 62) || !checked_mul(count, dim, &count) ||
          count > (uint64_t{1} << 62)) {
        throw IoError(where + ": shape is too large to address; the file is corrupted");
      }
      e.shape.push_back(static_cast<int64_t>(dim));
    }
    e.begin = header_uint((*off)[0], where + ": data_offsets[0]");
    e.end = header_uint((*off)[1], where + ": data_offsets[1]");
    if (e.begin > e.end) {
      throw IoError(where + ": data_offsets [" + std::to_string(e.begin) + ", " +
                    std::to_string(e.end) + "] end before they begin; the file is corrupted");
    }
    if (e.end > data_bytes) {
      throw IoError(where + ": data_offsets end at byte " + std::to_string(e.end) +
                    " but the data section has " + std::to_string(data_bytes) +
                    " bytes; the file is truncated or corrupted");
    }
    uint64_t bytes = 0;
    if (e.item_bytes > 0 && (!checked_mul(count, static_cast<uint64_t>(e.item_bytes), &bytes) ||
                             bytes != e.end - e.begin)) {
      throw IoError(where + ": " + std::to_string(e.end - e.begin) +
                    " bytes in data_offsets, but " + e.dtype_name + " of " + std::to_string(count) +
                    " elements needs " + (bytes ? std::to_string(bytes) : std::string("more")) +
                    "; the file is corrupted");
    }
    entries_.push_back(std::move(e));
  }

  // No two tensors may share bytes.
  std::vector<const SafetensorsEntry*> by_offset;
  for (const auto& e : entries_) {
    if (e.end > e.begin) by_offset.push_back(&e);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
              return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
            });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->begin < by_offset[i - 1]->end) {
      throw IoError(f + ": tensors \"" + printable(by_offset[i - 1]->name) + "\" and \"" +
                    printable(by_offset[i]->name) +
                    "\" overlap in the data section; the file is corrupted");
    }
  }
  // nlohmann objects iterate in key order, so entries_ is sorted by name.
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  const auto it =
      std::lower_bound(entries_.begin(), entries_.end(), name,
                       [](const SafetensorsEntry& e, const std::string& n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

std::vector<double> SafetensorsFile::read_f64(const std::string& name) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) throw UserError(label_ + ": no tensor named \"" + name + "\"");
  if (e->dtype == SafetensorsDType::Other) {
    throw UserError(label_ + ": tensor \"" + name + "\" has dtype " + e->dtype_name +
                    "; only F64, F32, F16 and BF16 tensors can be read as numbers");
  }
  const uint64_t bytes = e->end - e->begin;
  const uint64_t count = static_cast<uint64_t>(e->size());
  memory_check(bytes + 8 * count, "tensor \"" + name + "\" of " + label_,
               "use a machine with more memory");
  std::vector<unsigned char> raw(static_cast<size_t>(bytes));
  read_at(data_start_ + e->begin, raw.data(), raw.size());
  std::vector<double> out(static_cast<size_t>(count));
  const unsigned char* p = raw.data();
  switch (e->dtype) {
    case SafetensorsDType::F64:
      if (!raw.empty()) std::memcpy(out.data(), p, raw.size());  // empty: both pointers may be null
      break;
    case SafetensorsDType::F32:
      for (size_t i = 0; i < out.size(); ++i) {
        float v;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = v;
      }
      break;
    case SafetensorsDType::F16:
    case SafetensorsDType::BF16: {
      const bool f16 = e->dtype == SafetensorsDType::F16;
      for (size_t i = 0; i < out.size(); ++i) {
        const uint16_t h = static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
        out[i] = f16 ? f16_to_float(h) : bf16_to_float(h);
      }
      break;
    }
    case SafetensorsDType::Other:
      ATTN_ASSERT(false, "unreachable");
  }
  return out;
}

}  // namespace attn
