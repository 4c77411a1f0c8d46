// A progress bar for long work: count, rate and ETA on stderr when stderr is a terminal,
// silent otherwise (piped, redirected, CI) or when ATTNLAB_NO_PROGRESS is set.
// add() is thread-safe and cheap; the line is redrawn at most 10 times a second.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace attn {

class Progress {
 public:
  Progress(std::string label, int64_t total);
  ~Progress();  // finishes the line if it was drawn
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void add(int64_t count);
  void finish();
  bool enabled() const { return enabled_; }

  // "1.2k/s", "0:42" etc. Exposed for tests.
  static std::string format_rate(double per_second);
  static std::string format_duration(double seconds);
  // The line drawn for `done` of `total` items after `seconds`.
  static std::string render_line(const std::string& label, int64_t done, int64_t total,
                                 double seconds, int width);

 private:
  void draw(bool final_draw);

  std::string label_;
  int64_t total_;
  bool enabled_;
  bool drawn_ = false;
  bool finished_ = false;
  std::atomic<int64_t> done_{0};
  std::mutex draw_mutex_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace attn
