// numpy .npz files (see npy.h for the contract): ZIP archives of NAME.npy entries.
// npz_write writes STORED entries, with ZIP64 records only where needed; npz_read reads
// STORED or DEFLATED (zlib) entries and ZIP64, checking every CRC-32 and every size and
// offset against the file. Each entry is a .npy image, made and read with npy_internal.h.
#include "io/npy.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/npy_internal.h"

namespace attn {

using namespace npy_detail;

namespace {

constexpr uint32_t k32 = 0xFFFFFFFFu;  // ZIP sentinel: "see the ZIP64 record"
constexpr uint32_t k16 = 0xFFFFu;

uint32_t crc_update(uint32_t crc, const void* data, uint64_t n) {
  if (n == 0) return crc;  // zlib treats a null buffer as "return the initial value"
  return static_cast<uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(n)));
}

// ---- reading: inflate and CRC sources ----

class InflateSource final : public ByteSource {  // raw deflate, as in ZIP method 8
 public:
  InflateSource(RegionSource& in, std::string where)
      : in_(in), where_(std::move(where)), buf_(1 << 16) {
    std::memset(&zs_, 0, sizeof zs_);
    if (inflateInit2(&zs_, -MAX_WBITS) != Z_OK)
      throw IoError(where_ + ": cannot start zlib inflate");
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
    return IoError(path + ": corrupt .npz (" + what +
                   "); the file is damaged or truncated, re-create it");
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
    throw IoError(
        path +
        ": not a .npz file (no ZIP end record); it is another format or truncated, re-create it");
  }
  const uint64_t end_pos = size - tail_len + static_cast<uint64_t>(at);
  const unsigned char* e = tail.data() + at;
  uint64_t disk = get16(e + 4), cd_disk = get16(e + 6), n_disk = get16(e + 8),
           n_total = get16(e + 10);
  uint64_t cd_size = get32(e + 12), cd_offset = get32(e + 16);
  uint64_t cd_limit = end_pos;  // the central directory ends before this
  if (end_pos >= 20 && get32(e - 20) == kSigLocator64) {
    const unsigned char* loc = e - 20;
    const uint64_t z = get64(loc + 8);
    if (get32(loc + 4) != 0 || get32(loc + 16) != 1) {
      throw IoError(path +
                    ": multi-volume ZIP archives are not supported; re-create it as one file");
    }
    if (z > end_pos - 20 || end_pos - 20 - z < 56)
      throw corrupt("ZIP64 end record outside the file");
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
    throw corrupt("central directory at " + std::to_string(cd_offset) + " (+" +
                  std::to_string(cd_size) + " bytes) lies outside the file");
  }
  if (n_total > cd_size / 46) throw corrupt("entry count does not fit the central directory");
  std::vector<unsigned char> cd(cd_size);
  f.read_at(cd_offset, cd.data(), cd_size, path);

  std::vector<ZipEntry> entries;
  uint64_t p = 0;
  for (uint64_t k = 0; k < n_total; ++k) {
    if (cd_size - p < 46 || get32(cd.data() + p) != kSigCentral)
      throw corrupt("bad central directory entry");
    const unsigned char* c = cd.data() + p;
    ZipEntry z;
    z.flags = get16(c + 8);
    z.method = get16(c + 10);
    z.crc = get32(c + 16);
    z.csize = get32(c + 20);
    z.usize = get32(c + 24);
    const uint64_t nlen = get16(c + 28), xlen = get16(c + 30), clen = get16(c + 32);
    z.offset = get32(c + 42);
    if (cd_size - p - 46 < nlen + xlen + clen)
      throw corrupt("central directory entry runs past its end");
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
    if (z.offset > cd_offset || cd_offset - z.offset < 30)
      throw corrupt("entry '" + z.name + "' lies outside the file");
    unsigned char h[30];
    f.read_at(z.offset, h, 30, where);
    if (get32(h) != kSigLocal) throw corrupt("bad local header of '" + z.name + "'");
    const uint64_t nlen = get16(h + 26), xlen = get16(h + 28);
    if (cd_offset - z.offset - 30 < nlen + xlen)
      throw corrupt("entry '" + z.name + "' lies outside the file");
    std::string local_name(nlen, '\0');
    f.read_at(z.offset + 30, local_name.data(), nlen, where);
    if (local_name != z.name)
      throw corrupt("entry names '" + z.name + "' and '" + local_name + "' disagree");
    z.offset += 30 + nlen + xlen;  // now: where the data starts
    if (z.csize > cd_offset - z.offset)
      throw corrupt("data of entry '" + z.name + "' runs past its end");
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
std::string zip_end_records(uint64_t n, uint64_t cd_offset, uint64_t cd_size, bool zip64,
                            bool force) {
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

// ---- public: writing ----

void npz_write(const std::string& path, const std::vector<NpyView>& arrays, bool force_zip64) {
  // Plan every size and offset first, so that bad arguments and a full disk are reported
  // before any work (CRCs of large arrays) or any file is made.
  std::vector<NpzEntryPlan> plan;
  std::set<std::string> names;
  uint64_t offset = 0, cd_size = 0;
  for (const NpyView& a : arrays) {
    if (a.name.empty())
      throw UserError(path + ": an array has an empty name; give every npz entry a name");
    if (!names.insert(a.name).second) {
      throw UserError(path + ": two arrays are named '" + a.name +
                      "'; npz entry names must be distinct");
    }
    NpzEntryPlan p;
    p.view = &a;
    p.zip_name = a.name + ".npy";
    if (p.zip_name.size() > 0xFFFF) {
      throw UserError(path + ": array name '" + a.name.substr(0, 40) +
                      "...' is too long for a ZIP entry");
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

std::map<std::string, NpyArray> npz_read(const std::string& path) {
  ReadFile f(path);
  const std::vector<ZipEntry> entries = zip_directory(f, path);
  std::map<std::string, NpyArray> out;
  for (const ZipEntry& z : entries) {
    const std::string where = path + " (entry '" + z.name + "')";
    if (z.flags & 1)
      throw IoError(where + ": encrypted entries are not supported; save it without encryption");
    if (z.name.size() < 4 || z.name.compare(z.name.size() - 4, 4, ".npy") != 0) {
      throw IoError(where + ": not a .npy entry; an .npz holds only NAME.npy arrays (np.savez)");
    }
    const std::string key = z.name.substr(0, z.name.size() - 4);
    if (out.count(key))
      throw IoError(where + ": duplicate entry; the archive is corrupt, re-create it");
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
                      " is impossible for " + std::to_string(z.csize) +
                      " compressed bytes); re-create it");
      }
      InflateSource inflater(raw, where);
      CrcSource src(inflater);
      a = npy_from_source(src, z.usize, where);
      unsigned char extra;
      if (src.read(&extra, 1) != 0) {
        throw IoError(where +
                      ": corrupt .npz (decompresses to more bytes than recorded); re-create it");
      }
      crc = src.crc();
    } else {
      throw IoError(where + ": compression method " + std::to_string(z.method) +
                    " is not supported (only stored and deflated, as np.savez and "
                    "np.savez_compressed write)");
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

}  // namespace attn
