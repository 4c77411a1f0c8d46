// Front-end option spellings (see front_option.h).
#include "core/front_option.h"

#include <atomic>

#include "core/error.h"

namespace attn {
namespace {

constexpr FrontOptionSpellings kLibraryNames = {
    "out_dir", "force_new", "retry_failed", "jobs", "quick", "report_only", "overrides", "shard",
};
static_assert(front_option_spellings_complete(kLibraryNames), "a FrontOption has no library name");

// Set at start-up, before any thread or child is started; read by messages.
FrontOptionSpellings g_installed{};
std::atomic<const FrontOptionSpellings*> g_spellings{&kLibraryNames};

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

}  // namespace attn
