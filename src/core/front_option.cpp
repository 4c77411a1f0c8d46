// Front-end option and command spellings (see front_option.h).
#include "core/front_option.h"

#include <atomic>

#include "core/error.h"

namespace attn {
namespace {

constexpr FrontOptionSpellings kLibraryNames = {
    "out_dir",        "force_new",     "retry_failed",  "jobs",        "quick",
    "report_only",    "overrides",     "shard",         "comm",        "heads",
    "head_size",      "layout",        "query_pattern", "key_pattern", "layers",
    "heatmap_layers", "heatmap_heads", "heatmap_block", "n",           "first",
};
static_assert(front_option_spellings_complete(kLibraryNames), "a FrontOption has no library name");

constexpr FrontCommandSpellings kLibraryCommands = {
    "experiment_run with out_dir = {}",
    "experiment_run with an MPI communicator",
    "experiment_run with a communicator of K ranks",
    "model_save",
    "model_save(path, record, model)",
    "reproduce_run of {}",
    "reproduce_run of {} with quick",
};
static_assert(front_command_spellings_complete(kLibraryCommands),
              "a FrontCommand has no library name, or its {} does not fit");

// Set at start-up, before any thread or child is started; read by messages.
FrontOptionSpellings g_installed{};
std::atomic<const FrontOptionSpellings*> g_spellings{&kLibraryNames};
FrontCommandSpellings g_installed_commands{};
std::atomic<const FrontCommandSpellings*> g_commands{&kLibraryCommands};

}  // namespace

const FrontOptionSpellings& front_option_library_names() { return kLibraryNames; }

void front_option_spellings_set(const FrontOptionSpellings& spellings) {
  for (size_t k = 0; k < spellings.size(); ++k)
    ATTN_ASSERT(spellings[k] != nullptr && spellings[k][0] != '\0',
                "front_option_spellings_set: no spelling for option " + std::to_string(k));
  g_installed = spellings;
  g_spellings.store(&g_installed);
}

const char* front_option(FrontOption option) {
  const auto k = static_cast<size_t>(option);
  ATTN_ASSERT(k < kFrontOptionCount, "front_option: not an option");
  return (*g_spellings.load())[k];
}

std::string front_option_with(FrontOption option, const std::string& value) {
  const std::string spelling = front_option(option);
  return spelling + (spelling.back() == '=' ? "" : " ") + value;
}

const FrontCommandSpellings& front_command_library_names() { return kLibraryCommands; }

void front_command_spellings_set(const FrontCommandSpellings& spellings) {
  ATTN_ASSERT(front_command_spellings_complete(spellings),
              "front_command_spellings_set: a command has no spelling, or its {} does not fit");
  g_installed_commands = spellings;
  g_commands.store(&g_installed_commands);
}

std::string front_command(FrontCommand command, const std::string& argument) {
  const auto k = static_cast<size_t>(command);
  ATTN_ASSERT(k < kFrontCommandCount, "front_command: not a command");
  std::string text = (*g_commands.load())[k];
  if (kFrontCommandTakesArgument[k]) text.replace(text.find("{}"), 2, argument);
  return text;
}

}  // namespace attn
