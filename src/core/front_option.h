// Front-end options as library messages name them.
//
// The library does not know how a front end spells the options a user sets (`--out DIR` on
// the command line, `out=` in Python). A message that tells the user which option to change
// says front_option(FrontOption::kOut): the spelling the front end installed at start-up
// (apps/main.cpp, python/src/module.cpp), or, when none did (C++ callers, the unit tests),
// the library's own name of the setting (RunRequest::out_dir: "out_dir").
// Values are named by their library key ("jobs = 0 must be at least 1"), which reads the
// same in every front end; front_option is for the advice ("add --force-new").
#pragma once

#include <array>
#include <cstddef>

namespace attn {

enum class FrontOption {
  kOut,          // the output directory of a run or reproduction
  kForceNew,     // move the old results of the output directory aside and start again
  kRetryFailed,  // run again the runs stored as failed
  kJobs,         // the number of run processes
  kQuick,        // the quick-size variant of a spec
  kReportOnly,   // report what is stored, run nothing
  kSet,          // overrides of spec keys (section.key=value)
  kShard,        // run one shard i/k of the plan
  kCount,
};

inline constexpr size_t kFrontOptionCount = static_cast<size_t>(FrontOption::kCount);

// One spelling per FrontOption, in the enum's order. A front end's table is checked at
// compile time (static_assert(front_option_spellings_complete(table))): a new option that a
// front end does not spell fails its build; front_option_spellings_set also refuses a table
// with a missing entry (ATTN_ASSERT).
using FrontOptionSpellings = std::array<const char*, kFrontOptionCount>;

constexpr bool front_option_spellings_complete(const FrontOptionSpellings& spellings) {
  for (const char* s : spellings)
    if (s == nullptr || s[0] == '\0') return false;
  return true;
}

// The library's own names (RunRequest's fields): what front_option says until a front end
// installs its spellings.
const FrontOptionSpellings& front_option_library_names();

// Installs (copies) a front end's spellings for the whole process; forked children inherit
// them. Call at start-up, before other threads run. The strings must be static.
void front_option_spellings_set(const FrontOptionSpellings& spellings);

// How the front end in use spells `option`: "--force-new", "force_new=True", "force_new".
const char* front_option(FrontOption option);

}  // namespace attn
