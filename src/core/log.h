// Warning lines and progress counts from library code, and where they go.
//
// log_warn formats like printf (the text as the stderr line it always was, e.g.
// "attnlab: ...\n", possibly led by "\r\033[K" to clear a progress bar) and hands it to
// the installed warning sink; the default sink writes it to stderr unchanged. A front end
// that has no terminal (the Python module, a forked run worker) installs its own sink and
// forwards the lines (to warnings.warn, or over its pipe to the parent).
// log_progress reports "done of total" for a named piece of long work to the progress
// sink; the default sink does nothing (the terminal bar is core/progress.h).
// Sinks are process-wide; install them before starting threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace attn {

using LogSink = std::function<void(const std::string& line)>;
using ProgressSink = std::function<void(const std::string& what, int64_t done, int64_t total)>;

void log_warn(const char* format, ...) __attribute__((format(printf, 1, 2)));
void log_progress(const std::string& what, int64_t done, int64_t total);

// Install a sink (an empty one restores the default); returns the one it replaces.
LogSink log_sink_set(LogSink sink);
ProgressSink log_progress_sink_set(ProgressSink sink);

// A warning line without the terminal decorations: no leading "\r\033[K", no "attnlab: ",
// no trailing newline (for sinks that show lines elsewhere than on a terminal).
std::string log_line_plain(const std::string& line);

}  // namespace attn
