// Progress of long work (sweeps, data generation, feature maps) on stderr.
//
// On a terminal: a bar with count, rate and ETA, redrawn at most 10 times a second as
// work is added. Elsewhere (Slurm and CI logs, nohup files, pipes): one plain line every
// ATTNLAB_PROGRESS_INTERVAL seconds (default 15), written by a timer thread whether or not
// anything finished in between, e.g.
//   runs: 12/72 (17%), 1 failed, 2.4/min, elapsed 5:00, ETA 25:00
// and a last line when the work ends, if any line was written (short work stays silent).
// Nothing is written when the caller says so (-q: show = false) or ATTNLAB_NO_PROGRESS is
// set. add() is thread-safe and cheap. The timer thread writes with write(2) and touches
// no stdio lock, so processes forked meanwhile (the sweep's workers) cannot inherit one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace attn {

enum class ProgressMode { kOff, kBar, kLines };

struct ProgressStyle {
  ProgressMode mode = ProgressMode::kOff;
  double interval_seconds = 15;  // kLines: seconds between lines
  int fd = 2;                    // where to write
};

// The style for stderr: off if !show or ATTNLAB_NO_PROGRESS is set, a bar on a terminal,
// else lines every ATTNLAB_PROGRESS_INTERVAL seconds (a number from 0.01 to 86400; any
// other value gets a one-line warning and the default, 15).
ProgressStyle progress_style(bool show);

class Progress {
 public:
  Progress(std::string label, int64_t total, bool show = true);
  Progress(std::string label, int64_t total, const ProgressStyle& style);
  ~Progress();  // finish()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `count` more items done, `failed` of them failed.
  void add(int64_t count, int64_t failed = 0);
  // Ends the bar's line, or writes the last log line; idempotent.
  void finish();
  // A terminal bar is drawn: callers printing a line of their own clear it first ("\r\033[K").
  bool enabled() const { return style_.mode == ProgressMode::kBar; }

  // "1.2k/s", "2.4/min", "0:42" etc. Exposed for tests.
  static std::string format_rate(double per_second);
  static std::string format_duration(double seconds);
  // The bar drawn for `done` of `total` items after `seconds`.
  static std::string render_line(const std::string& label, int64_t done, int64_t total,
                                 double seconds, int width);
  // The log line; `final_line` says "done" (or "stopped" if done < total) for the ETA.
  static std::string render_log_line(const std::string& label, int64_t done, int64_t total,
                                     int64_t failed, double seconds, bool final_line);

 private:
  void draw(bool final_draw);
  void write_log_line(bool final_line);
  void ticker_main();
  double seconds() const;

  std::string label_;
  int64_t total_;
  ProgressStyle style_;
  bool drawn_ = false;
  bool finished_ = false;
  std::atomic<int64_t> done_{0};
  std::atomic<int64_t> failed_{0};
  std::mutex draw_mutex_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  // kLines: the timer thread and its stop signal.
  std::thread ticker_;
  std::mutex ticker_mutex_;
  std::condition_variable ticker_wake_;
  bool ticker_stop_ = false;
  bool logged_ = false;
};

}  // namespace attn
