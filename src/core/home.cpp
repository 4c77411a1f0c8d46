// Locating the project's files and the Python interpreter.
#include "core/home.h"

#include <cstdlib>

#ifndef ATTNLAB_DEFAULT_HOME
#define ATTNLAB_DEFAULT_HOME "."
#endif

namespace attn {

std::string attnlab_home() {
  const char* env = std::getenv("ATTNLAB_HOME");
  return env && *env ? env : ATTNLAB_DEFAULT_HOME;
}

std::string attnlab_python() {
  const char* env = std::getenv("ATTNLAB_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

}  // namespace attn
