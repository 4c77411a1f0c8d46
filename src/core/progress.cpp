// Progress on stderr: a bar on a terminal, timed plain lines in logs.
#include "core/progress.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attn {
namespace {

constexpr double kDefaultInterval = 15;

void write_fd(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

double interval_from_env() {
  const char* text = std::getenv("ATTNLAB_PROGRESS_INTERVAL");
  if (text == nullptr || *text == '\0') return kDefaultInterval;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (*end == '\0' && s >= 0.01 && s <= 86400) return s;
  std::fprintf(stderr,
               "attnlab: warning: ATTNLAB_PROGRESS_INTERVAL='%s' is not a number of seconds from "
               "0.01 to 86400; using %g\n",
               text, kDefaultInterval);
  return kDefaultInterval;
}

}  // namespace

ProgressStyle progress_style(bool show) {
  ProgressStyle style;
  if (!show || std::getenv("ATTNLAB_NO_PROGRESS") != nullptr) return style;
  if (isatty(STDERR_FILENO)) {
    style.mode = ProgressMode::kBar;
    return style;
  }
  style.mode = ProgressMode::kLines;
  style.interval_seconds = interval_from_env();
  return style;
}

Progress::Progress(std::string label, int64_t total, bool show)
    : Progress(std::move(label), total, progress_style(show)) {}

Progress::Progress(std::string label, int64_t total, const ProgressStyle& style)
    : label_(std::move(label)),
      total_(total),
      style_(style),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (style_.mode == ProgressMode::kLines && total_ > 0)
    ticker_ = std::thread([this] { ticker_main(); });
}

Progress::~Progress() { finish(); }

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::add(int64_t count, int64_t failed) {
  done_.fetch_add(count);
  if (failed != 0) failed_.fetch_add(failed);
  if (style_.mode != ProgressMode::kBar) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  std::unique_lock<std::mutex> lock(draw_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  last_draw_ = now;
  draw(false);
}

void Progress::finish() {
  if (ticker_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(ticker_mutex_);
      ticker_stop_ = true;
    }
    ticker_wake_.notify_all();
    ticker_.join();
    if (logged_) write_log_line(true);
  }
  if (style_.mode != ProgressMode::kBar || finished_) return;
  std::lock_guard<std::mutex> lock(draw_mutex_);
  finished_ = true;
  if (drawn_) draw(true);
}

void Progress::ticker_main() {
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(style_.interval_seconds));
  auto next = start_ + interval;
  std::unique_lock<std::mutex> lock(ticker_mutex_);
  while (!ticker_wake_.wait_until(lock, next, [this] { return ticker_stop_; })) {
    write_log_line(false);
    logged_ = true;
    // Steady: the next line is due one interval after this one was, not after it was written.
    next += interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval;
  }
}

void Progress::write_log_line(bool final_line) {
  write_fd(style_.fd, render_log_line(label_, done_.load(), total_, failed_.load(), seconds(),
                                      final_line) + "\n");
}

std::string Progress::format_rate(double per_second) {
  char buf[32];
  if (per_second >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1fM/s", per_second / 1e6);
  else if (per_second >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk/s", per_second / 1e3);
  else if (per_second >= 1 || per_second <= 0)
    std::snprintf(buf, sizeof buf, "%.1f/s", per_second);
  else if (per_second * 60 >= 1)
    std::snprintf(buf, sizeof buf, "%.1f/min", per_second * 60);
  else
    std::snprintf(buf, sizeof buf, "%.1f/h", per_second * 3600);
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

std::string Progress::render_log_line(const std::string& label, int64_t done, int64_t total,
                                      int64_t failed, double seconds, bool final_line) {
  const double fraction = total > 0 ? std::min(1.0, static_cast<double>(done) / total) : 1.0;
  const double rate = seconds > 0 ? done / seconds : 0.0;
  const double eta = rate > 0 ? (total - done) / rate : NAN;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s: %lld/%lld (%.0f%%)%s, %s, elapsed %s, %s%s", label.c_str(),
                static_cast<long long>(done), static_cast<long long>(total), 100.0 * fraction,
                failed > 0 ? (", " + std::to_string(failed) + " failed").c_str() : "",
                format_rate(rate).c_str(), format_duration(seconds).c_str(),
                final_line ? (done >= total ? "done" : "stopped") : "ETA ",
                final_line ? "" : format_duration(eta).c_str());
  return buf;
}

void Progress::draw(bool final_draw) {
  const std::string line = render_line(label_, done_.load(), total_, seconds(), 30);
  write_fd(style_.fd, "\r" + line + "\033[K" + (final_draw ? "\n" : ""));
  drawn_ = true;
}

}  // namespace attn
