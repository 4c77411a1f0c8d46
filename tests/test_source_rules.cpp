// Rules of the source tree that one grep checks (issue #30, item 6): the three error tiers are
// the only ones, one errno classifier, one FNV-1a, one RowMatrix alias, and every C++ line fits
// .clang-format's column limit. Each test reads the files and names the one that breaks the rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

struct SourceFile {
  std::string rel;   // e.g. "src/core/rng.cpp"
  std::string text;  // without // comments
};

// Every .h/.cpp under src/ and python/src/, with line comments removed.
std::vector<SourceFile> source_files() {
  std::vector<SourceFile> files;
  const fs::path root = test_source_dir();
  for (const char* dir : {"src", "python/src"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      std::ifstream in(e.path());
      std::string line, text;
      while (std::getline(in, line)) {
        const size_t c = line.find("//");
        text += (c == std::string::npos ? line : line.substr(0, c)) + "\n";
      }
      files.push_back({fs::relative(e.path(), root).string(), text});
    }
  EXPECT_GT(files.size(), 100u);
  return files;
}

// The files (other than `allowed`) whose code holds `needle`.
std::vector<std::string> files_with(const std::string& needle,
                                    const std::vector<std::string>& allowed) {
  std::vector<std::string> hits;
  for (const auto& f : source_files()) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || f.rel == a;
    if (!ok && f.text.find(needle) != std::string::npos) hits.push_back(f.rel);
  }
  return hits;
}

using Files = std::vector<std::string>;

TEST(SourceRules, OnlyTheThreeErrorTiersAreThrown) {
  // UserError / IoError (core/error.h) derive from std::runtime_error; Interrupted
  // (core/interrupt.h) is a control-flow signal, not an error.
  EXPECT_EQ(files_with("throw std::", {}), Files{});
  EXPECT_EQ(files_with("std::runtime_error(", {"src/core/error.h", "src/core/interrupt.h"}),
            Files{});
}

TEST(SourceRules, OneErrnoClassifier) {
  for (const char* e : {"ENOSPC", "EDQUOT", "EROFS", "EFBIG"})
    EXPECT_EQ(files_with(e, {"src/core/errno_kind.cpp"}), Files{}) << e;
}

TEST(SourceRules, OneFnv1a) {
  for (const char* c :
       {"0xcbf29ce484222325", "0x100000001b3", "1099511628211", "1469598103934665603"})
    EXPECT_EQ(files_with(c, {"src/core/fnv.h"}), Files{}) << c;
}

TEST(SourceRules, OneRowMatrixAlias) {
  EXPECT_EQ(files_with("using RowMatrix", {"src/core/eigen_rows.h"}), Files{});
  // Eigen stays out of widely included headers: the alias header is included by .cpp files.
  for (const auto& f : files_with("#include \"core/eigen_rows.h\"", {}))
    EXPECT_EQ(fs::path(f).extension(), ".cpp") << f;
}

// Every C++ line of the tree fits .clang-format's ColumnLimit (100), counted in characters
// (UTF-8 code points, as clang-format counts columns), not bytes.
TEST(SourceRules, LinesFitTheColumnLimit) {
  constexpr size_t kColumnLimit = 100;
  const fs::path root = test_source_dir();
  std::vector<std::string> long_lines;
  size_t files = 0;
  for (const char* dir : {"src", "apps", "python/src", "tests", "bench", "fuzz"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        size_t columns = 0;
        for (const char c : line) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        if (columns > kColumnLimit)
          long_lines.push_back(fs::relative(e.path(), root).string() + ":" +
                               std::to_string(number) + " (" + std::to_string(columns) + ")");
      }
    }
  EXPECT_GT(files, 300u);
  EXPECT_EQ(long_lines, std::vector<std::string>{}) << "run `git clang-format` on these lines";
}

}  // namespace
}  // namespace attn
