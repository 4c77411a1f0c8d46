// PNG and SVG heat-map writers (see image_write.h). PNG: 8-bit truecolour, no interlace,
// filter 0 per scanline, the whole image in one zlib stream (level 9) in one IDAT chunk.
#include "io/image_write.h"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/text_escape.h"

namespace attn {
namespace {

void put32be(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xFF));
}

void png_chunk(std::string& out, const char type[4], const std::string& data) {
  put32be(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.append(type, 4);
  out += data;
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(out.data() + start),
                          static_cast<uInt>(out.size() - start));
  put32be(out, static_cast<uint32_t>(crc));
}

std::array<uint8_t, 3> cell_colour(double v, double scale) {
  if (!std::isfinite(v)) return colour_diverging(std::nan(""));
  return colour_diverging(scale > 0.0 ? v / scale : 0.0);
}

}  // namespace

std::string png_encode_rgb(int64_t width, int64_t height, const std::vector<uint8_t>& rgb) {
  ATTN_ASSERT(width >= 1 && height >= 1 && width <= (1 << 20) && height <= (1 << 20),
              "bad PNG size");
  ATTN_ASSERT(rgb.size() == static_cast<size_t>(width * height * 3),
              "rgb size does not match the image");
  std::string out("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  put32be(ihdr, static_cast<uint32_t>(width));
  put32be(ihdr, static_cast<uint32_t>(height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // depth 8, RGB, deflate, filter 0, no interlace
  png_chunk(out, "IHDR", ihdr);

  const size_t stride = static_cast<size_t>(width) * 3;
  std::string raw;
  raw.reserve((stride + 1) * static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back('\0');  // filter type 0 (none)
    raw.append(reinterpret_cast<const char*>(rgb.data()) + static_cast<size_t>(y) * stride, stride);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  const int rc =
      compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size,
                reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()), 9);
  ATTN_ASSERT(rc == Z_OK, "zlib compress2 failed");
  packed.resize(packed_size);
  png_chunk(out, "IDAT", packed);
  png_chunk(out, "IEND", "");
  return out;
}

void png_write_rgb(const std::string& path, int64_t width, int64_t height,
                   const std::vector<uint8_t>& rgb) {
  atomic_file_write(path, png_encode_rgb(width, height, rgb));
}

std::array<uint8_t, 3> colour_diverging(double t) {
  if (std::isnan(t)) return {160, 160, 160};
  // Anchors of matplotlib's RdBu_r at −1, −0.5, 0, 0.5, 1.
  static const double kAnchors[5][3] = {
      {5, 48, 97}, {67, 147, 195}, {247, 247, 247}, {214, 96, 77}, {103, 0, 31}};
  const double x = (std::clamp(t, -1.0, 1.0) + 1.0) * 2.0;  // 0 .. 4
  const int k = std::min(3, static_cast<int>(std::floor(x)));
  const double f = x - k;
  std::array<uint8_t, 3> c;
  for (int i = 0; i < 3; ++i) {
    c[static_cast<size_t>(i)] = static_cast<uint8_t>(
        std::lround(kAnchors[k][i] + f * (kAnchors[k + 1][i] - kAnchors[k][i])));
  }
  return c;
}

double heatmap_scale(const double* values, int64_t count) {
  double s = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    if (std::isfinite(values[i])) s = std::max(s, std::fabs(values[i]));
  }
  return s;
}

void heatmap_write_png(const std::string& path, const double* values, int64_t rows, int64_t cols,
                       int64_t cell_px) {
  ATTN_ASSERT(rows >= 1 && cols >= 1 && cell_px >= 1, "bad heat map size");
  const double scale = heatmap_scale(values, rows * cols);
  const int64_t width = cols * cell_px, height = rows * cell_px;
  std::vector<uint8_t> rgb(static_cast<size_t>(width * height * 3));
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      const auto c = cell_colour(values[(y / cell_px) * cols + x / cell_px], scale);
      std::copy(c.begin(), c.end(), rgb.begin() + (y * width + x) * 3);
    }
  }
  png_write_rgb(path, width, height, rgb);
}

void heatmap_write_svg(const std::string& path, const double* values, int64_t rows, int64_t cols,
                       const std::string& title) {
  ATTN_ASSERT(rows >= 1 && cols >= 1, "bad heat map size");
  const double scale = heatmap_scale(values, rows * cols);
  const int64_t cell = std::max<int64_t>(2, 512 / std::max(rows, cols));
  const int64_t width = cols * cell, height = rows * cell, top = 28, bottom = 24;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
      "{}\">\n"
      "<title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"0\" y=\"18\" font-family=\"sans-serif\" font-size=\"14\">{}</text>\n"
      "<g transform=\"translate(0 {}) scale({})\" shape-rendering=\"crispEdges\">\n",
      width, height + top + bottom, width, height + top + bottom, xml_escape(title),
      xml_escape(title), top, cell);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const auto c = cell_colour(values[i * cols + j], scale);
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"1\" height=\"1\" fill=\"#{:02x}{:02x}{:02x}\"/>\n", j, i,
          c[0], c[1], c[2]);
    }
  }
  s += fmt::format(
      "</g>\n<text x=\"0\" y=\"{}\" font-family=\"sans-serif\" font-size=\"12\">colour scale: "
      "blue −{:.4g} · white 0 · red +{:.4g}</text>\n</svg>\n",
      top + height + 17, scale, scale);
  atomic_file_write(path, s);
}

}  // namespace attn
