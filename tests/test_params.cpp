// Parameter schema: parsing, validation errors and JSON output.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/front_option.h"
#include "core/params.h"
#include "core/params_json.h"
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
  EXPECT_NE(low.find("task.N = 1 is out of range: use a value between 2 and 100"),
            std::string::npos)
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

// ParamType::NameList (param_name_list), the type of eval.probes: from TOML arrays of strings,
// from text as the command line writes it, every name checked, JSON and text forms.
TEST(Params, NameListsParseCheckAndPrint) {
  Params p("eval", {param_name_list("probes", {}, "diagnostics"),
                    param_name_list("pick", {"a"}, "chosen", {"alpha", "beta", "a"})});
  EXPECT_TRUE(p.get_name_list("probes").empty());
  p.set("probes", std::vector<std::string>{"x", "y"});
  EXPECT_EQ(p.get_name_list("probes"), (std::vector<std::string>{"x", "y"}));
  p.set_text("probes", "[\"u\", v ]");
  EXPECT_EQ(p.get_name_list("probes"), (std::vector<std::string>{"u", "v"}));
  p.set_text("probes", "w");
  EXPECT_EQ(p.get_name_list("probes"), (std::vector<std::string>{"w"}));
  p.set("probes", std::vector<double>{});  // TOML's [] arrives as an empty list of numbers
  EXPECT_TRUE(p.get_name_list("probes").empty());
  p.set_text("probes", "[]");
  EXPECT_TRUE(p.get_name_list("probes").empty());
  EXPECT_EQ(error_of([&] { p.set("probes", int64_t{3}); }),
            "eval.probes must be a list of names, got 3");
  EXPECT_EQ(error_of([&] { p.set("probes", std::vector<double>{1.0}); }),
            "eval.probes must be a list of names, got [1]");
  const std::string empty = error_of([&] { p.set_text("probes", "a,,b"); });
  EXPECT_NE(empty.find("eval.probes = [\"a\", \"\", \"b\"]: a name is empty"), std::string::npos)
      << empty;
  EXPECT_EQ(error_of([&] { p.set_text("pick", "alpha, bta"); }),
            "eval.pick: 'bta' is not allowed (did you mean 'beta'?); choose among: alpha, beta, a");
  p.set_text("pick", "beta,alpha");
  EXPECT_EQ(param_value_text(p.values()[1]), "[\"beta\", \"alpha\"]");
  EXPECT_EQ(p.to_json(), R"({"probes": [], "pick": ["beta", "alpha"]})");
  EXPECT_EQ(std::string(param_type_name(ParamType::NameList)), "a list of names");
  // JSON round trip (spec.json, run points): an array of strings is a list of names (an empty
  // one reads back as [] of numbers, which set() takes for the empty list).
  EXPECT_EQ(param_value_from_json(param_value_json(p.values()[1]), "v"), p.values()[1]);
  params_set_json(p, nlohmann::json::parse(R"({"probes": ["m", "n"]})"), "test");
  EXPECT_EQ(p.get_name_list("probes"), (std::vector<std::string>{"m", "n"}));
  EXPECT_EQ(
      error_of([&] { params_set_json(p, nlohmann::json::parse(R"({"probes": ["m", 2]})"), "t"); }),
      "t: eval.probes must be a list of names (strings) or of numbers");
}

TEST(Params, JsonIsOrderedAndEscaped) {
  Params p("task", {param_int("N", 3, ""), param_choice("s", "a\"b", {}, ""),
                    param_real("x", 0.5, ""), param_bool("b", true, ""), param_real("r", 2.0, "")});
  EXPECT_EQ(p.to_json(), R"({"N": 3, "s": "a\"b", "x": 0.5, "b": true, "r": 2.0})");
}

TEST(Params, RenamedKeyTakesBothSpellingsAndIsStoredUnderTheOldOne) {
  Params p("model", {param_renamed(param_int("matched_heads", 512, "M"), "heads"),
                     param_real("w_var", 0.0, "")});
  EXPECT_TRUE(p.has("matched_heads"));
  EXPECT_TRUE(p.has("heads"));
  EXPECT_FALSE(p.has(""));
  p.set_text("heads", "3");
  EXPECT_EQ(p.get_int("matched_heads"), 3);
  p.set("matched_heads", int64_t{7});
  EXPECT_EQ(p.get_int("heads"), 7);
  EXPECT_EQ(p.stored_key("matched_heads"), "heads");
  EXPECT_EQ(p.stored_key("heads"), "heads");
  EXPECT_EQ(p.stored_key("w_var"), "w_var");
  EXPECT_EQ(p.to_json(), R"({"heads": 7, "w_var": 0.0})");  // run ids keep the old spelling
  // Errors name the new spelling; the did-you-mean lists names only.
  EXPECT_NE(error_of([&] { p.set_text("heads", "x"); }).find("model.matched_heads must be"),
            std::string::npos);
  EXPECT_NE(error_of([&] { p.set_text("matched_head", "1"); }).find("known: matched_heads, w_var"),
            std::string::npos);
}

TEST(Params, ItemParseSplitsSectionKeyAndValue) {
  const ParamItem a = param_item_parse("task.N=16", "task.KEY=VALUE");
  EXPECT_EQ(a.section, "task");
  EXPECT_EQ(a.key, "N");
  EXPECT_EQ(a.value, "16");
  const ParamItem b = param_item_parse("model.rfmlp.heads=0.5", "F");  // first dot, first '='
  EXPECT_EQ(b.section, "model");
  EXPECT_EQ(b.key, "rfmlp.heads");
  EXPECT_EQ(b.value, "0.5");
  const ParamItem c = param_item_parse("N=1.5=x", "F");  // no dot before '='
  EXPECT_EQ(c.section, "");
  EXPECT_EQ(c.key, "N");
  EXPECT_EQ(c.value, "1.5=x");
  EXPECT_EQ(param_item_parse("train.lambdas=", "F").value, "");
  for (const char* bad : {"task.N", "=3", ".N=3", "task.=3", ""})
    EXPECT_EQ(error_of([&] { param_item_parse(bad, "task.KEY=VALUE"); }),
              std::string(front_option(FrontOption::kSet)) + " '" + bad +
                  "' must look like task.KEY=VALUE")
        << bad;
}

TEST(Params, JsonValuesRoundTrip) {
  Params p("train", {param_int("n", 3, ""), param_real("f", 0.5, ""), param_bool("b", false, ""),
                     param_choice("s", "a", {}, ""), param_real_list("l", {1.0}, "")});
  const auto j = nlohmann::json::parse(R"({"n": 5, "f": 2, "b": true, "s": "x", "l": [0.5, 3]})");
  params_set_json(p, j, "test");
  EXPECT_EQ(p.get_int("n"), 5);
  EXPECT_EQ(p.get_real("f"), 2.0);  // an integer for a real key
  EXPECT_TRUE(p.get_bool("b"));
  EXPECT_EQ(p.get_string("s"), "x");
  EXPECT_EQ(p.get_real_list("l"), (std::vector<double>{0.5, 3.0}));
  for (size_t k = 0; k < p.values().size(); ++k)
    EXPECT_EQ(param_value_from_json(param_value_json(p.values()[k]), "v"), p.values()[k]) << k;
  EXPECT_EQ(
      error_of([&] { params_set_json(p, nlohmann::json::parse(R"({"l": [1, "x"]})"), "test"); }),
      "test: train.l must be a list of numbers");
  EXPECT_EQ(error_of([&] { params_set_json(p, nlohmann::json::parse(R"({"n": null})"), "test"); }),
            "test: train.n has an unsupported JSON value null");
  EXPECT_NE(error_of([&] { params_set_json(p, nlohmann::json::parse(R"({"m": 1})"), "test"); })
                .find("test: unknown parameter 'train.m'"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { params_set_json(p, nlohmann::json::array(), "test"); }),
            "test: section train is not a JSON object");
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
