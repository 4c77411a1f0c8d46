// The floating-point environment attnlab computes in: subnormal numbers flushed to zero.
//
// A float below 2^-126 (double: 2^-1022) is subnormal, and on x86 cores every vector
// instruction that makes or reads one can take a microcode assist (measured on an Intel Xeon:
// a training step of the attention model 3.4× and of the third-order model 13× slower once
// training has made the softmax rows sharp; docs/performance.md#subnormals). attnlab's
// computations therefore run with x86's MXCSR flags FTZ (a subnormal result becomes ±0) and
// DAZ (a subnormal input reads as ±0), as TensorFlow does by default and PyTorch does with
// torch.set_flush_denormal(True). Values that small are far below any tolerance attnlab reports;
// every result that never meets one has the same bits either way.
//
// Where: for the whole process in the attnlab command (apps/main.cpp), and around each unit of
// work that a library caller (Python, C++) starts: trainer_run, run_body, the Python model
// calls. The mode of the calling thread is restored when the scope ends, and parallel_for /
// parallel_ordered give their worker threads the caller's mode, so results never depend on
// the thread count. ATTNLAB_SUBNORMALS=keep keeps IEEE subnormals (the scopes do nothing);
// any other value but "flush" (the default) is refused. Not x86: the scopes do nothing.
#pragma once

#include <cstdint>

namespace attn {

// The calling thread's floating-point control bits (x86: MXCSR; elsewhere 0), to hand to a
// worker thread (float_env_set) so it computes as its creator does.
uint32_t float_env_get();
void float_env_set(uint32_t bits);

// Whether attnlab flushes subnormals: ATTNLAB_SUBNORMALS ("flush", the default, or "keep"),
// read once; an unknown value throws attn::UserError naming the two.
bool subnormals_flushed();
// "flushed" or "kept", for reports and version lines.
const char* subnormals_text();

// Flushes subnormals (FTZ and DAZ) on the calling thread until the scope ends, then restores
// the thread's previous bits; does nothing with ATTNLAB_SUBNORMALS=keep or off x86. Nests.
class SubnormalsFlushed {
 public:
  SubnormalsFlushed();
  ~SubnormalsFlushed();
  SubnormalsFlushed(const SubnormalsFlushed&) = delete;
  SubnormalsFlushed& operator=(const SubnormalsFlushed&) = delete;

 private:
  uint32_t saved_;
};

}  // namespace attn
