// Errno kinds: the one place that says what a failed file operation's errno means to a user.
//
// errno_kind(err) sorts an errno into a few kinds; each caller (the atomic file writer, the
// results store, the directory lock) turns the kind into its own one-line IoError. A switch
// over ErrnoKind has no default branch, so a new kind warns (-Wswitch) until every caller
// handles it.
#pragma once

namespace attn {

enum class ErrnoKind {
  kNoSpace,      // ENOSPC, EDQUOT: the filesystem (or the user's quota) is full
  kNotWritable,  // EACCES, EPERM, EROFS: permissions or a read-only filesystem
  kNoDirectory,  // ENOENT, ENOTDIR: a directory on the path does not exist
  kTooLarge,     // EFBIG: the file is too large for the filesystem
  kOther,        // anything else: the caller prints strerror
};

ErrnoKind errno_kind(int err);

}  // namespace attn
