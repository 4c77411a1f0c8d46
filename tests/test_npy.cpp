// Tests for io/npy (.npy/.npz) and io/atomic_file: round trips of every dtype and shape,
// deterministic bytes, interop with Debian's numpy (/usr/bin/python3), ZIP64, and every
// error path (truncation, bad magic/header/CRC/dtype) throwing IoError, never crashing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/npy.h"

namespace fs = std::filesystem;
using attn::DType;
using attn::IoError;
using attn::NpyArray;
using attn::NpyView;

namespace {

constexpr const char* kPython = "/usr/bin/python3";

// A unique directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("attnlab_npy_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
             (info ? info->name() : "x"));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string file_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void file_write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Files in dir whose name contains ".tmp." (AtomicFile leftovers).
int temp_files_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) ++n;
  }
  return n;
}

bool python_has_numpy() {
  static const int status =
      std::system((std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1").c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Runs a Python script with args; returns its exit code (or -1).
int python_run(const TempDir& dir, const std::string& script, const std::string& args) {
  const std::string py = dir.file("script.py");
  file_write(py, script);
  const int status = std::system((std::string(kPython) + " " + py + " " + args).c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

#define REQUIRE_NUMPY()                                                                  \
  do {                                                                                   \
    if (!python_has_numpy()) GTEST_SKIP() << "/usr/bin/python3 cannot import numpy";     \
  } while (0)

// Deterministic test bytes of one array.
struct TestArray {
  DType dtype;
  std::vector<int64_t> shape;
  int64_t chars = 0;
  std::vector<unsigned char> bytes;

  NpyView view(const std::string& name) const {
    return NpyView{name, dtype, shape, bytes.data(), chars};
  }
};

TestArray test_array(DType dtype, std::vector<int64_t> shape, int64_t chars = 0) {
  TestArray t{dtype, shape, dtype == DType::Unicode ? chars : 0, {}};
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const int64_t item = attn::dtype_size(dtype, t.chars);
  t.bytes.resize(static_cast<size_t>(n * item));
  for (int64_t i = 0; i < n; ++i) {
    unsigned char* p = t.bytes.data() + i * item;
    switch (dtype) {
      case DType::F64: {
        double v = 0.25 * static_cast<double>(i) - 3.0;
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::F32: {
        float v = 1.5f * static_cast<float>(i) + 0.125f;
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::I64: {
        int64_t v = (i * 1000003) - (int64_t{1} << 40);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::I32: {
        int32_t v = static_cast<int32_t>(i * 7 - 50);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::U8: p[0] = static_cast<unsigned char>(i * 37 % 256); break;
      case DType::Bool: p[0] = static_cast<unsigned char>(i % 3 == 0); break;
      case DType::Unicode:
        for (int64_t c = 0; c < t.chars; ++c) {
          char32_t ch =
              c < (i % (t.chars + 1)) ? static_cast<char32_t>(U'a' + (i + c) % 26) : U'\0';
          std::memcpy(p + 4 * c, &ch, 4);
        }
        break;
    }
  }
  return t;
}

void expect_same(const TestArray& want, const NpyArray& got) {
  EXPECT_EQ(got.dtype, want.dtype);
  EXPECT_EQ(got.shape, want.shape);
  EXPECT_EQ(got.unicode_chars, want.chars);
  EXPECT_EQ(got.bytes, want.bytes);
}

const std::vector<DType> kAllDtypes = {DType::F64, DType::F32, DType::I64, DType::I32,
                                       DType::U8,  DType::Bool, DType::Unicode};
const std::vector<std::vector<int64_t>> kShapes = {{},     {0},       {1},    {5},
                                                   {2, 3}, {2, 0, 3}, {3, 0}, {1, 2, 3, 4}};

std::string entry_name(size_t i) {
  std::string s = "a";
  s += std::to_string(i);
  return s;
}

// A v1/v2/v3 .npy image from a raw header dict (padded like numpy) and raw data.
std::string npy_image(const std::string& dict, const std::string& data, int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t n = h.size();
  out += static_cast<char>(n & 0xFF);
  out += static_cast<char>((n >> 8) & 0xFF);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xFF);
    out += static_cast<char>((n >> 24) & 0xFF);
  }
  return out + h + data;
}

std::string f64_bytes(std::vector<double> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

// Every outcome of reading `bytes` must be success or IoError (never a crash or other error).
template <typename Reader>
int read_outcome(const std::string& path, const std::string& bytes, Reader reader) {
  file_write(path, bytes);
  try {
    reader(path);
    return 0;
  } catch (const IoError&) {
    return 1;
  }
}

}  // namespace

// ---------------------------------------------------------------- .npy round trips

TEST(NpyRoundTrip, EveryDtypeAndShape) {
  TempDir dir;
  for (DType dt : kAllDtypes) {
    for (const auto& shape : kShapes) {
      const TestArray a = test_array(dt, shape, 3);
      const std::string path = dir.file("a.npy");
      attn::npy_write(path, a.view(""));
      const NpyArray got = attn::npy_read(path);
      SCOPED_TRACE(attn::dtype_descr(dt, a.chars) + " rank " + std::to_string(shape.size()));
      expect_same(a, got);
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      EXPECT_EQ(got.size(), n);
    }
  }
  EXPECT_EQ(temp_files_in(dir.path()), 0);
}

TEST(NpyRoundTrip, HeaderLayoutLikeNumpy) {
  TempDir dir;
  const TestArray a = test_array(DType::F64, {4, 3, 2});
  attn::npy_write(dir.file("a.npy"), a.view(""));
  const std::string bytes = file_read(dir.file("a.npy"));
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t hlen =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(bytes[10 + hlen - 1], '\n');
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3, 2), }";
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes.size(), 10 + hlen + 24 * 8);
}

TEST(NpyRoundTrip, Conversions) {
  TempDir dir;
  const std::vector<int32_t> i32 = {-3, 0, 7, 2147483647};
  attn::npy_write(dir.file("i.npy"), NpyView{"", DType::I32, {4}, i32.data()});
  const NpyArray a = attn::npy_read(dir.file("i.npy"));
  EXPECT_EQ(a.to_i64(), (std::vector<int64_t>{-3, 0, 7, 2147483647}));
  EXPECT_EQ(a.to_f64(), (std::vector<double>{-3, 0, 7, 2147483647}));

  const unsigned char flags[3] = {1, 0, 1};
  attn::npy_write(dir.file("b.npy"), NpyView{"", DType::Bool, {3}, flags});
  EXPECT_EQ(attn::npy_read(dir.file("b.npy")).to_i64(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(attn::npy_read(dir.file("b.npy")).to_f64(), (std::vector<double>{1, 0, 1}));

  const float f32[2] = {0.5f, -1.25f};
  attn::npy_write(dir.file("f.npy"), NpyView{"", DType::F32, {2}, f32});
  const NpyArray f = attn::npy_read(dir.file("f.npy"));
  EXPECT_EQ(f.to_f64(), (std::vector<double>{0.5, -1.25}));
  EXPECT_THROW(f.to_i64(), attn::UserError);
  EXPECT_THROW(f.text(), attn::UserError);

  const std::u32string s = U"h\u00e9llo \u2192 \U0001F642";
  attn::npy_write(dir.file("s.npy"), attn::npy_text("", s));
  const NpyArray t = attn::npy_read(dir.file("s.npy"));
  EXPECT_EQ(t.dtype, DType::Unicode);
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.unicode_chars, static_cast<int64_t>(s.size()));
  EXPECT_EQ(t.text(), "h\xc3\xa9llo \xe2\x86\x92 \xf0\x9f\x99\x82");
  EXPECT_THROW(t.to_f64(), attn::UserError);
  EXPECT_THROW(t.to_i64(), attn::UserError);
}

TEST(NpyRoundTrip, EmptyTextIsU1) {
  TempDir dir;
  const std::u32string empty;
  const NpyView v = attn::npy_text("m", empty);
  EXPECT_EQ(v.unicode_chars, 1);
  attn::npy_write(dir.file("e.npy"), v);
  const NpyArray a = attn::npy_read(dir.file("e.npy"));
  EXPECT_EQ(a.unicode_chars, 1);
  EXPECT_EQ(a.text(), "");
}

TEST(NpyRoundTrip, ReaderAcceptsOtherVersionsAndDescrForms) {
  TempDir dir;
  const std::string data = f64_bytes({1.0, 2.0, 3.0});
  const std::string path = dir.file("v.npy");
  for (int major : {1, 2, 3}) {
    for (const char* descr : {"<f8", "=f8", "f8", "|f8"}) {
      file_write(path, npy_image(std::string("{'descr': '") + descr +
                                     "', 'fortran_order': False, 'shape': (3,), }",
                                 data, major));
      SCOPED_TRACE(std::string(descr) + " v" + std::to_string(major));
      const NpyArray a = attn::npy_read(path);
      EXPECT_EQ(a.dtype, DType::F64);
      EXPECT_EQ(a.to_f64(), (std::vector<double>{1, 2, 3}));
    }
  }
  // Python 2 longs, double quotes, other key order, 1-d Fortran order (same bytes as C).
  file_write(path,
             npy_image("{\"shape\": (3L,), \"fortran_order\": True, \"descr\": \"<f8\"}", data));
  EXPECT_EQ(attn::npy_read(path).to_f64(), (std::vector<double>{1, 2, 3}));
  for (const char* descr : {"|u1", "u1", "<u1", "|b1", "b1", "?"}) {
    file_write(path, npy_image(std::string("{'descr': '") + descr +
                                   "', 'fortran_order': False, 'shape': (2,), }",
                               std::string("\x01\x00", 2)));
    EXPECT_EQ(attn::npy_read(path).to_i64(), (std::vector<int64_t>{1, 0})) << descr;
  }
  file_write(path, npy_image("{'descr': '<U0', 'fortran_order': False, 'shape': (2,), }", ""));
  EXPECT_EQ(attn::npy_read(path).unicode_chars, 0);
}

// ---------------------------------------------------------------- .npz round trips

TEST(NpzRoundTrip, SeveralEntries) {
  TempDir dir;
  const TestArray x = test_array(DType::F64, {2, 3, 4});
  const TestArray y = test_array(DType::I64, {7});
  const TestArray flag = test_array(DType::Bool, {});
  const TestArray none = test_array(DType::U8, {0});
  const TestArray words = test_array(DType::Unicode, {2, 2}, 4);
  const std::u32string meta = U"{\"task\": \"qsa\"}";
  const std::string path = dir.file("d.npz");
  attn::npz_write(path, {x.view("X"), y.view("y"), flag.view("flag"), none.view("none"),
                         words.view("words"), attn::npy_text("meta", meta)});
  const auto m = attn::npz_read(path);
  ASSERT_EQ(m.size(), 6u);
  expect_same(x, m.at("X"));
  expect_same(y, m.at("y"));
  expect_same(flag, m.at("flag"));
  expect_same(none, m.at("none"));
  expect_same(words, m.at("words"));
  EXPECT_EQ(m.at("meta").text(), "{\"task\": \"qsa\"}");
  EXPECT_EQ(temp_files_in(dir.path()), 0);

  attn::npz_write(dir.file("empty.npz"), {});
  EXPECT_TRUE(attn::npz_read(dir.file("empty.npz")).empty());
}

TEST(NpzRoundTrip, EveryDtypeAndShape) {
  TempDir dir;
  std::vector<TestArray> arrays;
  std::vector<NpyView> views;
  std::vector<std::string> names;
  for (DType dt : kAllDtypes) {
    for (const auto& shape : kShapes) arrays.push_back(test_array(dt, shape, 2));
  }
  for (size_t i = 0; i < arrays.size(); ++i) views.push_back(arrays[i].view(entry_name(i)));
  attn::npz_write(dir.file("all.npz"), views);
  const auto m = attn::npz_read(dir.file("all.npz"));
  ASSERT_EQ(m.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) expect_same(arrays[i], m.at(entry_name(i)));
}

TEST(NpzWrite, SameArraysGiveIdenticalBytes) {
  TempDir dir;
  const TestArray x = test_array(DType::F32, {3, 5});
  const TestArray y = test_array(DType::I32, {4});
  const std::u32string meta = U"same";
  const std::vector<NpyView> views = {x.view("x"), y.view("y"), attn::npy_text("meta", meta)};
  attn::npz_write(dir.file("a.npz"), views);
  attn::npz_write(dir.file("b.npz"), views);
  const std::string first = file_read(dir.file("a.npz"));
  EXPECT_EQ(first, file_read(dir.file("b.npz")));
  attn::npz_write(dir.file("a.npz"), views);  // overwrite in place
  EXPECT_EQ(first, file_read(dir.file("a.npz")));
  attn::npy_write(dir.file("a.npy"), x.view(""));
  attn::npy_write(dir.file("b.npy"), x.view(""));
  EXPECT_EQ(file_read(dir.file("a.npy")), file_read(dir.file("b.npy")));
  // Fixed DOS date 1980-01-01 00:00 (time 0x0000, date 0x0021) in the first local header.
  EXPECT_EQ(first.substr(10, 4), std::string("\x00\x00\x21\x00", 4));
}

TEST(NpzWrite, RefusesBadArguments) {
  TempDir dir;
  const TestArray x = test_array(DType::F64, {2});
  const std::string path = dir.file("bad.npz");
  EXPECT_THROW(attn::npz_write(path, {x.view("x"), x.view("x")}), attn::UserError);
  EXPECT_THROW(attn::npz_write(path, {x.view("")}), attn::UserError);
  NpyView neg = x.view("neg");
  neg.shape = {2, -1};
  EXPECT_THROW(attn::npz_write(path, {x.view("x"), neg}), attn::UserError);
  NpyView null = x.view("null");
  null.data = nullptr;
  EXPECT_THROW(attn::npz_write(path, {null}), attn::UserError);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(temp_files_in(dir.path()), 0);
}

// ---------------------------------------------------------------- ZIP64

TEST(NpzZip64, ForcedRecordsRoundTrip) {
  TempDir dir;
  const TestArray x = test_array(DType::F64, {3, 4});
  const TestArray y = test_array(DType::Unicode, {2}, 3);
  const std::string path = dir.file("z64.npz");
  attn::npz_write(path, {x.view("x"), y.view("y")}, /*force_zip64=*/true);
  const std::string bytes = file_read(path);
  EXPECT_NE(bytes.find(std::string("PK\x06\x06", 4)), std::string::npos);  // ZIP64 end record
  EXPECT_NE(bytes.find(std::string("PK\x06\x07", 4)), std::string::npos);  // ZIP64 locator
  const auto m = attn::npz_read(path);
  expect_same(x, m.at("x"));
  expect_same(y, m.at("y"));
  // Without forcing, small files carry no ZIP64 records.
  attn::npz_write(dir.file("plain.npz"), {x.view("x")});
  EXPECT_EQ(file_read(dir.file("plain.npz")).find(std::string("PK\x06\x06", 4)), std::string::npos);
}

// ---------------------------------------------------------------- numpy interop

TEST(NpyNumpy, SaveGivesSameBytesAsNumpy) {
  REQUIRE_NUMPY();
  TempDir dir;
  const std::vector<double> f64 = {0.0, 0.5, 1.0, 1.5, 2.0, 2.5};
  const std::vector<int64_t> i64 = {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12};
  const std::vector<int32_t> empty;
  const std::u32string text = U"hello";
  attn::npy_write(dir.file("a.npy"), NpyView{"", DType::F64, {2, 3}, f64.data()});
  attn::npy_write(dir.file("b.npy"), NpyView{"", DType::I64, {1, 2, 3, 2}, i64.data()});
  attn::npy_write(dir.file("c.npy"), NpyView{"", DType::I32, {0, 7}, empty.data()});
  attn::npy_write(dir.file("d.npy"), attn::npy_text("", text));
  attn::npy_write(dir.file("e.npy"), NpyView{"", DType::F64, {}, f64.data() + 3});
  const std::string script = R"(
import numpy as np, sys
d = sys.argv[1]
np.save(d + '/na.npy', np.arange(6, dtype='<f8').reshape(2, 3) * 0.5)
np.save(d + '/nb.npy', (np.arange(1, 13) * np.array([-1, 1] * 6)).astype('<i8').reshape(1, 2, 3, 2))
np.save(d + '/nc.npy', np.zeros((0, 7), dtype='<i4'))
np.save(d + '/nd.npy', np.array('hello'))
np.save(d + '/ne.npy', np.float64(1.5))
)";
  ASSERT_EQ(python_run(dir, script, dir.path().string()), 0);
  for (const char* n : {"a", "b", "c", "d", "e"}) {
    EXPECT_EQ(file_read(dir.file(std::string(n) + ".npy")),
              file_read(dir.file(std::string("n") + n + ".npy")))
        << "array " << n;
  }
}

TEST(NpzNumpy, ReadsNumpyCompressedAndPlain) {
  REQUIRE_NUMPY();
  TempDir dir;
  const std::string script = R"(
import numpy as np, sys
d = sys.argv[1]
arrays = dict(
    f8=np.arange(24, dtype='<f8').reshape(2, 3, 4) / 8,
    f4=np.linspace(-1, 1, 5, dtype='<f4'),
    i8=np.array([[-(2**40), 3], [5, 2**62]], dtype='<i8'),
    i4=np.array([-7, 0, 7], dtype='<i4'),
    u1=np.arange(256, dtype='|u1'),
    b1=np.array([True, False, True]),
    text=np.array('caf\u00e9'),
    words=np.array(['ab', 'cde']),
    scalar=np.float64(2.5),
    empty=np.zeros((0, 3), dtype='<f8'),
    big=np.tile(np.arange(1000, dtype='<f8'), 300),
)
np.savez_compressed(d + '/c.npz', **arrays)
np.savez(d + '/p.npz', **arrays)
)";
  ASSERT_EQ(python_run(dir, script, dir.path().string()), 0);
  for (const char* file : {"c.npz", "p.npz"}) {
    SCOPED_TRACE(file);
    const auto m = attn::npz_read(dir.file(file));
    ASSERT_EQ(m.size(), 11u);
    const NpyArray& f8 = m.at("f8");
    EXPECT_EQ(f8.dtype, DType::F64);
    EXPECT_EQ(f8.shape, (std::vector<int64_t>{2, 3, 4}));
    EXPECT_EQ(f8.to_f64()[23], 23.0 / 8);
    EXPECT_EQ(m.at("f4").dtype, DType::F32);
    EXPECT_EQ(m.at("f4").to_f64(), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
    EXPECT_EQ(m.at("i8").to_i64(),
              (std::vector<int64_t>{-(int64_t{1} << 40), 3, 5, int64_t{1} << 62}));
    EXPECT_EQ(m.at("i4").to_i64(), (std::vector<int64_t>{-7, 0, 7}));
    EXPECT_EQ(m.at("u1").to_i64()[255], 255);
    EXPECT_EQ(m.at("b1").dtype, DType::Bool);
    EXPECT_EQ(m.at("b1").to_i64(), (std::vector<int64_t>{1, 0, 1}));
    EXPECT_EQ(m.at("text").text(), "caf\xc3\xa9");
    EXPECT_EQ(m.at("words").unicode_chars, 3);
    EXPECT_EQ(m.at("words").shape, (std::vector<int64_t>{2}));
    EXPECT_TRUE(m.at("scalar").shape.empty());
    EXPECT_EQ(m.at("scalar").to_f64(), (std::vector<double>{2.5}));
    EXPECT_EQ(m.at("empty").shape, (std::vector<int64_t>{0, 3}));
    EXPECT_EQ(m.at("empty").size(), 0);
    const std::vector<double> big = m.at("big").to_f64();
    ASSERT_EQ(big.size(), 300000u);
    EXPECT_EQ(big[299999], 999.0);
  }
  EXPECT_LT(fs::file_size(dir.file("c.npz")), fs::file_size(dir.file("p.npz")));  // really deflated
}

TEST(NpzNumpy, NumpyReadsOursIncludingZip64) {
  REQUIRE_NUMPY();
  TempDir dir;
  const std::vector<double> x = {0.0, 0.5, 1.0, 1.5, 2.0, 2.5};
  const std::vector<int64_t> idx = {3, -1, 4};
  const unsigned char mask[2] = {1, 0};
  const std::vector<uint8_t> none;
  const std::u32string meta = U"m\u00e9ta";
  const std::vector<NpyView> views = {NpyView{"X", DType::F64, {2, 3}, x.data()},
                                      NpyView{"idx", DType::I64, {3}, idx.data()},
                                      NpyView{"mask", DType::Bool, {2}, mask},
                                      NpyView{"none", DType::U8, {0, 2}, none.data()},
                                      attn::npy_text("meta", meta)};
  attn::npz_write(dir.file("plain.npz"), views);
  attn::npz_write(dir.file("zip64.npz"), views, /*force_zip64=*/true);
  const std::string script = R"(
import numpy as np, sys, zipfile
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        infos = zf.infolist()
        names = ['X.npy', 'idx.npy', 'mask.npy', 'none.npy', 'meta.npy']
        assert [i.filename for i in infos] == names, infos
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)
    z = np.load(path)
    assert z['X'].dtype == np.float64 and z['X'].shape == (2, 3), z['X']
    assert (z['X'] == np.arange(6).reshape(2, 3) * 0.5).all()
    assert z['idx'].dtype == np.int64 and list(z['idx']) == [3, -1, 4]
    assert z['mask'].dtype == np.bool_ and list(z['mask']) == [True, False]
    assert z['none'].dtype == np.uint8 and z['none'].shape == (0, 2)
    assert z['meta'].dtype == np.dtype('<U4') and str(z['meta']) == 'm\u00e9ta'
)";
  EXPECT_EQ(python_run(dir, script, dir.file("plain.npz") + " " + dir.file("zip64.npz")), 0);
}

// ---------------------------------------------------------------- .npy errors

TEST(NpyRead, TruncatedFilesThrow) {
  TempDir dir;
  const TestArray a = test_array(DType::F64, {4, 5});
  attn::npy_write(dir.file("a.npy"), a.view(""));
  const std::string full = file_read(dir.file("a.npy"));
  for (size_t len = 0; len < full.size(); ++len) {
    file_write(dir.file("t.npy"), full.substr(0, len));
    EXPECT_THROW(attn::npy_read(dir.file("t.npy")), IoError) << "length " << len;
  }
  file_write(dir.file("t.npy"), full + "x");  // trailing garbage
  EXPECT_THROW(attn::npy_read(dir.file("t.npy")), IoError);
}

TEST(NpyRead, WrongMagicThrows) {
  TempDir dir;
  file_write(dir.file("m.npy"),
             "\x93NUMPZ" + npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                     f64_bytes({1}))
                               .substr(6));
  EXPECT_THROW(attn::npy_read(dir.file("m.npy")), IoError);
  file_write(dir.file("text.npy"), "just some text, not an array at all\n");
  EXPECT_THROW(attn::npy_read(dir.file("text.npy")), IoError);
  const TestArray a = test_array(DType::F64, {2});
  attn::npz_write(dir.file("z.npz"), {a.view("a")});
  try {
    attn::npy_read(dir.file("z.npz"));
    FAIL() << "reading an npz as npy must throw";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("npz"), std::string::npos) << e.what();
  }
  EXPECT_THROW(attn::npy_read(dir.file("missing.npy")), IoError);
  EXPECT_THROW(attn::npy_read(dir.path().string()), IoError);  // a directory
}

TEST(NpyRead, CorruptHeadersThrow) {
  TempDir dir;
  const std::string data = f64_bytes({1, 2});
  const std::vector<std::string> bad = {
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), ",       // unclosed dict
      "{'descr': '<f8', 'fortran_order': Flase, 'shape': (2,), }",      // bad literal
      "{'descr': '<f8', 'fortran_order': False}",                       // missing key
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}",  // extra key
      "{'descr': '<f8', 'fortran_order': False, 'shape': [2], }",       // list shape
      "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }",     // negative dim
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",      // shape needs 24 bytes
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",      // 8 bytes left over
      "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }",          // not a bool
      "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } trailing",
      "['descr', '<f8']",
      "{'descr: '<f8', 'fortran_order': False, 'shape': (2,), }",
      "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{",
      "",
  };
  for (const std::string& dict : bad) {
    file_write(dir.file("h.npy"), npy_image(dict, data));
    EXPECT_THROW(attn::npy_read(dir.file("h.npy")), IoError) << dict;
  }
  // Unsupported format versions.
  std::string v4 = npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", data, 2);
  v4[6] = 4;
  file_write(dir.file("v.npy"), v4);
  EXPECT_THROW(attn::npy_read(dir.file("v.npy")), IoError);
}

TEST(NpyRead, HeaderLengthPastEndThrows) {
  TempDir dir;
  std::string img =
      npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f64_bytes({1, 2}));
  img[8] = '\xff';
  img[9] = '\xff';
  file_write(dir.file("h.npy"), img);
  try {
    attn::npy_read(dir.file("h.npy"));
    FAIL() << "must throw";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("h.npy")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("past the end"), std::string::npos) << e.what();
  }
  std::string v2 =
      npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f64_bytes({1, 2}), 2);
  v2[11] = '\x7f';  // 2 GB header length
  file_write(dir.file("h2.npy"), v2);
  EXPECT_THROW(attn::npy_read(dir.file("h2.npy")), IoError);
}

TEST(NpyRead, UnsupportedDtypesThrow) {
  TempDir dir;
  const std::string data(16, '\0');
  const std::vector<std::string> descrs = {"<i2", ">f8", ">i4", "|O",      "<c16",
                                           "|S5", ">U2", "<u8", "<M8[ns]", "f"};
  for (const std::string& d : descrs) {
    file_write(dir.file("d.npy"),
               npy_image("{'descr': '" + d + "', 'fortran_order': False, 'shape': (2,), }", data));
    try {
      attn::npy_read(dir.file("d.npy"));
      ADD_FAILURE() << d << " must throw";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(d), std::string::npos) << e.what();
    }
  }
  // Structured dtype and Fortran order of a 2-d array.
  file_write(
      dir.file("s.npy"),
      npy_image("{'descr': [('a', '<f8'), ('b', '<f8')], 'fortran_order': False, 'shape': (1,), }",
                data));
  EXPECT_THROW(attn::npy_read(dir.file("s.npy")), IoError);
  file_write(dir.file("f.npy"),
             npy_image("{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2), }", data));
  EXPECT_THROW(attn::npy_read(dir.file("f.npy")), IoError);
}

TEST(NpyRead, ByteFlipsNeverCrash) {
  TempDir dir;
  const TestArray a = test_array(DType::I32, {3, 2});
  attn::npy_write(dir.file("a.npy"), a.view(""));
  const std::string full = file_read(dir.file("a.npy"));
  int errors = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string b = full;
      b[i] = static_cast<char>(b[i] ^ mask);
      errors += read_outcome(dir.file("x.npy"), b, [](const std::string& p) { attn::npy_read(p); });
    }
  }
  EXPECT_GT(errors, 0);
}

// ---------------------------------------------------------------- .npz errors

TEST(NpzRead, BadCrcThrows) {
  TempDir dir;
  const TestArray a = test_array(DType::F64, {10});
  attn::npz_write(dir.file("a.npz"), {a.view("a")});
  std::string bytes = file_read(dir.file("a.npz"));
  // Flip a byte of the array data (the last data byte sits just before the central directory).
  const size_t cd = bytes.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(cd, std::string::npos);
  bytes[cd - 1] ^= 0x10;
  file_write(dir.file("a.npz"), bytes);
  try {
    attn::npz_read(dir.file("a.npz"));
    FAIL() << "must throw";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("CRC"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a.npy"), std::string::npos) << e.what();
  }
}

TEST(NpzRead, TruncatedAndCorruptFilesThrow) {
  TempDir dir;
  const TestArray a = test_array(DType::F32, {3, 3});
  const TestArray b = test_array(DType::Unicode, {2}, 2);
  for (bool zip64 : {false, true}) {
    attn::npz_write(dir.file("a.npz"), {a.view("a"), b.view("b")}, zip64);
    const std::string full = file_read(dir.file("a.npz"));
    for (size_t len = 0; len < full.size(); ++len) {
      file_write(dir.file("t.npz"), full.substr(0, len));
      EXPECT_THROW(attn::npz_read(dir.file("t.npz")), IoError) << "length " << len;
    }
    int errors = 0;
    for (size_t i = 0; i < full.size(); ++i) {
      std::string c = full;
      c[i] = static_cast<char>(c[i] ^ 0xff);
      errors += read_outcome(dir.file("x.npz"), c, [](const std::string& p) { attn::npz_read(p); });
    }
    EXPECT_GT(errors, static_cast<int>(full.size()) / 2);
  }
  // Not a zip at all, and an .npy given as .npz.
  file_write(dir.file("n.npz"), std::string(100, 'x'));
  EXPECT_THROW(attn::npz_read(dir.file("n.npz")), IoError);
  attn::npy_write(dir.file("a.npy"), a.view(""));
  EXPECT_THROW(attn::npz_read(dir.file("a.npy")), IoError);
  EXPECT_THROW(attn::npz_read(dir.file("missing.npz")), IoError);
}

TEST(NpzRead, CorruptCompressedEntriesThrow) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(python_run(dir,
                       "import numpy as np, sys\n"
                       "np.savez_compressed(sys.argv[1], a=np.arange(2000.0), b=np.array('xyz'))\n",
                       dir.file("c.npz")),
            0);
  const std::string full = file_read(dir.file("c.npz"));
  ASSERT_EQ(attn::npz_read(dir.file("c.npz")).at("a").to_f64()[1999], 1999.0);
  for (size_t len = 0; len < full.size(); len += 7) {
    file_write(dir.file("t.npz"), full.substr(0, len));
    EXPECT_THROW(attn::npz_read(dir.file("t.npz")), IoError) << "length " << len;
  }
  int errors = 0;
  for (size_t i = 0; i < full.size(); i += 3) {
    std::string c = full;
    c[i] = static_cast<char>(c[i] ^ 0x55);
    errors += read_outcome(dir.file("x.npz"), c, [](const std::string& p) { attn::npz_read(p); });
  }
  EXPECT_GT(errors, 0);
}

TEST(NpzRead, UnsupportedDtypeInEntryNamesEntry) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(python_run(dir,
                       "import numpy as np, sys\n"
                       "np.savez(sys.argv[1], ok=np.zeros(2), half=np.zeros(3, dtype='<f2'))\n",
                       dir.file("h.npz")),
            0);
  try {
    attn::npz_read(dir.file("h.npz"));
    FAIL() << "must throw";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("half.npy"), std::string::npos) << what;
    EXPECT_NE(what.find("<f2"), std::string::npos) << what;
  }
}

// ---------------------------------------------------------------- AtomicFile

TEST(AtomicFile, CommitReplacesTargetAndLeavesNoTemp) {
  TempDir dir;
  const std::string path = dir.file("out.bin");
  file_write(path, "old contents");
  {
    attn::AtomicFile f(path);
    EXPECT_EQ(f.temp_path(), path + ".tmp." + std::to_string(::getpid()));
    EXPECT_TRUE(fs::exists(f.temp_path()));
    f.write("new ", 4);
    f.write("contents", 8);
    EXPECT_EQ(file_read(path), "old contents");  // untouched until commit
    f.commit();
    EXPECT_EQ(f.bytes_written(), 12u);
  }
  EXPECT_EQ(file_read(path), "new contents");
  EXPECT_EQ(temp_files_in(dir.path()), 0);
}

TEST(AtomicFile, ThrowMidWriteLeavesNoTempAndNoPartialTarget) {
  TempDir dir;
  const std::string fresh = dir.file("fresh.bin");
  const std::string existing = dir.file("existing.bin");
  file_write(existing, "keep me");
  for (const std::string& path : {fresh, existing}) {
    try {
      attn::AtomicFile f(path);
      f.write("partial", 7);
      throw std::runtime_error("simulated failure mid-write");
    } catch (const std::runtime_error&) {
    }
  }
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_EQ(file_read(existing), "keep me");
  EXPECT_EQ(temp_files_in(dir.path()), 0);
}

TEST(AtomicFile, RefusesSecondWriterOfSamePath) {
  TempDir dir;
  attn::AtomicFile first(dir.file("x"));
  EXPECT_THROW(attn::AtomicFile second(dir.file("x")), IoError);
  first.write("ok", 2);
  first.commit();
  attn::AtomicFile again(dir.file("x"));  // free again after commit
}

TEST(AtomicFile, OpenErrorsNamePath) {
  TempDir dir;
  const std::string missing = dir.file("no/such/dir/out.npz");
  try {
    attn::AtomicFile f(missing);
    FAIL() << "must throw";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_THROW(attn::AtomicFile f(dir.path().string()), IoError);  // a directory
}

TEST(AtomicFile, OutputPathCheck) {
  TempDir dir;
  EXPECT_NO_THROW(attn::output_path_check(dir.file("ok.npz"), 1024));
  const std::string missing_dir = dir.file("missing");
  const std::string missing = missing_dir + "/out.npz";
  try {
    attn::output_path_check(missing, 10);
    FAIL() << "must throw";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(missing), std::string::npos) << what;
    EXPECT_NE(what.find("mkdir"), std::string::npos) << what;
  }
  try {
    attn::output_path_check(dir.file("huge.npz"), uint64_t{1} << 62);
    FAIL() << "must throw";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("disk space"), std::string::npos) << e.what();
  }
  EXPECT_THROW(attn::output_path_check(dir.path().string(), 1), IoError);
  file_write(dir.file("plain"), "x");
  EXPECT_THROW(attn::output_path_check(dir.file("plain") + "/out.npz", 1), IoError);
  // The writers check first and leave nothing behind.
  const std::vector<double> x = {1, 2};
  EXPECT_THROW(attn::npy_write(missing, NpyView{"", DType::F64, {2}, x.data()}), IoError);
  EXPECT_THROW(attn::npz_write(missing, {NpyView{"x", DType::F64, {2}, x.data()}}), IoError);
  EXPECT_FALSE(fs::exists(missing_dir));
}

TEST(AtomicFile, SignalRemovesTempFile) {
  TempDir dir;
  const std::string path = dir.file("sig.bin");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    attn::atomic_file_install_signal_cleanup();
    attn::atomic_file_install_signal_cleanup();  // idempotent
    attn::AtomicFile f(path);
    f.write("partial", 7);
    if (!fs::exists(f.temp_path())) ::_exit(3);
    ::kill(::getpid(), SIGTERM);
    ::_exit(4);  // not reached: the re-raised SIGTERM kills the process
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status))
      << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(temp_files_in(dir.path()), 0);
}

TEST(AtomicFile, RemoveOpenTempsForOwnHandlers) {
  TempDir dir;
  attn::AtomicFile f(dir.file("h.bin"));
  f.write("x", 1);
  ASSERT_TRUE(fs::exists(f.temp_path()));
  attn::atomic_file_remove_open_temps();
  EXPECT_FALSE(fs::exists(f.temp_path()));
  EXPECT_THROW(f.commit(), IoError);  // the temp file is gone: rename fails clearly
  EXPECT_FALSE(fs::exists(dir.file("h.bin")));
}
