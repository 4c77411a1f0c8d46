// Running the attnlab binary (or any shell command) from tests: exit code and combined output.
#pragma once

#include "test_paths.h"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace attn::test {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs a shell command; exit code and combined output.
inline CliResult shell(const std::string& command) {
  CliResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t got;
  while ((got = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), got);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `attnlab ARGS` (ARGS is passed to the shell as written).
inline CliResult cli_run(const std::string& args) {
  return shell(std::string(test_cli_path()) + " " + args);
}

inline std::string file_read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline void file_write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace attn::test
