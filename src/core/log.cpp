// Warning and progress sinks (see log.h).
#include "core/log.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

namespace attn {
namespace {

std::mutex g_mutex;
LogSink g_sink;
ProgressSink g_progress;

}  // namespace

void log_warn(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::vector<char> buf(static_cast<size_t>(n > 0 ? n : 0) + 1);
  std::vsnprintf(buf.data(), buf.size(), format, args);
  va_end(args);
  const std::string line(buf.data());
  LogSink sink;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    sink = g_sink;
  }
  if (sink) {
    sink(line);
  } else {
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }
}

void log_progress(const std::string& what, int64_t done, int64_t total) {
  ProgressSink sink;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    sink = g_progress;
  }
  if (sink) sink(what, done, total);
}

LogSink log_sink_set(LogSink sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_sink, std::move(sink));
}

ProgressSink log_progress_sink_set(ProgressSink sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_progress, std::move(sink));
}

std::string log_line_plain(const std::string& line) {
  std::string s = line;
  const std::string clear = "\r\033[K";
  if (s.rfind(clear, 0) == 0) s.erase(0, clear.size());
  const std::string prefix = "attnlab: ";
  if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace attn
