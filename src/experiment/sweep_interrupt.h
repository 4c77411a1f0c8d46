// The line a runner stopped by SIGINT or SIGTERM (Ctrl-C, kill, a batch system's preemption)
// prints before it dies: "attnlab: interrupted: S of P runs stored; run the same command to
// resume". The runs planned and stored so far are counted as the sweep goes (experiment_open
// adds each experiment's shard, sweep_record each run it stores); a front end that wants the
// line installs the handler. The handler uses async-signal-safe calls only: it writes the line,
// removes the temp files of open atomic writes (io/atomic_file.h) and re-raises the signal
// with its default action, so the process still dies of it (exit status 128 + signal).
#pragma once

#include <cstdint>
#include <string>

namespace attn {

// Adds an experiment's planned runs of this shard and those already stored.
void sweep_interrupt_plan(int64_t planned, int64_t stored);
// Adds one run stored by the sweep.
void sweep_interrupt_stored();

// The summary line for the counts so far (also what the handler writes), without a newline;
// "" when nothing was planned yet.
std::string sweep_interrupt_line();

// Installs the SIGINT and SIGTERM handler (replacing atomic_file_install_signal_cleanup's;
// a signal ignored at the call stays ignored, e.g. SIGINT under `cmd &`).
void sweep_interrupt_install();

}  // namespace attn
