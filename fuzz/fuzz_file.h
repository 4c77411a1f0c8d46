// A fuzz input as a file: the readers under test take a path, so each input is written
// into one memory-backed file (memfd, a regular file to fstat) reached as
// /proc/self/fd/N. No disk traffic, nothing left behind.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn_fuzz {

// Replaces the memory file's contents with data[0, size) and returns its path.
inline std::string fuzz_file(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("attnlab_fuzz", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0) __builtin_trap();
  size_t done = 0;
  while (done < size) {
    const ssize_t k = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (k <= 0) __builtin_trap();
    done += static_cast<size_t>(k);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace attn_fuzz
