// `flamefleet top` (cli/top.h): per-procedure self and inclusive cycles with recursion counted
// once per stack, the table and its JSON, on a folded file and on a fetched directory, through the
// flamefleet binary. (batch:ID on a real fleet: tests/e2e/metrics_test.cc.)
#include "cli/top.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/test_files.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;
using testutil::FromFolded;
using testutil::ReadFile;
using testutil::WriteFile;

// fib recurses three deep on one stack and two on another; leaf is reached from fib and from
// main. By hand: total 80; fib self 30 + 20 = 50, inclusive 30 + 20 + 5 = 55 (each stack once,
// although fib appears up to three times on it); leaf self = inclusive = 5 + 15 = 20; main self
// 10, inclusive 80.
constexpr char kRecursive[] =
    "$exec::$main;fib;fib;fib 30\n"
    "$exec::$main;fib;fib 20\n"
    "$exec::$main;fib;leaf 5\n"
    "$exec::$main 10\n"
    "$exec::$main;leaf 15\n";

std::map<std::string, std::pair<uint64_t, uint64_t>> SelfAndInclusive(const ProcedureTable& t) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (const ProcedureCycles& r : t.rows) out[r.name] = {r.self, r.inclusive};
  return out;
}

TEST(ProcedureTableTest, CountsARecursiveStackOnceForInclusiveCycles) {
  const ProcedureTable t = ComputeProcedureTable(FromFolded(kRecursive));
  EXPECT_EQ(t.total, 80u);
  EXPECT_EQ(SelfAndInclusive(t),
            (std::map<std::string, std::pair<uint64_t, uint64_t>>{
                {"$exec::$main", {10, 80}}, {"fib", {50, 55}}, {"leaf", {20, 20}}}));
  uint64_t self_sum = 0;
  for (const ProcedureCycles& r : t.rows) {
    self_sum += r.self;
    EXPECT_LE(r.inclusive, t.total) << r.name;
  }
  EXPECT_EQ(self_sum, t.total);
}

TEST(ProcedureTableTest, MutualRecursionCountsEachNameOncePerStack) {
  // a;b;a;b: a's inclusive is the whole stack once (7), b's too; self goes to the leaf only.
  const ProcedureTable t = ComputeProcedureTable(FromFolded("a;b;a;b 7\na 3\n"));
  EXPECT_EQ(SelfAndInclusive(t),
            (std::map<std::string, std::pair<uint64_t, uint64_t>>{{"a", {3, 10}}, {"b", {7, 7}}}));
}

TEST(ProcedureTableTest, SortsByTheChosenColumnAndRefusesCalls) {
  ProcedureTable t = ComputeProcedureTable(FromFolded(kRecursive));
  SortProcedures(TopOrder::kSelf, &t.rows);
  EXPECT_EQ(t.rows[0].name, "fib");
  EXPECT_EQ(t.rows[1].name, "leaf");
  SortProcedures(TopOrder::kInclusive, &t.rows);
  EXPECT_EQ(t.rows[0].name, "$exec::$main");
  EXPECT_EQ(t.rows[1].name, "fib");
  EXPECT_TRUE(ParseTopOrder("inclusive", "x").ok());
  const absl::StatusOr<TopOrder> calls = ParseTopOrder("calls", "x.folded");
  ASSERT_FALSE(calls.ok());
  EXPECT_TRUE(absl::StrContains(calls.status().message(), "x.folded has no call counts"));
  EXPECT_TRUE(absl::StrContains(calls.status().message(), "summary.json"));
  EXPECT_FALSE(ParseTopOrder("flat", "x").ok());
}

class TopCommandTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) /
            absl::StrCat("top_", testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                         getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  int Run(const std::string& args) {
    const std::string cmd = absl::StrCat("cd '", root_.string(), "' && ", FLAMEFLEET_CLI, " ", args,
                                         " >out.txt 2>err.txt");
    const int status = std::system(cmd.c_str());
    out_ = ReadFile(root_ / "out.txt");
    err_ = ReadFile(root_ / "err.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path root_;
  std::string out_, err_;
};

TEST_F(TopCommandTest, PrintsAPprofStyleTableOfAFoldedFile) {
  WriteFile(root_ / "rec.folded", kRecursive);
  ASSERT_EQ(Run("top rec.folded"), 0) << err_;
  const std::vector<std::string> lines = absl::StrSplit(out_, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << out_;
  EXPECT_EQ(lines[0], "Showing 3 of 3 procedures, 80 cycles total");
  // self, self%, sum%, inclusive, inclusive%, name; by self: fib, leaf, main.
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(lines[2], ' ', absl::SkipEmpty())),
            (std::vector<std::string>{"50", "62.50%", "62.50%", "55", "68.75%", "fib"}));
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(lines[3], ' ', absl::SkipEmpty())),
            (std::vector<std::string>{"20", "25.00%", "87.50%", "20", "25.00%", "leaf"}));
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(lines[4], ' ', absl::SkipEmpty())),
            (std::vector<std::string>{"10", "12.50%", "100.00%", "80", "100.00%", "$exec::$main"}));

  ASSERT_EQ(Run("top rec.folded --by inclusive --limit 2 --json"), 0) << err_;
  const nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["total"], 80);
  EXPECT_EQ(j["procedures"], 3);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["name"], "$exec::$main");
  EXPECT_EQ(j["rows"][0]["inclusive"], 80);
  EXPECT_EQ(j["rows"][1]["name"], "fib");
  EXPECT_EQ(j["rows"][1]["self"], 50);
  EXPECT_EQ(j["rows"][1]["inclusive"], 55);
  EXPECT_DOUBLE_EQ(j["rows"][1]["cumulative_percent"].get<double>(), 75.0);  // 12.5 + 62.5
}

TEST_F(TopCommandTest, ReadsTheAggregateOrOneJobOfAFetchedDirectory) {
  // A fetched directory without aggregate.folded: the aggregate is the sum of its jobs.
  WriteFile(root_ / "out/jobs/a.masm.folded", "$exec::$main;fib;fib 40\n$exec::$main 2\n");
  WriteFile(root_ / "out/jobs/suite/b.masm.folded", "$exec::$main;leaf 8\n");
  ASSERT_EQ(Run("top out --json"), 0) << err_;
  nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["total"], 50);
  EXPECT_EQ(j["rows"][0]["name"], "fib");
  EXPECT_EQ(j["rows"][0]["self"], 40);
  EXPECT_EQ(j["rows"][0]["inclusive"], 40);
  ASSERT_EQ(Run("top out --job suite/b.masm --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["total"], 8);
  EXPECT_EQ(j["job"], "suite/b.masm");
  EXPECT_EQ(Run("top out --job nope.masm"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "no job \"nope.masm\"")) << err_;
}

TEST_F(TopCommandTest, ExplainsWhichInputsCarryCallCounts) {
  WriteFile(root_ / "rec.folded", kRecursive);
  EXPECT_EQ(Run("top rec.folded --by calls"), 2);
  EXPECT_TRUE(absl::StrContains(err_, "rec.folded has no call counts")) << err_;
  EXPECT_EQ(Run("top rec.folded --job x"), 2);
  EXPECT_TRUE(absl::StrContains(err_, "--job needs a fetched directory or batch:ID")) << err_;
  EXPECT_EQ(Run("top missing.folded"), 1);
}

}  // namespace
}  // namespace flamefleet::cli
