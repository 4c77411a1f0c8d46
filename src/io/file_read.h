// Opening an input file for reading: one place for the checks and the messages.
#pragma once

#include <cstdint>
#include <string>

namespace attn {

// Opens PATH read-only (close-on-exec) and returns the descriptor; *size gets its length.
// IoError naming the path if it does not exist, cannot be opened, or is not a regular
// file ("give the path of a <what> file").
int file_open_read(const std::string& path, const std::string& what, uint64_t* size);

}  // namespace attn
