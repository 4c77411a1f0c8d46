// Memory checks: refuse sizes that would not fit before allocating them.
#pragma once

#include <cstdint>
#include <string>

namespace attn {

// MemAvailable from /proc/meminfo, in bytes (or a very large number where unknown).
uint64_t memory_available_bytes();

// Throws UserError naming `what` if `bytes` exceeds 90% of the available memory.
// `hint` says how to shrink the request (e.g. "lower --n or write in shards").
void memory_check(uint64_t bytes, const std::string& what, const std::string& hint);

// "1.5 GiB", "300 MiB", "12 KiB", "17 B".
std::string format_bytes(uint64_t bytes);

// a * b * ... with overflow detection: returns false on overflow.
bool checked_mul(uint64_t a, uint64_t b, uint64_t* out);

}  // namespace attn
