// Front-end option and command spellings (core/front_option.h): the library's own tables name
// every option and command, a front end's tables replace them, an option set to a value reads
// as the front end writes it, and a table with an entry missing (or a misplaced "{}") is
// refused.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/front_option.h"
#include "front_option_dashed.h"

namespace attn {
namespace {

// A command-line-like table of options (tests/front_option_dashed.h: --force-new, --heads) and
// a table of commands in the shape of apps/main.cpp's.
const FrontOptionSpellings& kCli = test::front_option_dashed();
constexpr FrontCommandSpellings kCliCommands = {
    "cli run SPEC --out {}", "cli run --mpi",    "mpirun -np K cli run --mpi", "cli fit --save",
    "cli fit M --save F",    "cli reproduce {}", "cli reproduce {} --quick",
};
static_assert(front_command_spellings_complete(kCliCommands));

// Restores the library's names when a test ends.
struct FrontSpellings : ::testing::Test {
  void TearDown() override {
    front_option_spellings_set(front_option_library_names());
    front_command_spellings_set(front_command_library_names());
  }
};

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
  EXPECT_STREQ(front_option(FrontOption::kHeadSize), "head_size");
  EXPECT_STREQ(front_option(FrontOption::kFirst), "first");
}

TEST(FrontOption, TheLibraryNamesEveryCommandOnce) {
  std::set<std::string> names;
  for (size_t k = 0; k < kFrontCommandCount; ++k) {
    const std::string name = front_command(static_cast<FrontCommand>(k), "ARG");
    EXPECT_NE(name, "") << k;
    EXPECT_EQ(name.find("--"), std::string::npos) << name;
    EXPECT_EQ(name.find("{}"), std::string::npos) << name;  // the argument replaced it
    EXPECT_EQ(name.find("ARG") != std::string::npos, kFrontCommandTakesArgument[k]) << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kFrontCommandCount);
}

TEST_F(FrontSpellings, AFrontEndsSpellingsReplaceTheLibrarysNames) {
  front_option_spellings_set(kCli);
  front_command_spellings_set(kCliCommands);
  EXPECT_STREQ(front_option(FrontOption::kForceNew), "--force-new");
  EXPECT_STREQ(front_option(FrontOption::kShard), "--shard");
  EXPECT_STREQ(front_option(FrontOption::kHeatmapBlock), "--heatmap-block");
  EXPECT_EQ(front_command(FrontCommand::kRunInto, "runs/x"), "cli run SPEC --out runs/x");
  EXPECT_EQ(front_command(FrontCommand::kReproduceQuick, "demo"), "cli reproduce demo --quick");
  EXPECT_EQ(front_command(FrontCommand::kFitSave), "cli fit --save");
  front_option_spellings_set(front_option_library_names());
  front_command_spellings_set(front_command_library_names());
  EXPECT_STREQ(front_option(FrontOption::kForceNew), "force_new");
  EXPECT_EQ(front_command(FrontCommand::kRunInto, "runs/x"),
            "experiment_run with out_dir = runs/x");
}

TEST_F(FrontSpellings, AnOptionWithAValueReadsAsTheFrontEndWritesIt) {
  EXPECT_EQ(front_option_with(FrontOption::kHeads, "12"), "heads 12");
  front_option_spellings_set(kCli);
  EXPECT_EQ(front_option_with(FrontOption::kHeads, "12"), "--heads 12");
  FrontOptionSpellings python = kCli;
  python[static_cast<size_t>(FrontOption::kHeads)] = "heads=";
  front_option_spellings_set(python);
  EXPECT_EQ(front_option_with(FrontOption::kHeads, "12"), "heads=12");
}

TEST(FrontOption, ATableWithAnOptionMissingIsRefused) {
  FrontOptionSpellings short_by_one = kCli;
  short_by_one[kFrontOptionCount - 1] = nullptr;
  EXPECT_FALSE(front_option_spellings_complete(short_by_one));  // what the front ends assert
  EXPECT_DEATH(front_option_spellings_set(short_by_one),
               "no spelling for option " + std::to_string(kFrontOptionCount - 1));
  // Aggregate initialisation leaves a forgotten last entry null: the same refusal.
  constexpr FrontOptionSpellings forgotten = {"--out", "--force-new", "--retry-failed"};
  static_assert(!front_option_spellings_complete(forgotten));
}

TEST(FrontOption, ACommandTableWithAMissingOrMisplacedArgumentIsRefused) {
  FrontCommandSpellings no_arg = kCliCommands;
  no_arg[static_cast<size_t>(FrontCommand::kRunInto)] = "cli run SPEC --out DIR";
  EXPECT_FALSE(front_command_spellings_complete(no_arg));
  FrontCommandSpellings stray_arg = kCliCommands;
  stray_arg[static_cast<size_t>(FrontCommand::kFitSave)] = "cli fit --save {}";
  EXPECT_FALSE(front_command_spellings_complete(stray_arg));
  FrontCommandSpellings missing = kCliCommands;
  missing[kFrontCommandCount - 1] = "";
  EXPECT_FALSE(front_command_spellings_complete(missing));
  EXPECT_DEATH(front_command_spellings_set(missing), "a command has no spelling");
}

}  // namespace
}  // namespace attn
