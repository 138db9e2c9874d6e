// Test helpers for files and folded text, shared by the test suites.
#ifndef FLAMEFLEET_TESTS_TESTING_TEST_FILES_H_
#define FLAMEFLEET_TESTS_TESTING_TEST_FILES_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace flamefleet::testutil {

// The whole file (empty if it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `text` to `path`, creating its directory.
inline void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Folded text -> stack -> count, summing repeated stacks (a malformed line fails the test).
using FoldedCounts = std::map<std::string, uint64_t>;
inline FoldedCounts ParseFoldedCounts(const std::string& text) {
  FoldedCounts out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t space = line.rfind(' ');
    uint64_t n = 0;
    EXPECT_TRUE(space != absl::string_view::npos && absl::SimpleAtoi(line.substr(space + 1), &n))
        << line;
    out[std::string(line.substr(0, space))] += n;
  }
  return out;
}

}  // namespace flamefleet::testutil

#endif  // FLAMEFLEET_TESTS_TESTING_TEST_FILES_H_
