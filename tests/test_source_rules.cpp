// Rules of the source tree that one grep checks (issue #30, item 6): the error tiers (core/error.h)
// are the only ones, one errno classifier, one FNV-1a, one RowMatrix alias, and every C++ line fits
// .clang-format's column limit, no front end's flag or command line in a library string. Each
// test reads the files and names the one that breaks the rule.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
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
  // UserError / IoError / InternalFault (core/error.h) derive from std::runtime_error; Interrupted
  // (core/interrupt.h) is a control-flow signal, not an error. An allocator reports failure by
  // std::bad_alloc (the standard's Allocator requirements): core/huge_page_allocator.cpp.
  EXPECT_EQ(files_with("throw std::", {"src/core/huge_page_allocator.cpp"}), Files{});
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

// One string literal of a C++ text: where it starts (offset, line) and its characters
// (adjacent literals, "a" "b", are one). Comments and character literals are skipped; raw
// strings R"d(...)d" are literals; a ' after a letter or digit is a digit separator (1'000).
struct Literal {
  size_t offset = 0;
  int line = 0;
  std::string text;
};

std::vector<Literal> string_literals(const std::string& code) {
  std::vector<Literal> out;
  bool joinable = false;  // only whitespace since the last literal ended
  int line = 1;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (c == '\n') ++line;
    if (code.compare(i, 2, "//") == 0) {
      i = code.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (code.compare(i, 2, "/*") == 0) {
      const size_t end = code.find("*/", i + 2);
      for (size_t k = i; k < end && k < code.size(); ++k) line += code[k] == '\n';
      i = end == std::string::npos ? code.size() : end + 2;
      joinable = false;
      continue;
    }
    if (c == '\'' && !(i > 0 && ident(code[i - 1]))) {  // a character literal
      for (++i; i < code.size() && code[i] != '\''; ++i)
        if (code[i] == '\\') ++i;
      ++i;
      joinable = false;
      continue;
    }
    if (c == '"') {
      Literal lit{i, line, ""};
      if (i > 0 && code[i - 1] == 'R' &&
          (i < 2 || !ident(code[i - 2]) || code[i - 2] == '8' || code[i - 2] == 'u' ||
           code[i - 2] == 'U' || code[i - 2] == 'L')) {
        const size_t open = code.find('(', i);
        const std::string close = ")" + code.substr(i + 1, open - i - 1) + "\"";
        const size_t end = code.find(close, open);
        lit.text = code.substr(open + 1, end - open - 1);
        i = end + close.size();
      } else {
        for (++i; i < code.size() && code[i] != '"'; ++i) {
          if (code[i] == '\\') lit.text += code[i++];
          lit.text += code[i];
        }
        ++i;
      }
      for (const char k : lit.text) line += k == '\n';
      if (joinable && !out.empty())
        out.back().text += lit.text;
      else
        out.push_back(lit);
      joinable = true;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) joinable = false;
    ++i;
  }
  return out;
}

// Flags of other programs that a library message may name, with whose they are.
const std::vector<std::pair<std::string, std::string>> kForeignFlags = {
    {"--array", "Slurm's sbatch (a job array, with attnlab's shard option)"},
    {"--mem", "Slurm's memory limit (the cgroup limit a job runs under)"},
};

// The command-line flags ("--name") and whole commands a front end spells that the string
// literals of `code` hold, as "LINE: --flag in \"literal\"". Exempt: the literals of a front
// end's spelling table (the initializer of a FrontOptionSpellings or FrontCommandSpellings)
// and kForeignFlags. *exempt counts the table literals skipped.
std::vector<std::string> front_end_spellings(const std::string& code, int* exempt) {
  std::vector<std::pair<size_t, size_t>> tables;
  const std::regex table(R"((FrontOptionSpellings|FrontCommandSpellings)\s+\w+\s*=\s*\{)");
  for (auto m = std::sregex_iterator(code.begin(), code.end(), table); m != std::sregex_iterator();
       ++m) {
    const size_t begin = static_cast<size_t>(m->position() + m->length());
    tables.emplace_back(begin, code.find("};", begin));
  }
  const std::regex flag(R"(--[A-Za-z][A-Za-z0-9-]*)");
  std::vector<std::string> hits;
  *exempt = 0;
  for (const Literal& lit : string_literals(code)) {
    bool in_table = false;
    for (const auto& [b, e] : tables) in_table = in_table || (lit.offset >= b && lit.offset < e);
    for (auto m = std::sregex_iterator(lit.text.begin(), lit.text.end(), flag);
         m != std::sregex_iterator(); ++m) {
      bool foreign = false;
      for (const auto& [name, whose] : kForeignFlags) foreign = foreign || m->str() == name;
      if (in_table)
        ++*exempt;
      else if (!foreign)
        hits.push_back(std::to_string(lit.line) + ": " + m->str() + " in \"" + lit.text + "\"");
    }
  }
  return hits;
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The helper finds a flag in every kind of literal, and only there.
TEST(SourceRules, TheFlagScanFindsAPlantedFlag) {
  int exempt = 0;
  const std::string planted =
      "int n = 1'000; char q = '\"';  // \"--comment\" is no literal\n"
      "/* \"--block\" neither */ const char* a = \"add --force-new\";\n"
      "std::string b = \"x\" \"--split\", c = R\"d(raw --raw)d\", d = \"-- 12 a-b --\";\n"
      "const char* e = \"e.g. --array=0-3 (Slurm)\";\n"
      "constexpr attn::FrontOptionSpellings kT = {\n  \"--out\", \"--jobs\"};\n"
      "const char* f = \"\\\"--escaped\\\"\";\n";
  EXPECT_EQ(front_end_spellings(planted, &exempt),
            (Files{"2: --force-new in \"add --force-new\"", "3: --split in \"x--split\"",
                   "3: --raw in \"raw --raw\"", "7: --escaped in \"\\\"--escaped\\\"\""}));
  EXPECT_EQ(exempt, 2);
}

// No library string names a command-line flag or a command line (issue #30, item 6): messages
// name options through core/front_option.h, which each front end spells.
TEST(SourceRules, NoFrontEndSpellingInTheLibrary) {
  const fs::path root = test_source_dir();
  std::vector<std::string> hits;
  size_t files = 0, literals = 0;
  int tables = 0;
  for (const char* dir : {"src", "python/src"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      ++files;
      const std::string code = file_text(e.path());
      literals += string_literals(code).size();
      int exempt = 0;
      for (const auto& h : front_end_spellings(code, &exempt))
        hits.push_back(fs::relative(e.path(), root).string() + ":" + h);
      tables += exempt;
    }
  EXPECT_GT(files, 300u);
  EXPECT_GT(literals, 5000u);
  EXPECT_GT(tables, 0);  // python/src/module.cpp's table spells the CLI's MPI commands
  EXPECT_EQ(hits, Files{}) << "name the option with front_option (core/front_option.h)";
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
