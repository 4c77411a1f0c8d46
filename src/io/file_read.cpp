// open + fstat with one-line errors.
#include "io/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace attn {

int file_open_read(const std::string& path, const std::string& what, uint64_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw IoError("cannot read " + path + ": no such file; check the path");
    throw IoError("cannot read " + path + ": " + std::strerror(err) +
                  "; check the path and its permissions");
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError("cannot read " + path + ": not a regular file; give the path of a " + what +
                  " file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace attn
