// Cancellation points for long loops, for embeddings such as the Python module.
//
// An embedding installs a check (a plain function); long loops call interrupt_poll() at
// points where stopping is safe (e.g. between training steps), and interrupt_poll()
// throws attn::Interrupted when the check returns true. The exception unwinds like any
// other: no partial result is kept. Without a check (the command line) interrupt_poll()
// costs one atomic load. Interrupted is not a UserError: nothing records it as a failure.
// It is not an error tier either (those are UserError, IoError and ATTN_ASSERT, core/error.h)
// but a control-flow signal: the embedding that asked to stop catches it.
#pragma once

#include <stdexcept>

namespace attn {

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

using InterruptCheck = bool (*)();

// Installs `check` (nullptr removes it) for the whole process; returns the previous one.
InterruptCheck interrupt_set_check(InterruptCheck check);

// Throws Interrupted if a check is installed and returns true.
void interrupt_poll();

}  // namespace attn
