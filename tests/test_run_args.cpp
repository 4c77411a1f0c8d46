// The stored run arguments (experiment/run_args.h): a round trip, the JSON text stores hold,
// and what a store written before run_args (or a damaged field) reads back as.
#include <gtest/gtest.h>

#include "experiment/run_args.h"

namespace attn {
namespace {

TEST(RunArgs, RoundTripAndTheStoredText) {
  const RunArgs a{true, {"train.steps=10", "task.N=8"}, 2, 4};
  const std::string text = run_args_json(a);
  EXPECT_EQ(text, R"({"quick":true,"set":["train.steps=10","task.N=8"],"shard":[2,4]})");
  RunArgs b;
  ASSERT_TRUE(run_args_parse(text, &b));
  EXPECT_TRUE(b.quick);
  EXPECT_EQ(b.overrides, a.overrides);
  EXPECT_EQ(b.shard_index, 2);
  EXPECT_EQ(b.shard_count, 4);
}

TEST(RunArgs, NoObjectIsUnknownAndBadFieldsKeepTheirDefaults) {
  RunArgs r;
  EXPECT_FALSE(run_args_parse("", &r));       // a store from before run_args
  EXPECT_FALSE(run_args_parse("[1, 2]", &r));
  ASSERT_TRUE(run_args_parse(R"({"quick": 1, "set": ["a=1", 7], "shard": [3]})", &r));
  EXPECT_FALSE(r.quick);                               // not a boolean
  EXPECT_EQ(r.overrides, std::vector<std::string>{"a=1"});  // strings only
  EXPECT_EQ(r.shard_index, 0);                         // not a pair
  EXPECT_EQ(r.shard_count, 1);
  // Every parse starts from the defaults: nothing is left from the previous one.
  r = RunArgs{true, {"x=1"}, 3, 4};
  ASSERT_TRUE(run_args_parse("{}", &r));
  EXPECT_FALSE(r.quick);
  EXPECT_TRUE(r.overrides.empty());
  EXPECT_EQ(r.shard_count, 1);  // merge reads "not sharded" from a store without "shard"
  for (const char* shard : {R"(["a", 2])", "[1.5, 2]", "[1, null]"}) {
    r = RunArgs{false, {}, 3, 4};
    ASSERT_TRUE(run_args_parse(std::string(R"({"shard": )") + shard + "}", &r)) << shard;
    EXPECT_EQ(r.shard_index, 0) << shard;
    EXPECT_EQ(r.shard_count, 1) << shard;
  }
}

}  // namespace
}  // namespace attn
