// TTY-aware progress bar.
#include "core/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attn {

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)),
      total_(total),
      enabled_(isatty(STDERR_FILENO) && std::getenv("ATTNLAB_NO_PROGRESS") == nullptr),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::add(int64_t count) {
  done_.fetch_add(count);
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  std::unique_lock<std::mutex> lock(draw_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  last_draw_ = now;
  draw(false);
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  std::lock_guard<std::mutex> lock(draw_mutex_);
  finished_ = true;
  if (drawn_) draw(true);
}

std::string Progress::format_rate(double per_second) {
  char buf[32];
  if (per_second >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1fM/s", per_second / 1e6);
  else if (per_second >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk/s", per_second / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f/s", per_second);
  return buf;
}

std::string Progress::format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string Progress::render_line(const std::string& label, int64_t done, int64_t total,
                                  double seconds, int width) {
  const double fraction = total > 0 ? std::min(1.0, static_cast<double>(done) / total) : 1.0;
  const int filled = static_cast<int>(fraction * width);
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  const double rate = seconds > 0 ? done / seconds : 0.0;
  const double eta = rate > 0 ? (total - done) / rate : NAN;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s [%s] %3.0f%% %lld/%lld %s ETA %s", label.c_str(), bar.c_str(),
                100.0 * fraction, static_cast<long long>(done), static_cast<long long>(total),
                format_rate(rate).c_str(), format_duration(eta).c_str());
  return buf;
}

void Progress::draw(bool final_draw) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string line = render_line(label_, done_.load(), total_, seconds, 30);
  std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final_draw ? "\n" : "");
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace attn
