// Reading the reference tables of a markdown doc (docs/spec-format.md) for tests that compare
// them with the code's tables: doc_table(text, heading, header) = the rows (cells trimmed) of
// the first table after the line `heading` whose header row starts with `header`;
// backticked(cell) = the `names` in a cell; anchor_of(cell) = its <a id="..."> ("" if none);
// why_link(line) = the target of a report line's "([why](TARGET))" ("" if none).
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace attn::test {

inline std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line.substr(1));  // after the leading '|'
  while (std::getline(in, cell, '|')) {
    const size_t first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  return cells;
}

inline std::vector<std::vector<std::string>> doc_table(const std::string& text,
                                                       const std::string& heading,
                                                       const std::string& header) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  bool in_section = false, in_table = false;
  while (std::getline(in, line)) {
    if (!in_section) {
      in_section = line == heading;
      continue;
    }
    if (!in_table) {
      in_table = line.rfind(header, 0) == 0;
      if (in_table) std::getline(in, line);  // the |---| row
      continue;
    }
    if (line.empty() || line[0] != '|') break;
    rows.push_back(table_cells(line));
  }
  EXPECT_FALSE(rows.empty()) << "no table '" << header << "' after '" << heading << "'";
  return rows;
}

inline std::vector<std::string> backticked(const std::string& cell) {
  std::vector<std::string> names;
  for (size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open + 1)) {
    const size_t close = cell.find('`', open + 1);
    if (close == std::string::npos) break;
    names.push_back(cell.substr(open + 1, close - open - 1));
    open = close;
  }
  return names;
}

inline std::string anchor_of(const std::string& cell) {
  const size_t at = cell.find("<a id=\"");
  if (at == std::string::npos) return "";
  return cell.substr(at + 7, cell.find('"', at + 7) - at - 7);
}

// The link a report writes on a failing or undecided claim's line (experiment/report.cpp).
inline std::string why_link(const std::string& line) {
  const size_t at = line.find("([why](");
  if (at == std::string::npos) return "";
  return line.substr(at + 7, line.find(')', at + 7) - at - 7);
}

}  // namespace attn::test
