// Errors: user errors versus broken invariants.
//
// A user error (bad config, bad file, impossible size) is thrown as attn::UserError and
// reported by the CLI as one line with exit code 2. Its message names the key, path or
// value and says what would fix it.
// ATTN_ASSERT is for invariants of the code itself: it prints file:line and aborts.
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

// Exit code for a user error (bad input), as documented in the README.
inline constexpr int kUserErrorExit = 2;

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// Like UserError, for files that cannot be read or written (Python maps it to OSError).
class IoError : public UserError {
 public:
  explicit IoError(const std::string& message) : UserError(message) {}
};

// A fault of attnlab's own machinery that is neither the user's input nor a broken invariant
// of the code (e.g. the worker server process died under a runner): the CLI prints "internal
// error: ..." and exits 1; the message says what to do next.
class InternalFault : public std::runtime_error {
 public:
  explicit InternalFault(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace attn

// Throws attn::UserError(message) unless cond holds. message is any std::string expression.
#define ATTN_CHECK(cond, message)                              \
  do {                                                         \
    if (!(cond)) throw ::attn::UserError(message);             \
  } while (0)

// Aborts with file:line unless cond holds (always on, also in release builds).
#define ATTN_ASSERT(cond, ...)                                                        \
  do {                                                                                \
    if (!(cond)) ::attn::assert_fail(#cond, __FILE__, __LINE__, std::string{__VA_ARGS__}); \
  } while (0)
