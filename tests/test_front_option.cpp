// Front-end option spellings (core/front_option.h): the library's own table names every
// option, a front end's table replaces it, and a table with an option missing is refused.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/front_option.h"

namespace attn {
namespace {

TEST(FrontOption, TheLibraryNamesEveryOptionOnce) {
  std::set<std::string> names;
  for (size_t k = 0; k < kFrontOptionCount; ++k) {
    const char* name = front_option(static_cast<FrontOption>(k));
    ASSERT_NE(name, nullptr) << k;
    EXPECT_NE(std::string(name), "") << k;
    EXPECT_EQ(std::string(name).find("--"), std::string::npos) << name;  // no CLI spelling
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kFrontOptionCount);
  EXPECT_STREQ(front_option(FrontOption::kOut), "out_dir");
  EXPECT_STREQ(front_option(FrontOption::kForceNew), "force_new");
}

TEST(FrontOption, AFrontEndsSpellingsReplaceTheLibrarysNames) {
  const FrontOptionSpellings cli = {"--out",   "--force-new",   "--retry-failed", "--jobs",
                                    "--quick", "--report-only", "--set",          "--shard"};
  front_option_spellings_set(cli);
  EXPECT_STREQ(front_option(FrontOption::kForceNew), "--force-new");
  EXPECT_STREQ(front_option(FrontOption::kShard), "--shard");
  front_option_spellings_set(front_option_library_names());
  EXPECT_STREQ(front_option(FrontOption::kForceNew), "force_new");
}

TEST(FrontOption, ATableWithAnOptionMissingIsRefused) {
  constexpr FrontOptionSpellings short_by_one = {
      "--out", "--force-new", "--retry-failed", "--jobs", "--quick", "--report-only", "--set"};
  static_assert(!front_option_spellings_complete(short_by_one));  // what the front ends assert
  EXPECT_DEATH(front_option_spellings_set(short_by_one), "no spelling for option 7");
}

}  // namespace
}  // namespace attn
