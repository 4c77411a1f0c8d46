// Frames from a child process to its parent (see child_frames.h).
#include "core/child_frames.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string>

#include "core/error.h"

namespace attn {
namespace {

constexpr char kFrameStart = '\x1e';
constexpr size_t kLengthDigitsMax = 18;  // below 10^18 bytes: no overflow of size_t

}  // namespace

std::string child_frame_encode(char kind, const std::string& payload) {
  std::string frame(1, kFrameStart);
  frame += kind;
  frame += std::to_string(payload.size());
  frame += ':';
  frame += payload;
  return frame;
}

void child_frame_write(int fd, char kind, const std::string& payload) {
  const std::string frame = child_frame_encode(kind, payload);
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t k = ::write(fd, frame.data() + done, frame.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;  // the parent is gone: nobody left to tell
    done += static_cast<size_t>(k);
  }
}

void ChildFrames::append(const char* data, size_t size) {
  if (at_ > 0) {
    buffer_.erase(0, at_);
    at_ = 0;
  }
  buffer_.append(data, size);
}

bool ChildFrames::next(ChildFrame* frame) {
  if (garbled_ || at_ == buffer_.size()) return false;
  if (buffer_[at_] != kFrameStart) {
    garbled_ = true;
    return false;
  }
  size_t p = at_ + 2;  // after the start byte and the kind
  size_t length = 0, digits = 0;
  for (; p < buffer_.size() && buffer_[p] >= '0' && buffer_[p] <= '9'; ++p, ++digits) {
    if (digits == kLengthDigitsMax) {
      garbled_ = true;
      return false;
    }
    length = length * 10 + static_cast<size_t>(buffer_[p] - '0');
  }
  if (p >= buffer_.size()) return false;  // the length is still arriving
  if (buffer_[p] != ':' || digits == 0) {
    garbled_ = true;
    return false;
  }
  if (buffer_.size() - (p + 1) < length) return false;  // the payload is still arriving
  frame->kind = buffer_[at_ + 1];
  frame->payload.assign(buffer_, p + 1, length);
  at_ = p + 1 + length;
  return true;
}

std::string child_numbers_encode(const std::vector<int64_t>& numbers) {
  std::string s;
  for (const int64_t v : numbers) s += (s.empty() ? "" : " ") + std::to_string(v);
  return s;
}

std::vector<int64_t> child_numbers_decode(const std::string& payload, size_t count) {
  std::vector<int64_t> numbers(count);
  if (count == 0 && payload.empty()) return numbers;
  const char* p = payload.data();
  const char* end = p + payload.size();
  for (size_t k = 0; k < count; ++k) {
    if (k > 0 && (p == end || *p++ != ' ')) break;
    const auto [next, ec] = std::from_chars(p, end, numbers[k]);
    if (ec != std::errc() || next == p) break;
    p = next;
    if (k + 1 == count && p == end) return numbers;
  }
  // Both ends are attnlab: anything else is a bug of the sender.
  ATTN_ASSERT(false, "a child process sent \"" + payload + "\" where " + std::to_string(count) +
                         " whole numbers belong");
}

}  // namespace attn
