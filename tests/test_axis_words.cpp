// Axis words (experiment/axis_words.h): the table's words for keys and metrics, the raw key
// for anything else, and a row (words and a range) for every metric of train/metric_table.h.
#include <gtest/gtest.h>

#include <string>

#include "experiment/axis_words.h"
#include "train/metric_table.h"

namespace attn {
namespace {

TEST(AxisWords, KeysAndMetricsReadAsWords) {
  EXPECT_EQ(axis_words("task.N"), "sequence length N");
  EXPECT_EQ(axis_words("model.m"), "embedding dimension m");
  EXPECT_EQ(axis_words("train.n"), "training samples n");
  EXPECT_EQ(axis_words("test_nmse"), "test NMSE");
  EXPECT_EQ(axis_words("train_nmse"), "training NMSE");
  EXPECT_EQ(axis_words("val_loss"), "validation loss");
  EXPECT_EQ(axis_words("test_token_error_by_k"), "test token error rate by k");
  EXPECT_EQ(axis_words_list("task.name, model.name"), "task, model");
  EXPECT_EQ(axis_words_list(""), "");
}

TEST(AxisWords, AKeyTheTableLacksIsShownAsItIs) {
  for (const std::string key : {"task.zeta", "bits_needed", "test_foo", "nmse_by", "test_", ""})
    EXPECT_EQ(axis_words(key), key);
  EXPECT_EQ(axis_words_list("task.N, task.zeta"), "sequence length N, task.zeta");
  EXPECT_EQ(metric_range_of("bits_needed"), MetricRange::any);
  EXPECT_EQ(metric_range_of("task.N"), MetricRange::any);
}

TEST(AxisWords, MetricsHaveTheirRange) {
  EXPECT_EQ(metric_range_of("test_nmse"), MetricRange::nonnegative);
  EXPECT_EQ(metric_range_of("val_loss"), MetricRange::nonnegative);
  EXPECT_EQ(metric_range_of("test_success_rate"), MetricRange::unit_interval);
  EXPECT_EQ(metric_range_of("test_token_error_by_k"), MetricRange::unit_interval);
}

TEST(AxisWords, EveryMetricOfTheMetricTableHasARow) {
  for (const auto& row : metric_table())
    EXPECT_TRUE(axis_words_has_metric(row.name))
        << row.name << ": add its words and range to kWords in src/experiment/axis_words.cpp";
}

}  // namespace
}  // namespace attn
