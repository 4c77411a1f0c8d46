// Tests of the learning-rate schedules (train/lr_schedule.h): linear decay after a warm-up in
// closed form, against transformers' get_linear_schedule_with_warmup (its lr_lambda written
// out below; the same for warmup ≠ total, while at warmup = total the last step is still
// warm-up, factor 1, where transformers gives 0), with a floor, and parsed from train.schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.h"
#include "models/neural_train_config.h"
#include "train/lr_schedule.h"
#include "train/trainer.h"

namespace attn {
namespace {

// transformers.optimization.get_linear_schedule_with_warmup's lr_lambda(current_step).
double hf_linear(int64_t step, int64_t warmup, int64_t total) {
  if (step < warmup) return static_cast<double>(step) / std::max<int64_t>(1, warmup);
  return std::max(0.0, static_cast<double>(total - step) /
                           static_cast<double>(std::max<int64_t>(1, total - warmup)));
}

TEST(LrSchedule, LinearClosedForm) {
  const LrSchedule s{LrScheduleKind::linear, 10, 0.0};
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 1, 110), 0.1);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 5, 110), 0.5);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 10, 110), 1.0);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 11, 110), 0.99);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 60, 110), 0.5);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 85, 110), 0.25);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 110, 110), 0.0);
  // Without warm-up: 1 − t/total.
  EXPECT_DOUBLE_EQ(lr_schedule_factor({LrScheduleKind::linear, 0, 0.0}, 25, 100), 0.75);
}

TEST(LrSchedule, LinearWithAFloorEndsAtTheFloor) {
  const LrSchedule s{LrScheduleKind::linear, 10, 0.1};
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 5, 110), 0.5);  // the warm-up ignores the floor
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 10, 110), 1.0);
  EXPECT_NEAR(lr_schedule_factor(s, 60, 110), 0.55, 1e-15);
  EXPECT_NEAR(lr_schedule_factor(s, 110, 110), 0.1, 1e-15);
  EXPECT_NEAR(lr_schedule_factor(s, 200, 110), 0.1, 1e-15);  // past the end: the floor
}

TEST(LrSchedule, LinearIsTransformersLinearScheduleWithWarmup) {
  for (auto [warmup, total] :
       {std::pair<int64_t, int64_t>{0, 50}, {1, 50}, {7, 50}, {1000, 100000}, {49, 50}, {60, 50}})
    for (int64_t t = 1; t <= total; ++t)
      EXPECT_NEAR(lr_schedule_factor({LrScheduleKind::linear, warmup, 0.0}, t, total),
                  hf_linear(t, warmup, total), 1e-15)
          << "warmup " << warmup << " total " << total << " step " << t;
}

TEST(LrSchedule, TrainScheduleKeyTakesLinear) {
  Params p("train", neural_train_schema());
  p.set_text("schedule", "linear");
  p.set_text("warmup_steps", "4");
  p.set_text("min_lr_factor", "0.2");
  const TrainerConfig c = trainer_config_from_params(p);
  EXPECT_EQ(c.schedule.kind, LrScheduleKind::linear);
  EXPECT_EQ(c.schedule.warmup, 4);
  EXPECT_DOUBLE_EQ(c.schedule.min_factor, 0.2);
  try {
    p.set_text("schedule", "linear_decay");
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("linear"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn
