// Errno kinds (see errno_kind.h).
#include "core/errno_kind.h"

#include <cerrno>

namespace attn {

ErrnoKind errno_kind(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT: return ErrnoKind::kNoSpace;
    case EACCES:
    case EPERM:
    case EROFS: return ErrnoKind::kNotWritable;
    case ENOENT:
    case ENOTDIR: return ErrnoKind::kNoDirectory;
    case EFBIG: return ErrnoKind::kTooLarge;
    default: return ErrnoKind::kOther;
  }
}

}  // namespace attn
