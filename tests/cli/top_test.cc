// `flamefleet top` (cli/top.h): per-procedure self and inclusive cycles with recursion counted
// once per stack, the table and its JSON, on a folded file and on a fetched directory, through the
// flamefleet binary; on job and batch summaries also calls, instructions, operations and phases,
// and `diff` with the phase gate on summaries. (batch:ID on a real fleet:
// tests/e2e/metrics_test.cc.)
#include "cli/top.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cli/summary_file.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runner/run_stats.h"
#include "runner/summary.h"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/test_files.h"
#include "vm/vm.h"

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

TEST(ProcedureTableTest, SortsByTheChosenColumnAndRefusesCallsWithoutASummary) {
  ProcedureTable t = ComputeProcedureTable(FromFolded(kRecursive));
  SortProcedures(TopOrder::kSelf, &t.rows);
  EXPECT_EQ(t.rows[0].name, "fib");
  EXPECT_EQ(t.rows[1].name, "leaf");
  SortProcedures(TopOrder::kInclusive, &t.rows);
  EXPECT_EQ(t.rows[0].name, "$exec::$main");
  EXPECT_EQ(t.rows[1].name, "fib");
  EXPECT_TRUE(ParseTopOrder("inclusive").ok());
  ASSERT_TRUE(ParseTopOrder("calls").ok());
  EXPECT_EQ(*ParseTopOrder("calls"), TopOrder::kCalls);
  EXPECT_FALSE(ParseTopOrder("flat").ok());
  EXPECT_TRUE(CheckTopOrder(TopOrder::kSelf, t, "x.folded").ok());
  const absl::Status calls = CheckTopOrder(TopOrder::kCalls, t, "x.folded");
  ASSERT_FALSE(calls.ok());
  EXPECT_TRUE(absl::StrContains(calls.message(), "x.folded has no call counts"));
  EXPECT_TRUE(absl::StrContains(calls.message(), "summary.json"));
}

// A job summary (only the fields `top` reads). By hand: self 20 + 50 + 30 = 100 = cycles;
// instructions and operations add up to 100; phase a runs twice (10 and 20), b once and is open.
constexpr char kJobSummary[] = R"js({
  "schema": "flamefleet.summary/1", "job": "fib", "status": "ok", "error": null, "cycles": 100,
  "procedures": [
    {"name": "$exec::$main", "calls": 1, "self": 20, "inclusive": 100},
    {"name": "$exec::fib", "calls": 7, "self": 50, "inclusive": 60},
    {"name": "$exec::leaf", "calls": 12, "self": 30, "inclusive": 30}],
  "instructions": [
    {"name": "push", "count": 40, "cycles": 40}, {"name": "add", "count": 30, "cycles": 30},
    {"name": "(END)",
               "count" : 20, "cycles" : 20
}, {"name": "(SPAN)", "count": 10, "cycles": 10}],
  "operations": [
    {"name": "PUSH", "count": 40, "cycles": 40}, {"name": "ADD", "count": 30, "cycles": 30},
    {"name": "END", "count": 20, "cycles": 20}, {"name": "SPAN", "count": 10, "cycles": 10}],
  "phases": [
    {"name": "a", "count": 2, "total": 30, "min": 10, "max": 20, "open": false},
    {"name": "b", "count": 1, "total": 50, "min": 50, "max": 50, "open": true}]
})js";

// A batch summary: job a.masm is kJobSummary, suite/b.masm (50 cycles) has phase a once (20);
// c.masm failed without a summary. Totals summed by hand.
nlohmann::json BatchSummary() {
  nlohmann::json a = nlohmann::json::parse(kJobSummary);
  a["job"] = "a.masm";
  nlohmann::json b = nlohmann::json::parse(kJobSummary);
  b["job"] = "suite/b.masm";
  b["cycles"] = 50;
  b["procedures"] = nlohmann::json::parse(R"([
    {"name": "$exec::$main", "calls": 1, "self": 10, "inclusive": 50},
    {"name": "$exec::fib", "calls": 3, "self": 40, "inclusive": 40}])");
  b["instructions"] = nlohmann::json::parse(R"([{"name": "push", "count": 50, "cycles": 50}])");
  b["operations"] = nlohmann::json::parse(R"([{"name": "PUSH", "count": 50, "cycles": 50}])");
  b["phases"] = nlohmann::json::parse(
      R"([{"name": "a", "count": 1, "total": 20, "min": 20, "max": 20, "open": false}])");
  nlohmann::json batch = nlohmann::json::parse(R"js({
    "schema": "flamefleet.batch-summary/1", "batch": "7", "state": "failed", "cycles": 150,
    "without_summary": [{"job": "c.masm", "state": "failed", "error": "assertion failed"}],
    "procedures": [
      {"name": "$exec::$main", "calls": 2, "self": 30, "inclusive": 150},
      {"name": "$exec::fib", "calls": 10, "self": 90, "inclusive": 100},
      {"name": "$exec::leaf", "calls": 12, "self": 30, "inclusive": 30}],
    "instructions": [
      {"name": "push", "count": 90, "cycles": 90}, {"name": "add", "count": 30, "cycles": 30},
      {"name": "(END)", "count": 20, "cycles": 20
}, {"name": "(SPAN)", "count": 10, "cycles": 10}],
    "operations": [{"name": "PUSH", "count": 90, "cycles": 90}, {"name": "ADD", "count": 30,
      "cycles": 30}, {"name": "END", "count": 20, "cycles": 20},
      {"name": "SPAN", "count": 10, "cycles": 10}],
    "phases": [
      {"name": "a", "jobs": 2, "count": 3, "total": 50, "min": 10, "max": 20, "open": false},
      {"name": "b", "jobs": 1, "count": 1, "total": 50, "min": 50, "max": 50, "open": true}]
})js");
  batch["jobs"] = {a, b};
  return batch;
}

TEST(TopInputTest, BatchIdTakesTheSummaryFromItsSourceAndFallsBackToTheProfile) {
  int profiles = 0;
  TopSources sources;
  sources.batch_profile = [&](const std::string& id,
                              const std::string& job) -> absl::StatusOr<profile::Profile> {
    ++profiles;
    EXPECT_EQ(id, "7");
    EXPECT_EQ(job, "");
    return FromFolded(kRecursive);
  };
  // No summary source (today's BatchClient): the profile.
  absl::StatusOr<TopInput> in = LoadTopInput("batch:7", "", sources);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_FALSE(in->tables.has_value());
  EXPECT_EQ(in->profile.total(), 80u);
  // A source with the batch's summary.json: its tables, no profile fetched.
  sources.batch_summary = [](const std::string& id) -> absl::StatusOr<std::string> {
    if (id == "7") return BatchSummary().dump();
    return absl::NotFoundError("no summary for this batch");
  };
  in = LoadTopInput("batch:7", "", sources);
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_TRUE(in->tables.has_value());
  EXPECT_EQ(in->tables->cycles, 150u);
  EXPECT_EQ(in->summary->kind, Summary::Kind::kBatch);
  EXPECT_EQ(profiles, 1);
  in = LoadTopInput("batch:7", "suite/b.masm", sources);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->tables->cycles, 50u);
  // The source says there is none: the profile again.
  sources.batch_summary = [](const std::string&) -> absl::StatusOr<std::string> {
    return absl::NotFoundError("none");
  };
  in = LoadTopInput("batch:7", "", sources);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_FALSE(in->tables.has_value());
  EXPECT_EQ(profiles, 2);
  // A broken summary is an error naming the batch, not a silent fallback.
  sources.batch_summary = [](const std::string&) -> absl::StatusOr<std::string> {
    return std::string("{\"schema\": \"flamefleet.batch-summary/1\"}");
  };
  in = LoadTopInput("batch:7", "", sources);
  ASSERT_FALSE(in.ok());
  EXPECT_TRUE(absl::StrContains(in.status().message(), "batch:7 summary: batch: missing"))
      << in.status();
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
  EXPECT_TRUE(absl::StrContains(err_, "--job needs a fetched directory")) << err_;
  EXPECT_EQ(Run("top missing.folded"), 1);
  for (const char* mode : {"--phases", "--by-instruction", "--by-operation"}) {
    EXPECT_EQ(Run(absl::StrCat("top rec.folded ", mode)), 2) << mode;
    EXPECT_TRUE(absl::StrContains(err_, absl::StrCat(mode, ": rec.folded has no ")))
        << mode << ": " << err_;
  }
}

TEST_F(TopCommandTest, ShowsAJobSummaryInEachMode) {
  WriteFile(root_ / "s.json", kJobSummary);
  ASSERT_EQ(Run("top s.json"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 3 of 3 procedures, 100 cycles total\n"
            "          self   self%    sum%      inclusive   incl%        calls  procedure\n"
            "            50  50.00%  50.00%             60  60.00%            7  $exec::fib\n"
            "            30  30.00%  80.00%             30  30.00%           12  $exec::leaf\n"
            "            20  20.00% 100.00%            100 100.00%            1  $exec::$main\n");
  EXPECT_EQ(err_, "");
  ASSERT_EQ(Run("top s.json --by calls --limit 2"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 2 of 3 procedures, 100 cycles total\n"
            "          self   self%    sum%      inclusive   incl%        calls  procedure\n"
            "            30  30.00%  30.00%             30  30.00%           12  $exec::leaf\n"
            "            50  50.00%  80.00%             60  60.00%            7  $exec::fib\n");
  ASSERT_EQ(Run("top s.json --by-instruction"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 4 of 4 instructions, 100 cycles total\n"
            "        cycles cycles%    sum%          count  instruction\n"
            "            40  40.00%  40.00%             40  push\n"
            "            30  30.00%  70.00%             30  add\n"
            "            20  20.00%  90.00%             20  (END)\n"
            "            10  10.00% 100.00%             10  (SPAN)\n");
  ASSERT_EQ(Run("top s.json --by-operation --limit 1"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 1 of 4 operations, 100 cycles total\n"
            "        cycles cycles%    sum%          count  operation\n"
            "            40  40.00%  40.00%             40  PUSH\n");
  ASSERT_EQ(Run("top s.json --phases"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 2 of 2 phases, 100 cycles total\n"
            "     count          total  total%          min          max           mean  phase\n"
            "         1             50  50.00%           50           50           50.0  b [open]\n"
            "         2             30  30.00%           10           20           15.0  a\n"
            "[open]: a span was still open when the program ended; it is closed at the last "
            "cycle\n");

  ASSERT_EQ(Run("top s.json --by calls --json"), 0) << err_;
  nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["table"], "procedures");
  EXPECT_EQ(j["summary"]["kind"], "job");
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][0]["name"], "$exec::leaf");
  EXPECT_EQ(j["rows"][0]["calls"], 12);
  EXPECT_EQ(j["rows"][2]["calls"], 1);
  ASSERT_EQ(Run("top s.json --by-instruction --json --limit 2"), 0) << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["table"], "instructions");
  EXPECT_EQ(j["instructions"], 4);
  EXPECT_EQ(j["shown"], 2);
  EXPECT_EQ(j["rows"][1]["name"], "add");
  EXPECT_EQ(j["rows"][1]["count"], 30);
  EXPECT_DOUBLE_EQ(j["rows"][1]["cumulative_percent"].get<double>(), 70.0);
  ASSERT_EQ(Run("top s.json --by-operation --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["operations"], 4);
  EXPECT_EQ(j["rows"][3]["name"], "SPAN");
  ASSERT_EQ(Run("top s.json --phases --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["table"], "phases");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][1]["name"], "a");
  EXPECT_EQ(j["rows"][1]["count"], 2);
  EXPECT_EQ(j["rows"][1]["min"], 10);
  EXPECT_EQ(j["rows"][1]["max"], 20);
  EXPECT_DOUBLE_EQ(j["rows"][1]["mean"].get<double>(), 15.0);
  EXPECT_EQ(j["rows"][0]["open"], true);
  EXPECT_FALSE(j["rows"][0].contains("jobs"));

  // --by belongs to the procedure table; the modes exclude each other.
  EXPECT_EQ(Run("top s.json --phases --by calls"), 2);
  EXPECT_TRUE(absl::StrContains(err_, "--by sorts the procedure table")) << err_;
  EXPECT_EQ(Run("top s.json --phases --by-instruction"), 2);
  WriteFile(root_ / "bad.json", R"({"schema": "flamefleet.summary/1", "job": 3})");
  EXPECT_EQ(Run("top bad.json"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "bad.json: job: expected a string, got 3")) << err_;
}

TEST_F(TopCommandTest, ShowsABatchSummaryOfAFetchedDirectory) {
  // The directory's summary.json is used; its folded files (cycles only) are not read.
  WriteFile(root_ / "out/summary.json", BatchSummary().dump(1));
  WriteFile(root_ / "out/jobs/a.masm.folded", "$exec::$main 999\n");
  ASSERT_EQ(Run("top out"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 3 of 3 procedures, 150 cycles total\n"
            "          self   self%    sum%      inclusive   incl%        calls  procedure\n"
            "            90  60.00%  60.00%            100  66.67%           10  $exec::fib\n"
            "            30  20.00%  80.00%            150 100.00%            2  $exec::$main\n"
            "            30  20.00% 100.00%             30  20.00%           12  $exec::leaf\n");
  EXPECT_EQ(err_,
            "flamefleet: note: 1 job(s) of the batch have no summary and are not counted: c.masm "
            "(failed)\n");
  ASSERT_EQ(Run("top out --phases"), 0) << err_;
  EXPECT_EQ(
      out_,
      "Showing 2 of 2 phases, 150 cycles total\n"
      "     count          total  total%          min          max           mean     jobs  "
      "phase\n"
      "         3             50  33.33%           10           20           16.7        2  a\n"
      "         1             50  33.33%           50           50           50.0        1  "
      "b [open]\n"
      "[open]: a span was still open when the program ended; it is closed at the last "
      "cycle\n");
  ASSERT_EQ(Run("top out --by-instruction --limit 1"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 1 of 4 instructions, 150 cycles total\n"
            "        cycles cycles%    sum%          count  instruction\n"
            "            90  60.00%  60.00%             90  push\n");
  ASSERT_EQ(Run("top out --by-operation --json"), 0) << err_;
  nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["total"], 150);
  EXPECT_EQ(j["rows"][0]["name"], "PUSH");
  EXPECT_EQ(j["rows"][0]["cycles"], 90);
  ASSERT_EQ(Run("top out --phases --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["rows"][0]["name"], "a");
  EXPECT_EQ(j["rows"][0]["jobs"], 2);
  EXPECT_EQ(j["summary"]["kind"], "batch");
  EXPECT_EQ(j["summary"]["batch"], "7");
  EXPECT_EQ(j["summary"]["without_summary"][0]["job"], "c.masm");
  EXPECT_EQ(j["summary"]["without_summary"][0]["error"], "assertion failed");
  // --by calls on the batch: leaf (12) before fib (10) before main (2).
  ASSERT_EQ(Run("top out --by calls --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["rows"][0]["name"], "$exec::leaf");
  EXPECT_EQ(j["rows"][1]["name"], "$exec::fib");
  EXPECT_EQ(j["rows"][2]["name"], "$exec::$main");
  // One job of the batch, from its summary; a job without one says why.
  ASSERT_EQ(Run("top out --job suite/b.masm --by calls"), 0) << err_;
  EXPECT_EQ(out_,
            "Showing 2 of 2 procedures, 50 cycles total\n"
            "          self   self%    sum%      inclusive   incl%        calls  procedure\n"
            "            40  80.00%  80.00%             40  80.00%            3  $exec::fib\n"
            "            10  20.00% 100.00%             50 100.00%            1  $exec::$main\n");
  EXPECT_EQ(Run("top out --job c.masm"), 1);
  EXPECT_TRUE(
      absl::StrContains(err_, "job \"c.masm\" has no summary (state failed: assertion failed)"))
      << err_;
  // The same file given directly.
  WriteFile(root_ / "batch.json", BatchSummary().dump());
  ASSERT_EQ(Run("top batch.json --phases --json"), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(out_)["rows"][0]["total"], 50);
}

// Writes a fetched directory holding only a batch summary in which job a.masm's phase "a" has
// `a_total` cycles and job suite/b.masm's 20; phase `extra` (if not empty) is in a.masm only.
void WriteBatchDir(const fs::path& dir, uint64_t a_total, const std::string& extra) {
  nlohmann::json batch = BatchSummary();
  nlohmann::json& phases = batch["jobs"][0]["phases"];
  phases = nlohmann::json::array();
  phases.push_back({{"name", "a"},
                    {"count", 1},
                    {"total", a_total},
                    {"min", a_total},
                    {"max", a_total},
                    {"open", false}});
  batch["phases"] = nlohmann::json::array();
  batch["phases"].push_back({{"name", "a"},
                             {"jobs", 2},
                             {"count", 2},
                             {"total", a_total + 20},
                             {"min", std::min<uint64_t>(a_total, 20)},
                             {"max", std::max<uint64_t>(a_total, 20)},
                             {"open", false}});
  if (!extra.empty()) {
    const nlohmann::json row = {{"name", extra}, {"count", 1}, {"total", 5},
                                {"min", 5},      {"max", 5},   {"open", false}};
    phases.push_back(row);
    batch["phases"].push_back(row);
    batch["phases"].back()["jobs"] = 1;
  }
  WriteFile(dir / "summary.json", batch.dump());
}

TEST_F(TopCommandTest, DiffGatesOnAPhaseOfTwoBatchSummaries) {
  // Phase a: a.masm 30 -> 45 (+50%), suite/b.masm 20 -> 20; the batch total 50 -> 65 (+30%).
  WriteBatchDir(root_ / "before", 30, "setup");
  WriteBatchDir(root_ / "after", 45, "teardown");
  EXPECT_EQ(Run("diff before after --fail-above phase:a=49"), 3) << err_;
  EXPECT_TRUE(absl::StrContains(
      err_, "phase:a (total cycles) grew by more than 49%: a in a.masm (+50.00%)"))
      << err_;
  EXPECT_EQ(Run("diff before after --fail-above phase:a=29"), 3) << err_;
  EXPECT_TRUE(absl::StrContains(err_, ": a (+30.00%) a in a.masm (+50.00%)")) << err_;
  // The tables (no graph: the sides have no stacks) on stdout.
  EXPECT_TRUE(absl::StrContains(out_, "phases (total cycles over the jobs")) << out_;
  EXPECT_TRUE(absl::StrContains(out_, "added phases (only in AFTER")) << out_;
  EXPECT_EQ(Run("diff before after --fail-above phase:a=50"), 0) << err_;
  // A phase on one side only is reported, and passes with a note; on neither side: an error.
  EXPECT_EQ(Run("diff before after --fail-above phase:teardown=0 --fail-above phase:setup=0"), 0)
      << err_;
  EXPECT_TRUE(absl::StrContains(err_, "phase:teardown is only in AFTER (added): not gated"))
      << err_;
  EXPECT_TRUE(absl::StrContains(err_, "phase:setup is only in BEFORE (removed): not gated"))
      << err_;
  EXPECT_EQ(Run("diff before after --fail-above phase:tear=0"), 1);
  EXPECT_TRUE(
      absl::StrContains(err_, "no phase \"tear\" in either summary (phases: a, setup, teardown)"))
      << err_;
  // proc: and cycles gates keep working on summaries.
  EXPECT_EQ(Run("diff before after --fail-above 'proc:$exec::fib=0' --fail-above 0"), 0) << err_;
  // Summary files need summaries on the other side, and have no graph to write.
  WriteFile(root_ / "x.folded", "main 3\n");
  EXPECT_EQ(Run("diff before x.folded"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "x.folded has no summary")) << err_;
  EXPECT_EQ(Run("diff before after -o d.svg"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "no differential graph")) << err_;
  EXPECT_FALSE(fs::exists(root_ / "d.svg"));
}

TEST_F(TopCommandTest, DiffJsonReportsPhaseDeltas) {
  WriteBatchDir(root_ / "before", 30, "setup");
  WriteBatchDir(root_ / "after", 45, "teardown");
  ASSERT_EQ(Run("diff before/summary.json after --json --fail-above phase:a=40 --fail-above "
                "phase:setup=1"),
            3)
      << err_;
  const nlohmann::json j = nlohmann::json::parse(out_);
  ASSERT_EQ(j["phases"].size(), 1u) << j.dump();
  const nlohmann::json& a = j["phases"][0];
  EXPECT_EQ(a["name"], "a");
  EXPECT_EQ(a["before"], 50);
  EXPECT_EQ(a["after"], 65);
  EXPECT_EQ(a["delta"], 15);
  EXPECT_DOUBLE_EQ(a["percent"].get<double>(), 30.0);
  ASSERT_EQ(a["jobs"].size(), 2u);
  EXPECT_EQ(a["jobs"][0]["name"], "a.masm");
  EXPECT_EQ(a["jobs"][0]["delta"], 15);
  EXPECT_EQ(a["jobs"][1]["name"], "suite/b.masm");
  EXPECT_EQ(a["jobs"][1]["delta"], 0);
  ASSERT_EQ(j["phases_added"].size(), 1u);
  EXPECT_EQ(j["phases_added"][0]["name"], "teardown");
  EXPECT_TRUE(j["phases_added"][0]["percent"].is_null());
  ASSERT_EQ(j["phases_removed"].size(), 1u);
  EXPECT_EQ(j["phases_removed"][0]["name"], "setup");
  EXPECT_EQ(j["phases_removed"][0]["after"], 0);
  ASSERT_EQ(j["gates"].size(), 2u);
  EXPECT_EQ(j["gates"][0]["metric"], "phase:a");
  EXPECT_EQ(j["gates"][0]["failed"], true);
  ASSERT_EQ(j["gates"][0]["over"].size(), 1u);
  EXPECT_EQ(j["gates"][0]["over"][0]["name"], "a in a.masm");
  EXPECT_EQ(j["gates"][1]["failed"], false);
  EXPECT_EQ(j["gates"][1]["note"], "phase:setup is only in BEFORE (removed): not gated");
  // Folded sides have no phases: the phase gate says which side lacks a summary.
  WriteFile(root_ / "x.folded", "main 3\n");
  EXPECT_EQ(Run("diff x.folded x.folded --json --fail-above phase:a=1"), 1);
  EXPECT_TRUE(absl::StrContains(err_,
                                "phase gates need a summary on both sides; x.folded has no "
                                "summary"))
      << err_;
  ASSERT_EQ(Run("diff x.folded x.folded -o d.svg --json"), 0) << err_;
  EXPECT_TRUE(nlohmann::json::parse(out_)["phases"].empty());
}

// Through the real binary: profile --summary with a --phase pair on a v0.25 program, then top.
TEST_F(TopCommandTest, ProfileSummaryThenTopByCallsAndPhases) {
  // leaf is called 4 times (3 from main, with other instructions between the calls, since two
  // inlined calls next to each other count as one: docs/summary.md), mid once; phase a..b spans
  // the three calls from main and the instructions between them.
  WriteFile(root_ / "prog.masm", R"(proc leaf
  push.1 add
end

proc mid
  exec.leaf
end

begin
  push.0
  emit.event("a")
  exec.leaf
  push.2 drop
  exec.leaf
  push.3 drop
  exec.leaf
  emit.event("b")
  exec.mid
  drop
end
)");
  ASSERT_EQ(Run("profile prog.masm -o p.folded --summary s.json --phase a=b"), 0) << err_;
  ASSERT_EQ(Run("top s.json --by calls --json"), 0) << err_;
  nlohmann::json j = nlohmann::json::parse(out_);
  std::map<std::string, uint64_t> calls;
  nlohmann::json leaf_row;
  for (const auto& row : j["rows"]) {
    calls[row["name"].get<std::string>()] = row["calls"];
    if (row["name"] == "$exec::leaf") leaf_row = row;
  }
  EXPECT_EQ(calls["$exec::leaf"], 4u) << out_;
  EXPECT_EQ(calls["$exec::mid"], 1u) << out_;
  EXPECT_EQ(j["rows"][0]["name"], "$exec::leaf");  // the most calls first
  ASSERT_EQ(Run("top s.json --by calls"), 0) << err_;
  const std::vector<std::string> lines = absl::StrSplit(out_, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 3u);
  EXPECT_TRUE(absl::StrContains(lines[1], "calls")) << out_;
  EXPECT_TRUE(absl::EndsWith(lines[2], "$exec::leaf")) << out_;
  ASSERT_EQ(Run("top s.json --phases --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  ASSERT_EQ(j["rows"].size(), 1u) << out_;
  EXPECT_EQ(j["rows"][0]["name"], "a..b");
  EXPECT_EQ(j["rows"][0]["count"], 1);
  EXPECT_EQ(j["rows"][0]["open"], false);
  const uint64_t span = j["rows"][0]["total"].get<uint64_t>();
  // At least the three calls' cycles (leaf's self cycles are the same on each call) and the four
  // instructions between them, and less than the whole run.
  const uint64_t leaf_self = leaf_row["self"].get<uint64_t>();
  EXPECT_GE(span, 3 * leaf_self / 4 + 4) << out_;
  EXPECT_LT(span, j["total"].get<uint64_t>());
  ASSERT_EQ(Run("top s.json --phases"), 0) << err_;
  EXPECT_TRUE(absl::StrContains(out_, "Showing 1 of 1 phases")) << out_;
  EXPECT_TRUE(absl::EndsWith(out_, absl::StrCat(" a..b\n"))) << out_;
  EXPECT_TRUE(absl::StrContains(out_, absl::StrCat(" ", span, " "))) << out_;
}

// #18: the trace shape of a v0.25 run through profile --summary / --weight, top --by KIND and
// diff --fail-above padded:0.
TEST_F(TopCommandTest, TraceShapeThroughProfileTopAndDiff) {
  // `hash` does one hperm per call (its state repeats: a dedup hit on the second call); `mix`
  // does two u32xor (16 bitwise rows).
  const std::string program = R"(proc hash
  padw padw padw hperm dropw dropw dropw
end

proc mix
  push.5 push.3 u32xor push.9 u32xor drop
end

begin
  exec.hash exec.mix push.1 drop exec.hash
end
)";
  WriteFile(root_ / "prog.masm", program);
  ASSERT_EQ(Run("profile prog.masm -o p.folded --summary s.json"), 0) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "Trace shape: core ")) << err_;
  ASSERT_EQ(Run("top s.json --by bitwise --json"), 0) << err_;
  nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["unit"], "bitwise rows");
  EXPECT_EQ(j["total"], 16);
  EXPECT_EQ(j["rows"][0]["name"], "$exec::mix") << out_;
  EXPECT_EQ(j["rows"][0]["self"], 16);
  ASSERT_EQ(Run("top s.json --by chiplets"), 0) << err_;
  EXPECT_TRUE(absl::StrContains(out_, "chiplets rows total")) << out_;
  EXPECT_TRUE(absl::StrContains(out_, "[trace overhead]")) << out_;
  // Folded stacks carry no trace shape.
  EXPECT_EQ(Run("top p.folded --by hasher"), 2);
  EXPECT_TRUE(absl::StrContains(err_, "trace shape")) << err_;

  // The flamegraph weighted by bitwise rows: all 16 in mix.
  ASSERT_EQ(Run("profile prog.masm --weight bitwise -o w.folded"), 0) << err_;
  EXPECT_EQ(ReadFile(root_ / "w.folded"), "$exec::$main;$exec::mix 16\n");
  EXPECT_EQ(Run("profile prog.masm --weight cycles -o w.folded"), 2);

  // A version that hashes in a loop: its padded length doubles, padded:0 trips, cycles=1000 not.
  WriteFile(root_ / "slow.masm",
            absl::StrReplaceAll(
                program, {{"push.1 drop exec.hash", "repeat.40 exec.hash push.1 drop end"}}));
  ASSERT_EQ(Run("profile slow.masm -o q.folded --summary t.json"), 0) << err_;
  ASSERT_EQ(Run("diff s.json t.json --fail-above cycles=100000"), 0) << err_;
  EXPECT_TRUE(absl::StrContains(out_, "trace shape")) << out_;
  EXPECT_EQ(Run("diff s.json t.json --fail-above padded:0"), 3) << out_;
  EXPECT_TRUE(absl::StrContains(err_, "padded trace length grew")) << err_;
  EXPECT_EQ(Run("diff s.json s.json --fail-above padded:0"), 0) << err_;
  ASSERT_EQ(Run("diff s.json t.json --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  ASSERT_TRUE(j.contains("jobs_padded")) << out_;
  EXPECT_GT(j["jobs_padded"][0]["after"].get<uint64_t>(),
            j["jobs_padded"][0]["before"].get<uint64_t>());
}

// A batch summary with the trace shape of v0.25 jobs: runner::BatchSummaryJson of a job that
// hashes `hashes` times (a.masm) and one that does two u32xor (b.masm), as `fetch` writes it.
std::string TracedBatchSummary(int hashes) {
  runner::BatchSummaryInput batch;
  batch.batch_id = "9";
  batch.state = "succeeded";
  const std::vector<std::pair<std::string, std::string>> jobs = {
      {"a.masm", absl::StrCat("proc hash\n  padw padw padw hperm dropw dropw dropw\nend\n",
                              "begin\n  repeat.", hashes, " exec.hash push.1 drop end\nend\n")},
      {"b.masm", "proc mix\n  push.5 push.3 u32xor push.9 u32xor drop\nend\nbegin exec.mix end\n"}};
  for (const auto& [name, source] : jobs) {
    vm::AssemblerOptions options;
    options.dialect = vm::Dialect::kV0_25;
    absl::StatusOr<vm::Program> program = vm::Assembler(options).AssembleSource(name, source);
    EXPECT_TRUE(program.ok()) << program.status();
    if (!program.ok()) return "";
    const vm::ProgramInputs inputs;
    runner::StatsOptions stats;
    stats.trace_shape = true;
    absl::StatusOr<runner::StatsRun> run =
        runner::ProfileProgramWithStats(*program, inputs, {}, stats);
    EXPECT_TRUE(run.ok()) << run.status();
    if (!run.ok()) return "";
    batch.jobs.push_back(runner::MakeJobSummary(
        {.job = name, .program = &*program, .inputs = &inputs, .run = &*run}));
  }
  return runner::BatchSummaryJson(batch);
}

// #18: a batch's trace_totals through top --by KIND, and diff --fail-above padded:0 of two
// fetched batch directories.
TEST_F(TopCommandTest, BatchTraceTotalsThroughTopAndThePaddedGate) {
  const std::string before = TracedBatchSummary(1);
  WriteFile(root_ / "before/summary.json", before);
  WriteFile(root_ / "after/summary.json", TracedBatchSummary(40));
  const nlohmann::json doc = nlohmann::json::parse(before);
  ASSERT_TRUE(doc.contains("trace_totals")) << before;

  ASSERT_EQ(Run("top before --by hasher --json"), 0) << err_;
  nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["unit"], "hasher rows");
  EXPECT_EQ(j["total"], doc["trace_totals"]["rows"]["hasher"]);
  uint64_t self = 0;
  bool overhead = false;
  for (const nlohmann::json& row : j["rows"]) {
    self += row["self"].get<uint64_t>();
    overhead = overhead || row["name"] == "[trace overhead]";
  }
  EXPECT_EQ(self, j["total"].get<uint64_t>()) << out_;  // the overhead row included
  EXPECT_TRUE(overhead) << out_;
  ASSERT_EQ(Run("top before --by bitwise --json"), 0) << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["total"], 16);
  EXPECT_EQ(j["rows"][0]["name"], "$exec::mix") << out_;

  // a.masm's padded length grows with 40 hashes: the gate trips, naming it.
  EXPECT_EQ(Run("diff before after --fail-above padded:0"), 3) << out_;
  EXPECT_TRUE(absl::StrContains(err_, "padded trace length grew")) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "a.masm")) << err_;
  EXPECT_EQ(Run("diff before before --fail-above padded:0"), 0) << err_;
}

}  // namespace
}  // namespace flamefleet::cli
