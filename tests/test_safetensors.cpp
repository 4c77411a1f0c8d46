// Tests for io/safetensors and io/half: round trips of F64/F32/F16/BF16, float16 and
// bfloat16 conversions against exhaustive and nearest-value references, hand-written
// files as the format documents them, and every malformed-file path (truncation at every
// length, wrong offsets, huge header lengths, non-JSON and ill-typed headers) refused
// with one clear line, never a crash or an out-of-bounds read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "core/error.h"
#include "core/rng.h"
#include "io/half.h"
#include "io/safetensors.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_st_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A file image: u64 LE header length, header text, data bytes.
std::string image(const std::string& header, const std::string& data = "") {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return s + header + data;
}

std::string image_with_length(uint64_t length, const std::string& rest) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xFF);
  return s + rest;
}

// A string literal with its embedded NULs (not its terminator).
template <size_t N>
std::string literal(const char (&s)[N]) {
  return std::string(s, N - 1);
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s.append(reinterpret_cast<const char*>(&v), 4);
  return s;
}

// Parses an image from memory; returns the error message ("" if it parsed).
std::string refusal(const std::string& bytes) {
  try {
    SafetensorsFile f = SafetensorsFile::from_memory(bytes.data(), bytes.size(), "x.safetensors");
    for (const auto& e : f.entries()) {
      if (e.dtype != SafetensorsDType::Other) f.read_f64(e.name);
    }
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

void expect_refused(const std::string& bytes, const std::string& needle) {
  const std::string msg = refusal(bytes);
  EXPECT_FALSE(msg.empty()) << "accepted: " << needle;
  EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  EXPECT_EQ(msg.rfind("x.safetensors", 0), 0u) << "does not name the file: " << msg;
}

// ---- half precision ----

TEST(SafetensorsHalf, KnownValues) {
  EXPECT_EQ(f16_from_float(1.0f), 0x3C00);
  EXPECT_EQ(f16_from_float(-2.0f), 0xC000);
  EXPECT_EQ(f16_from_float(65504.0f), 0x7BFF);
  EXPECT_EQ(f16_from_float(65519.0f), 0x7BFF);  // below the midpoint to 2^16
  EXPECT_EQ(f16_from_float(65520.0f), 0x7C00);  // the midpoint ties to even: inf
  EXPECT_EQ(f16_from_float(0.1f), 0x2E66);
  EXPECT_EQ(f16_from_float(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f16_from_float(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: 0
  EXPECT_EQ(f16_from_float(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f16_from_float(-0.0f), 0x8000);
  EXPECT_EQ(f16_from_float(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(f16_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_float(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isnan(f16_to_float(0x7E00)));
  EXPECT_EQ(bf16_from_float(1.0f), 0x3F80);
  EXPECT_EQ(bf16_from_float(1.0f + std::ldexp(1.0f, -8)), 0x3F80);  // tie to even (down)
  EXPECT_EQ(bf16_from_float(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie to even (up)
  EXPECT_EQ(bf16_to_float(0xC040), -3.0f);
  EXPECT_EQ(bf16_from_float(std::numeric_limits<float>::max()), 0x7F80);  // rounds to inf
  EXPECT_TRUE(std::isnan(bf16_to_float(bf16_from_float(std::nanf("")))));
}

// Every 16-bit pattern converts to float and back to itself (NaNs stay NaNs).
TEST(SafetensorsHalf, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_float(static_cast<uint16_t>(h));
    const float b = bf16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_float(f16_from_float(f)))) << h;
    } else {
      ASSERT_EQ(f16_from_float(f), h) << h;
    }
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(bf16_from_float(b)))) << h;
    } else {
      ASSERT_EQ(bf16_from_float(b), h) << h;
    }
  }
}

// Rounding against a reference: the result is a nearest representable value, ties to
// an even pattern, over random floats from 2^-28 to 2^15 (subnormal to large halves).
TEST(SafetensorsHalf, RoundsToNearestEven) {
  Rng rng(7, "test.half", 0);
  for (int trial = 0; trial < 20000; ++trial) {
    const float x = static_cast<float>(
        std::ldexp(rng.uniform() * 2.0 - 1.0, static_cast<int>(rng.uniform_int(43)) - 27));
    for (int fmt = 0; fmt < 2; ++fmt) {
      const auto to = fmt == 0 ? f16_to_float : bf16_to_float;
      const uint16_t r = fmt == 0 ? f16_from_float(x) : bf16_from_float(x);
      const double err = std::fabs(static_cast<double>(to(r)) - x);
      for (int step : {-1, 1}) {
        const uint16_t nb = static_cast<uint16_t>(r + step);
        if ((nb & 0x7FFF) == 0x7FFF || ((r ^ nb) & 0x8000)) continue;  // wrapped or changed sign
        const float v = to(nb);
        if (std::isnan(v) || std::isinf(v)) continue;
        const double nerr = std::fabs(static_cast<double>(v) - x);
        ASSERT_LE(err, nerr) << "fmt " << fmt << " x " << x;
        if (err == nerr) {
          ASSERT_EQ(r & 1, 0) << "tie not to even, x " << x;
        }
      }
    }
  }
}

// ---- round trips and the documented format ----

TEST_F(SafetensorsTest, RoundTripEveryFloatDtype) {
  const std::vector<double> v = {1.0, -2.5, 0.1, 1e-6, 65504.0, -0.0, 3.0e38 / 1e30, 1.0 / 3.0};
  const std::vector<double> scalar = {42.0};
  const std::vector<SafetensorsView> views = {
      {"w.f64", SafetensorsDType::F64, {2, 4}, v.data()},
      {"w.f32", SafetensorsDType::F32, {4, 2}, v.data()},
      {"w.f16", SafetensorsDType::F16, {8}, v.data()},
      {"w.bf16", SafetensorsDType::BF16, {2, 2, 2}, v.data()},
      {"scalar", SafetensorsDType::F32, {}, scalar.data()},
      {"empty", SafetensorsDType::F16, {0, 3}, nullptr},
      {"empty64",
       SafetensorsDType::F64,
       {4, 0},
       nullptr},  // fuzzer find: memcpy of 0 bytes from null
  };
  safetensors_write(path("a.safetensors"), views,
                    {{"num_attention_heads", "12"}, {"format", "pt"}});
  SafetensorsFile f(path("a.safetensors"));
  ASSERT_EQ(f.entries().size(), 7u);
  EXPECT_EQ(f.entries()[0].name, "empty");  // sorted by name
  EXPECT_EQ(f.metadata().at("num_attention_heads"), "12");
  EXPECT_EQ(f.find("w.bf16")->shape, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(f.find("w.f16")->dtype_name, "F16");
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_EQ(f.read_f64("w.f64"), v);
  EXPECT_EQ(f.read_f64("scalar"), std::vector<double>{42.0});
  EXPECT_TRUE(f.read_f64("empty").empty());
  EXPECT_TRUE(f.read_f64("empty64").empty());
  const auto f32 = f.read_f64("w.f32"), f16 = f.read_f64("w.f16"), bf16 = f.read_f64("w.bf16");
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(f32[i], static_cast<float>(v[i]));
    EXPECT_EQ(f16[i], f16_to_float(f16_from_float(static_cast<float>(v[i]))));
    EXPECT_EQ(bf16[i], bf16_to_float(bf16_from_float(static_cast<float>(v[i]))));
  }
  EXPECT_EQ(f16[2], 0.0999755859375);  // 0.1 in float16
  EXPECT_EQ(f16[4], 65504.0);
  EXPECT_EQ(bf16[2], 0.10009765625);  // 0.1 in bfloat16
  EXPECT_EQ(std::signbit(f16[5]), true);
  // Memory images read the same as files.
  const std::string bytes = test::file_read(path("a.safetensors"));
  SafetensorsFile m = SafetensorsFile::from_memory(bytes.data(), bytes.size(), "mem");
  EXPECT_EQ(m.read_f64("w.bf16"), bf16);
}

// The writer's bytes are those of the format's documentation (and the Python library):
// compact JSON, metadata first, offsets contiguous, header padded to 8 with spaces.
TEST_F(SafetensorsTest, WriterBytesAreTheDocumentedLayout) {
  const std::vector<double> a = {1.0, 2.0};
  safetensors_write(path("w.safetensors"), {{"a", SafetensorsDType::F32, {2}, a.data()}},
                    {{"k", "v"}});
  const std::string header =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  EXPECT_EQ(test::file_read(path("w.safetensors")), image(padded, f32_bytes({1.0f, 2.0f})));
}

TEST_F(SafetensorsTest, ReadsAHandWrittenFile) {
  // As another writer might lay it out: keys in any order, spaces, other dtypes.
  const std::string header =
      R"({ "b": {"shape": [1, 2], "data_offsets": [8, 16], "dtype": "F32"},
          "ids": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]},
          "odd": {"dtype": "F8_E4M3", "shape": [0], "data_offsets": [16, 16]},
          "__metadata__": {"format": "pt"} }   )";
  std::string data(8, '\x07');
  data += f32_bytes({0.5f, -4.0f});
  const std::string bytes = image(header, data);
  SafetensorsFile f = SafetensorsFile::from_memory(bytes.data(), bytes.size(), "hand");
  EXPECT_EQ(f.read_f64("b"), (std::vector<double>{0.5, -4.0}));
  EXPECT_EQ(f.find("ids")->dtype, SafetensorsDType::Other);
  EXPECT_EQ(f.find("ids")->item_bytes, 8);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  try {
    f.read_f64("ids");
    ADD_FAILURE() << "read an I64 tensor as numbers";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype I64"), std::string::npos) << e.what();
  }
  // An unknown dtype name is indexed (offsets checked) but not readable.
  const std::string unknown =
      image(R"({"x":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", "ab");
  SafetensorsFile u = SafetensorsFile::from_memory(unknown.data(), unknown.size(), "u");
  EXPECT_EQ(u.find("x")->item_bytes, 0);
  EXPECT_THROW(u.read_f64("x"), UserError);
  EXPECT_THROW(u.read_f64("missing"), UserError);
}

// ---- malformed files ----

TEST_F(SafetensorsTest, RefusesTruncationAtEveryLength) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6};
  safetensors_write(path("t.safetensors"), {{"a", SafetensorsDType::F16, {6}, v.data()},
                                           {"b", SafetensorsDType::F32, {2, 3}, v.data()}});
  const std::string full = test::file_read(path("t.safetensors"));
  ASSERT_TRUE(refusal(full).empty());
  for (size_t n = 0; n < full.size(); ++n) {
    const std::string cut = full.substr(0, n);
    EXPECT_FALSE(refusal(cut).empty()) << "accepted a file truncated to " << n << " bytes";
    if (n % 16 == 0 || n < 16) {  // the file path too, at a sample of lengths
      test::file_write(path("cut.safetensors"), cut);
      EXPECT_THROW(SafetensorsFile{path("cut.safetensors")}, IoError) << n;
    }
  }
  expect_refused(full.substr(0, 5), "8-byte header length");
  expect_refused(full.substr(0, full.size() - 1), "data section");
}

TEST_F(SafetensorsTest, RefusesWrongOffsets) {
  const std::string d = f32_bytes({1, 2, 3, 4});  // 16 bytes
  // A tensor "a" of F32 with this shape and these data_offsets, and the words of its refusal.
  struct Case {
    const char* shape;
    const char* offsets;
    const char* needle;
  };
  const Case cases[] = {
      {"[4]", "[0,20]", "data section has 16 bytes"},
      {"[4]", "[8,4]", "end before they begin"},
      {"[3]", "[0,16]", "needs 12"},
      {"[4]", "[18446744073709551615,0]", "end before they begin"},
      {"[4611686018427387904,4]", "[0,16]", "too large"},
      {"[4294967296,4294967296]", "[0,16]", "too large"},
      {"[-1]", "[0,16]", "whole number"},
      {"[4.0]", "[0,16]", "whole number"},
      {"[4]", "[0,16,16]", "[begin, end]"},
      {"[4]", "[0,1e3]", "whole number"},
  };
  for (const Case& c : cases)
    expect_refused(image(std::string(R"({"a":{"dtype":"F32","shape":)") + c.shape +
                             R"(,"data_offsets":)" + c.offsets + "}}",
                         d),
                   c.needle);
  expect_refused(image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                       d),
                 "overlap");
}

TEST_F(SafetensorsTest, RefusesHugeHeaderLengths) {
  const std::string rest =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})" + f32_bytes({1});
  expect_refused(image_with_length(~uint64_t{0}, rest), "100 MiB limit");
  expect_refused(image_with_length(uint64_t{1} << 63, rest), "100 MiB limit");
  expect_refused(image_with_length((100ull << 20) + 1, rest), "100 MiB limit");
  expect_refused(image_with_length(rest.size() + 1, rest), "runs past the end of the file");
  expect_refused(image_with_length(0, rest), "empty header");
  // A header length that stops inside the JSON.
  expect_refused(image_with_length(10, rest), "not valid JSON");
}

TEST_F(SafetensorsTest, RefusesHeadersThatAreNotSafetensorsJson) {
  expect_refused(image("hello world"), "not a JSON object");
  expect_refused(image("[1, 2, 3]"), "not a JSON object");
  expect_refused(image("{\"a\": 1"), "not valid JSON");
  expect_refused(image("{\"a\": \"\xff\xfe\"}"), "not valid JSON");  // invalid UTF-8
  expect_refused(image("{} trailing"), "not valid JSON");
  expect_refused(image(R"({"a": 5})"), "entry must be an object");
  expect_refused(image(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", "abcd"), "dtype");
  expect_refused(image(R"({"a": {"dtype": 1, "shape": [1], "data_offsets": [0, 4]}})", "abcd"),
                 "dtype");
  expect_refused(image(R"({"a": {"dtype": "F32", "data_offsets": [0, 4]}})", "abcd"), "shape");
  expect_refused(image(R"({"a": {"dtype": "F32", "shape": [1]}})", "abcd"), "data_offsets");
  expect_refused(
      image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
            "abcd"),
      "twice");
  expect_refused(
      image(R"({"a": {"dtype": "F32", "dtype": "F16", "shape": [1], "data_offsets": [0, 4]}})",
            "abcd"),
      "twice");
  expect_refused(image(R"({"__metadata__": {"n": 12}})"), "must be a string");
  expect_refused(image(R"({"__metadata__": [1]})"), "object of strings");
  expect_refused(image(R"({"a": {"b": {"c": {"d": {"e": 1}}}}})"), "nests JSON deeper");
  expect_refused(image(std::string(1000, '[')), "not a JSON object");
  expect_refused(image("{\"a\": " + std::string(100000, '[')), "nests JSON deeper");
  std::string shape65 = "[";
  for (int i = 0; i < 65; ++i) shape65 += i ? ",1" : "1";
  expect_refused(
      image(R"({"a": {"dtype": "F32", "shape": )" + shape65 + R"(], "data_offsets": [0, 4]}})",
            "abcd"),
      "dimensions");
  // A name with a newline is printed on one line.
  expect_refused(image("{\"bad\\nname\": 5}"), "bad?name");
}

TEST_F(SafetensorsTest, RefusesOtherFormatsWithAHint) {
  test::file_write(path("model.bin"), literal("PK\x03\x04") + std::string(100, '\0'));
  try {
    SafetensorsFile f(path("model.bin"));
    ADD_FAILURE() << "accepted a ZIP file";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("PyTorch"), std::string::npos) << e.what();
  }
  expect_refused(literal("\x80\x02}q\x00(X\x05\x00\x00\x00"), "pickle");
  expect_refused(literal("\x93NUMPY\x01\x00v\x00{'descr'"), "numpy");
  expect_refused("{\"architectures\": [\"BertModel\"]}", "config.json");
  expect_refused("", "empty");
  EXPECT_THROW(SafetensorsFile{path("missing.safetensors")}, IoError);
  EXPECT_THROW(SafetensorsFile{dir_.string()}, IoError);
}

TEST_F(SafetensorsTest, WriterRefusesBadViews) {
  const std::vector<double> v = {1, 2};
  const std::string p = path("bad.safetensors");
  EXPECT_THROW(safetensors_write(p, {{"", SafetensorsDType::F32, {2}, v.data()}}), UserError);
  EXPECT_THROW(safetensors_write(p, {{"__metadata__", SafetensorsDType::F32, {2}, v.data()}}),
               UserError);
  EXPECT_THROW(safetensors_write(p, {{"a", SafetensorsDType::F32, {2}, v.data()},
                                     {"a", SafetensorsDType::F32, {2}, v.data()}}),
               UserError);
  EXPECT_THROW(safetensors_write(p, {{"a", SafetensorsDType::Other, {2}, v.data()}}), UserError);
  EXPECT_THROW(safetensors_write(p, {{"a", SafetensorsDType::F32, {-2}, v.data()}}), UserError);
  EXPECT_THROW(safetensors_write(p, {{"a", SafetensorsDType::F32, {2}, nullptr}}), UserError);
  EXPECT_THROW(safetensors_write(path("no/such/dir/x.safetensors"),
                                 {{"a", SafetensorsDType::F32, {2}, v.data()}}),
               IoError);
  EXPECT_FALSE(fs::exists(p));
}

}  // namespace
}  // namespace attn
