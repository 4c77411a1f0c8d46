// Front-end options and commands as library messages name them.
//
// The library does not know how a front end spells the options a user sets (`--out DIR` on
// the command line, `out=` in Python). A message that tells the user which option to change
// says front_option(FrontOption::kOut): the spelling the front end installed at start-up
// (apps/main.cpp, python/src/module.cpp), or, when none did (C++ callers, the unit tests),
// the library's own name of the setting (RunRequest::out_dir: "out_dir").
// Values are named by their library key ("jobs = 0 must be at least 1"), which reads the
// same in every front end; front_option is for the advice ("add --force-new").
// A whole command a message shows ("run `attnlab run SPEC --out DIR` first") is a
// FrontCommand, spelled by each front end in the same way; "{}" in a spelling stands for the
// one argument the message fills in (front_command(FrontCommand::kRunInto, dir)).
// No string literal of the library holds a flag name or a command line
// (SourceRules.NoFrontEndSpellingInTheLibrary).
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace attn {

enum class FrontOption {
  kOut,            // the output directory of a run, reproduction or qk-stats
  kForceNew,       // move the old results of the output directory aside and start again
  kRetryFailed,    // run again the runs stored as failed
  kJobs,           // the number of run processes
  kQuick,          // the quick-size variant of a spec
  kReportOnly,     // report what is stored, run nothing
  kSet,            // overrides of spec keys (section.key=value)
  kShard,          // run one shard i/k of the plan
  kMpi,            // run over the ranks of an MPI job
  kHeads,          // qk-stats: the head count
  kHeadSize,       // qk-stats: the head size
  kLayout,         // qk-stats: where the query and key weights are (auto, bert, gpt2, custom)
  kQueryPattern,   // qk-stats: the tensor-name pattern of the query weights
  kKeyPattern,     // qk-stats: the tensor-name pattern of the key weights
  kLayers,         // qk-stats: the layers to analyse
  kHeatmapLayers,  // qk-stats: the layers to draw
  kHeatmapHeads,   // qk-stats: the heads to draw
  kHeatmapBlock,   // qk-stats: the size of the drawn block
  kN,              // a dataset's sample count
  kFirst,          // the index of a dataset's first sample
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

// The library's own names (RunRequest's and QkStatsOptions' fields): what front_option says
// until a front end installs its spellings.
const FrontOptionSpellings& front_option_library_names();

// Installs (copies) a front end's spellings for the whole process; forked children inherit
// them. Call at start-up, before other threads run. The strings must be static.
void front_option_spellings_set(const FrontOptionSpellings& spellings);

// How the front end in use spells `option`: "--force-new", "force_new=True", "force_new".
const char* front_option(FrontOption option);

// The option set to `value`: "--heads 12" (the spelling, a space, the value), or "heads=12"
// when the spelling ends in '=' (Python's keywords).
std::string front_option_with(FrontOption option, const std::string& value);

// Commands a message shows whole. The spelling is bare (the message quotes it); those marked
// {} hold "{}" once, which front_command replaces by the message's argument.
enum class FrontCommand {
  kRunInto,         // {} = a directory: run a spec with its results in {}
  kRunMpi,          // a run spread over the ranks of an MPI job
  kRunMpiStart,     // how such a run is started (with K ranks)
  kFitSave,         // what saves a fitted model to a file
  kFitSaveExample,  // an example of fitting a model and saving it to a file
  kReproduce,       // {} = a group name: reproduce the group (a report's title)
  kReproduceQuick,  // {} = a group name: reproduce the group at quick size
  kCount,
};

inline constexpr size_t kFrontCommandCount = static_cast<size_t>(FrontCommand::kCount);

// Which commands take the argument ("{}"), in the enum's order.
inline constexpr std::array<bool, kFrontCommandCount> kFrontCommandTakesArgument = {
    true, false, false, false, false, true, true,
};

using FrontCommandSpellings = std::array<const char*, kFrontCommandCount>;

// Each spelling non-empty, holding "{}" exactly once if its command takes the argument and
// not at all otherwise. Front ends static_assert it, as for the options.
constexpr bool front_command_spellings_complete(const FrontCommandSpellings& spellings) {
  for (size_t k = 0; k < spellings.size(); ++k) {
    const char* s = spellings[k];
    if (s == nullptr || s[0] == '\0') return false;
    int marks = 0;
    for (const char* c = s; c[0] != '\0'; ++c)
      if (c[0] == '{' && c[1] == '}') ++marks;
    if (marks != (kFrontCommandTakesArgument[k] ? 1 : 0)) return false;
  }
  return true;
}

// The library's own names (the C++ calls): what front_command says until a front end
// installs its spellings.
const FrontCommandSpellings& front_command_library_names();

// Installs a front end's command spellings (as front_option_spellings_set; ATTN_ASSERT on an
// incomplete table).
void front_command_spellings_set(const FrontCommandSpellings& spellings);

// How the front end in use spells `command`, with "{}" replaced by `argument` (commands that
// take none ignore it): "attnlab run SPEC --out runs/x", "attnlab.run(SPEC, out='runs/x')".
std::string front_command(FrontCommand command, const std::string& argument = "");

}  // namespace attn
