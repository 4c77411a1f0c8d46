// The wire format from a child process to its parent: one format for the sweep's run workers
// (experiment/run_worker.cpp) and Python's run()/reproduce() children (core/child_process.h).
//
// A child writes a stream of frames, each
//     '\x1e' KIND LENGTH ':' PAYLOAD
// KIND is one byte, LENGTH the payload's size in decimal digits, PAYLOAD any bytes (a line
// of text may hold any character, the frame still ends where LENGTH says). Kinds every
// child may send: kFrameWarning (a log_warn line as the sink got it, core/log.h) and
// kFrameProgress (child_numbers_encode of done, total). Taken: 'K', 'I', 'U', 'X' (the end
// of a child_job_run job: its result or error), 'O' (a run worker's outcome, run_worker.cpp),
// 'S' (kFrameJobStatus: a status line of a spawned job, core/child_process.h).
//
// Contract:
// - child_frame_write writes a whole frame or, if the parent is gone, gives up quietly.
// - ChildFrames hands out frames complete and in order, whatever pieces the bytes arrive
//   in. A child that dies in the middle of a frame leaves an incomplete last frame, which
//   is never handed out (partial() says it is there). Bytes that are not a frame stop the
//   reader for good (garbled()); nothing after them is handed out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

inline constexpr char kFrameWarning = 'W', kFrameProgress = 'P';

struct ChildFrame {
  char kind = 0;
  std::string payload;
};

std::string child_frame_encode(char kind, const std::string& payload);
// Writes child_frame_encode(kind, payload) to fd (retrying short writes and EINTR).
void child_frame_write(int fd, char kind, const std::string& payload);

// The parent's side: collects bytes and hands out complete frames.
class ChildFrames {
 public:
  void append(const char* data, size_t size);
  // The next complete frame into *frame; false when none is complete (yet).
  bool next(ChildFrame* frame);
  bool partial() const { return !garbled_ && at_ < buffer_.size(); }
  bool garbled() const { return garbled_; }

 private:
  std::string buffer_;
  size_t at_ = 0;  // start of the first frame not handed out
  bool garbled_ = false;
};

// Whole numbers as a frame payload: decimal, separated by one space ("12 96").
std::string child_numbers_encode(const std::vector<int64_t>& numbers);
// The `count` numbers of such a payload; ATTN_ASSERT naming the payload if it holds anything
// else (both ends are attnlab code, so that is a bug).
std::vector<int64_t> child_numbers_decode(const std::string& payload, size_t count);

}  // namespace attn
