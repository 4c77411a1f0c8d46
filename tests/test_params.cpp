// Parameter schema: parsing, validation errors and JSON output.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/params.h"
#include "core/suggest.h"

namespace attn {
namespace {

Params example() {
  return Params("task", {param_int("N", 16, "length", 2, 100), param_real("gamma", 1.0, "g"),
                         param_bool("flag", false, "f"),
                         param_choice("encoding", "multi_hot", {"multi_hot", "indices"}, "e")});
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Params, DefaultsAndTypedSetters) {
  Params p = example();
  EXPECT_EQ(p.get_int("N"), 16);
  p.set_text("N", "32");
  p.set_text("gamma", "2.5e-1");
  p.set_text("flag", "true");
  p.set_text("encoding", "indices");
  EXPECT_EQ(p.get_int("N"), 32);
  EXPECT_DOUBLE_EQ(p.get_real("gamma"), 0.25);
  EXPECT_TRUE(p.get_bool("flag"));
  EXPECT_EQ(p.get_string("encoding"), "indices");
  p.set("gamma", int64_t{3});  // an integer is a valid real
  EXPECT_DOUBLE_EQ(p.get_real("gamma"), 3.0);
}

TEST(Params, UnknownKeySuggestsTheClosest) {
  Params p = example();
  const std::string msg = error_of([&] { p.set_text("encodng", "indices"); });
  EXPECT_NE(msg.find("task.encodng"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'encoding'"), std::string::npos) << msg;
}

TEST(Params, WrongTypesAreRejectedWithTheKeyName) {
  Params p = example();
  EXPECT_NE(error_of([&] { p.set_text("N", "1.5"); }).find("task.N must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of([&] { p.set_text("N", "abc"); }).find("task.N"), std::string::npos);
  EXPECT_NE(error_of([&] { p.set_text("gamma", "x"); }).find("task.gamma must be a number"),
            std::string::npos);
  EXPECT_NE(error_of([&] { p.set_text("flag", "yes"); }).find("boolean"), std::string::npos);
  EXPECT_NE(error_of([&] { p.set("N", std::string("16")); }).find("integer"), std::string::npos);
  EXPECT_NE(error_of([&] { p.set("N", 2.0); }).find("integer"), std::string::npos);
}

TEST(Params, RangesAndChoicesAreEnforced) {
  Params p = example();
  const std::string low = error_of([&] { p.set_text("N", "1"); });
  EXPECT_NE(low.find("task.N = 1 is out of range: use a value between 2 and 100"), std::string::npos)
      << low;
  const std::string choice = error_of([&] { p.set_text("encoding", "multihot"); });
  EXPECT_NE(choice.find("did you mean 'multi_hot'"), std::string::npos) << choice;
  EXPECT_NE(choice.find("multi_hot, indices"), std::string::npos) << choice;
  EXPECT_NE(error_of([&] { p.set_text("gamma", "inf"); }).find("finite"), std::string::npos);
  EXPECT_EQ(p.get_int("N"), 16);  // failed sets change nothing
}

TEST(Params, RealListsParseFromTextAndCheckEveryElement) {
  Params p("train", {param_real_list("lambdas", {1e-3}, "grid", 0.0)});
  p.set_text("lambdas", "[1e-8, 0.5, 1]");
  EXPECT_EQ(p.get_real_list("lambdas"), (std::vector<double>{1e-8, 0.5, 1.0}));
  p.set_text("lambdas", "0.1,0.2");
  EXPECT_EQ(p.get_real_list("lambdas"), (std::vector<double>{0.1, 0.2}));
  p.set("lambdas", 2.0);  // a scalar is a one-element list
  EXPECT_EQ(p.get_real_list("lambdas"), (std::vector<double>{2.0}));
  EXPECT_NE(error_of([&] { p.set_text("lambdas", "[1, -1]"); }).find("train.lambdas"),
            std::string::npos);
  EXPECT_NE(error_of([&] { p.set_text("lambdas", "[1, x]"); }).find("list of numbers"),
            std::string::npos);
  EXPECT_EQ(p.to_json(), R"({"lambdas": [2]})");
}

TEST(Params, JsonIsOrderedAndEscaped) {
  Params p("task", {param_int("N", 3, ""), param_choice("s", "a\"b", {}, ""),
                    param_real("x", 0.5, ""), param_bool("b", true, ""), param_real("r", 2.0, "")});
  EXPECT_EQ(p.to_json(), R"({"N": 3, "s": "a\"b", "x": 0.5, "b": true, "r": 2.0})");
}

TEST(Suggest, EditDistanceAndPlausibility) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("qas", "qsa"), 1);  // a swap of neighbours
  EXPECT_EQ(edit_distance("N", "n"), 0);
  EXPECT_EQ(suggest_closest("qas", {"qsa", "match2"}), "qsa");
  EXPECT_EQ(suggest_closest("zzzzzz", {"qsa", "match2"}), "");
}

}  // namespace
}  // namespace attn
