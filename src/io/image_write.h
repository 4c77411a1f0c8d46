// Small image writers for heat maps: PNG (8-bit RGB, zlib) and SVG, no plotting library.
//
// Contract:
// - png_encode_rgb returns a complete PNG (signature, IHDR, one zlib IDAT, IEND, CRCs;
//   filter type 0 on every row). Same pixels give the same bytes.
// - Heat maps draw a rows × cols row-major matrix with a diverging colour map centred at
//   0: blue for −s, white for 0, red for +s, where s = max |value| (symmetric, so the
//   sign of every cell reads off its hue); s = 0 draws all white; NaN/inf cells are grey.
//   The PNG has cell_px × cell_px pixels per cell (cell 0,0 at top left) and no labels;
//   the SVG has one <rect> per cell, a title line and the scale ±s written below.
// - Every file is written atomically (io/atomic_file.h); IoError on failure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// rgb holds width × height × 3 bytes, rows top to bottom.
std::string png_encode_rgb(int64_t width, int64_t height, const std::vector<uint8_t>& rgb);
void png_write_rgb(const std::string& path, int64_t width, int64_t height,
                   const std::vector<uint8_t>& rgb);

// The diverging colour of t in [−1, 1] (clamped): −1 dark blue, 0 white, +1 dark red.
// NaN gives grey.
std::array<uint8_t, 3> colour_diverging(double t);

// The symmetric scale s = max |finite value| (0 if none).
double heatmap_scale(const double* values, int64_t count);

void heatmap_write_png(const std::string& path, const double* values, int64_t rows, int64_t cols,
                       int64_t cell_px);
void heatmap_write_svg(const std::string& path, const double* values, int64_t rows, int64_t cols,
                       const std::string& title);

}  // namespace attn
