// An environment variable a test changes, put back as it was when the scope ends (its value, or
// unset if it was unset), also when a failed ASSERT returns from the test early: the next test in
// the same process then sees the user's environment, not the last one a test set.
#pragma once

#include <cstdlib>
#include <string>

namespace attn::test {

class KeptVariable {
 public:
  explicit KeptVariable(const char* name) : name_(name) {
    const char* value = std::getenv(name);
    was_set_ = value != nullptr;
    if (was_set_) value_ = value;
  }
  ~KeptVariable() {
    if (was_set_)
      setenv(name_, value_.c_str(), 1);
    else
      unsetenv(name_);
  }
  KeptVariable(const KeptVariable&) = delete;
  KeptVariable& operator=(const KeptVariable&) = delete;

  void set(const char* value) const { setenv(name_, value, 1); }
  void unset() const { unsetenv(name_); }

 private:
  const char* name_;
  bool was_set_ = false;
  std::string value_;
};

}  // namespace attn::test
