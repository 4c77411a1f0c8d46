// A fixture for tests that write a spec file and load or plan it: a private temporary directory
// per test (removed afterwards), write(text) → the path of DIR/spec.toml, load(text, sets, quick),
// plan(text), and error(text, sets) = the message of the UserError loading + planning throws ("" if
// none).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "core/error.h"
#include "experiment/plan.h"
#include "experiment/spec.h"

namespace attn::test {

class SpecFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attnlab_spec_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& text) {
    file_write(path("spec.toml"), text);
    return path("spec.toml");
  }
  Spec load(const std::string& text, const std::vector<std::string>& sets = {},
            bool quick = false) {
    return spec_load(write(text), sets, quick);
  }
  std::vector<RunPoint> plan(const std::string& text) { return plan_make(load(text)); }
  std::string error(const std::string& text, const std::vector<std::string>& sets = {}) {
    try {
      plan_make(load(text, sets));
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

}  // namespace attn::test
