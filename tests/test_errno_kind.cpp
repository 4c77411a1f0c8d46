// The one errno classifier (core/errno_kind.h) and the store's lines built on it: every
// errno a file write meets lands in the kind whose message says what to do.
#include <gtest/gtest.h>

#include <cerrno>

#include "core/errno_kind.h"
#include "experiment/store_errors.h"

namespace attn {
namespace {

TEST(ErrnoKind, SortsEveryErrnoTheMessagesName) {
  EXPECT_EQ(errno_kind(ENOSPC), ErrnoKind::kNoSpace);
  EXPECT_EQ(errno_kind(EDQUOT), ErrnoKind::kNoSpace);
  EXPECT_EQ(errno_kind(EACCES), ErrnoKind::kNotWritable);
  EXPECT_EQ(errno_kind(EPERM), ErrnoKind::kNotWritable);
  EXPECT_EQ(errno_kind(EROFS), ErrnoKind::kNotWritable);
  EXPECT_EQ(errno_kind(ENOENT), ErrnoKind::kNoDirectory);
  EXPECT_EQ(errno_kind(ENOTDIR), ErrnoKind::kNoDirectory);
  EXPECT_EQ(errno_kind(EFBIG), ErrnoKind::kTooLarge);
  EXPECT_EQ(errno_kind(EIO), ErrnoKind::kOther);
  EXPECT_EQ(errno_kind(0), ErrnoKind::kOther);
}

TEST(ErrnoKind, StoreFailureNamesTheDirectoryOrTheFullDisk) {
  const std::string path = "/data/out/results.sqlite";
  EXPECT_EQ(store_failure(path, EROFS, false, "fallback").rfind("/data/out is not writable (", 0),
            0u);
  EXPECT_NE(store_failure(path, EDQUOT, false, "fallback").find("no space left on device"),
            std::string::npos);
  EXPECT_NE(store_failure(path, 0, true, "fallback").find("no space left on device"),
            std::string::npos);
  EXPECT_EQ(store_failure(path, EIO, false, "fallback"), "fallback");
  EXPECT_EQ(store_failure(path, ENOENT, false, "fallback"), "fallback");
  EXPECT_EQ(store_failure("results.sqlite", EACCES, false, "x").rfind(". is not writable", 0), 0u);
}

}  // namespace
}  // namespace attn
