// The summary reader (cli/summary_file.h): a job summary read as a batch of one, a batch
// summary with its jobs and the jobs without a summary, and its refusals, each naming the file
// and the JSON path of the bad field.
#include "cli/summary_file.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_files.h"

namespace flamefleet::cli {
namespace {

using ::testing::HasSubstr;
using testutil::StatusIs;

// A job summary as `profile --summary` writes it (digests and shares included, although the
// reader does not need them).
nlohmann::json JobJson() {
  return nlohmann::json::parse(R"js({
    "schema": "flamefleet.summary/1", "job": "fib",
    "program_digest": "0x0000000000000000000000000000000000000000000000000000000000000000",
    "dialect": "v0.25",
    "inputs_digest": "blake3:0000000000000000000000000000000000000000000000000000000000000000",
    "status": "ok", "error": null, "cycles": 100, "final_stack": ["5"],
    "mast": {"nodes": 3, "basic_block_ops": 9},
    "procedures": [
      {"name": "$exec::$main", "calls": 1, "self": 20, "inclusive": 100, "self_share": 0.2,
       "inclusive_share": 1.0},
      {"name": "$exec::fib", "calls": 7, "self": 80, "inclusive": 80, "self_share": 0.8,
       "inclusive_share": 0.8}],
    "instructions": [{"name": "add", "count": 60, "cycles": 60, "share": 0.6},
                     {"name": "(SPAN)", "count": 40, "cycles": 40, "share": 0.4}],
    "operations": [{"name": "ADD", "count": 60, "cycles": 60, "share": 0.6},
                   {"name": "SPAN", "count": 40, "cycles": 40, "share": 0.4}],
    "phases": [{"name": "a", "count": 2, "total": 30, "min": 10, "max": 20, "open": false}]
})js");
}

nlohmann::json BatchJson() {
  nlohmann::json second = JobJson();
  second["job"] = "suite/fib2";
  second["status"] = "error";
  second["error"] = {{"code", "RESOURCE_EXHAUSTED"}, {"message", "cycle limit"}};
  return {
      {"schema", "flamefleet.batch-summary/1"},
      {"batch", "42"},
      {"state", "failed"},
      {"cycles", 200},
      {"jobs", {JobJson(), second}},
      {"without_summary", {{{"job", "broken"}, {"state", "failed"}, {"error", "parse"}}}},
      {"procedures", {{{"name", "$exec::fib"}, {"calls", 14}, {"self", 160}, {"inclusive", 160}}}},
      {"instructions", {{{"name", "add"}, {"count", 120}, {"cycles", 120}, {"share", 0.6}}}},
      {"operations", nlohmann::json::array()},
      {"phases",
       {{{"name", "a"},
         {"jobs", 2},
         {"count", 4},
         {"total", 60},
         {"min", 10},
         {"max", 20},
         {"open", true}}}}};
}

absl::StatusOr<Summary> Parse(const nlohmann::json& j) { return ParseSummary(j.dump(), "s.json"); }

TEST(SummaryFileTest, ReadsAJobSummaryAsABatchOfOne) {
  ASSERT_OK_AND_ASSIGN(Summary s, Parse(JobJson()));
  EXPECT_EQ(s.kind, Summary::Kind::kJob);
  EXPECT_EQ(s.source, "s.json");
  EXPECT_EQ(s.state, "ok");
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0].name, "fib");
  EXPECT_EQ(s.totals.cycles, 100u);
  ASSERT_EQ(s.totals.procedures.size(), 2u);
  EXPECT_EQ(s.totals.procedures[1].name, "$exec::fib");
  EXPECT_EQ(s.totals.procedures[1].calls, 7u);
  EXPECT_EQ(s.totals.procedures[1].self, 80u);
  EXPECT_EQ(s.totals.instructions[0].name, "add");
  EXPECT_EQ(s.totals.operations[1].count, 40u);
  ASSERT_EQ(s.totals.phases.size(), 1u);
  EXPECT_EQ(s.totals.phases[0].jobs, 1u);
  EXPECT_EQ(s.totals.phases[0].max, 20u);
  EXPECT_EQ(s.FindJob("fib"), &s.jobs[0]);
  EXPECT_EQ(s.FindJob("nope"), nullptr);
}

TEST(SummaryFileTest, ReadsABatchSummaryWithItsJobs) {
  ASSERT_OK_AND_ASSIGN(Summary s, Parse(BatchJson()));
  EXPECT_EQ(s.kind, Summary::Kind::kBatch);
  EXPECT_EQ(s.batch, "42");
  EXPECT_EQ(s.state, "failed");
  EXPECT_EQ(s.totals.cycles, 200u);
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.jobs[1].name, "suite/fib2");
  EXPECT_EQ(s.jobs[1].status, "error");
  EXPECT_EQ(s.jobs[1].error, "cycle limit");
  ASSERT_EQ(s.without_summary.size(), 1u);
  EXPECT_EQ(s.without_summary[0].name, "broken");
  EXPECT_EQ(s.without_summary[0].error, "parse");
  EXPECT_EQ(s.totals.phases[0].jobs, 2u);
  EXPECT_TRUE(s.totals.phases[0].open);
}

TEST(SummaryFileTest, RefusesWhatIsNotASummaryNamingTheField) {
  auto refused = [](const nlohmann::json& j) { return Parse(j).status(); };
  auto invalid = [](const std::string& text) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(text));
  };
  nlohmann::json j = JobJson();
  j["schema"] = "flamefleet.summary/2";
  EXPECT_THAT(refused(j), invalid("s.json: schema: expected \"flamefleet.summary/1\" or "
                                  "\"flamefleet.batch-summary/1\", got \"flamefleet.summary/2\""));
  j = JobJson();
  j["procedures"][1]["calls"] = -3;
  EXPECT_THAT(refused(j),
              invalid("s.json: procedures[1].calls: expected a non-negative integer, got -3"));
  j = JobJson();
  j["procedures"][1]["calls"] = 2.5;
  EXPECT_THAT(refused(j), invalid("procedures[1].calls: expected a non-negative integer, got 2.5"));
  j = JobJson();
  j["procedures"][0]["self"] = "20";
  EXPECT_THAT(refused(j), invalid("procedures[0].self: expected a non-negative integer, got a "
                                  "string"));
  j = JobJson();
  j["phases"][0].erase("open");
  EXPECT_THAT(refused(j), invalid("s.json: phases[0].open: missing (expected true or false)"));
  j = JobJson();
  j.erase("cycles");
  EXPECT_THAT(refused(j), invalid("s.json: cycles: missing"));
  j = JobJson();
  j["instructions"] = {{"name", "add"}};
  EXPECT_THAT(refused(j), invalid("instructions: expected an array, got an object"));
  j = JobJson();
  j["status"] = "fine";
  EXPECT_THAT(refused(j), invalid("status: expected \"ok\" or \"error\""));
  j = JobJson();
  j["procedures"][1]["name"] = "$exec::$main";
  EXPECT_THAT(refused(j), invalid("procedures[1].name: duplicate name \"$exec::$main\""));
  j = JobJson();
  j["phases"][0]["min"] = 25;
  EXPECT_THAT(refused(j), invalid("phases[0].min: 25 exceeds max 20"));
  j = JobJson();
  j["procedures"][0]["inclusive"] = 101;
  EXPECT_THAT(refused(j), invalid("procedures[0].inclusive: 101 exceeds the summary's cycles"));
  // Inside a batch, the path goes through jobs[].
  j = BatchJson();
  j["jobs"][1]["phases"][0]["total"] = nullptr;
  EXPECT_THAT(refused(j), invalid("s.json: jobs[1].phases[0].total: expected a non-negative "
                                  "integer, got null"));
  j = BatchJson();
  j["phases"][0].erase("jobs");
  EXPECT_THAT(refused(j), invalid("s.json: phases[0].jobs: missing"));
  j = BatchJson();
  j["cycles"] = 199;
  EXPECT_THAT(refused(j), invalid("cycles: expected the sum of jobs[].cycles (200), got 199"));
  j = BatchJson();
  j["without_summary"][0]["job"] = "fib";
  EXPECT_THAT(refused(j), invalid("without_summary[0].job: duplicate job \"fib\""));
  j = BatchJson();
  j["state"] = "done";
  EXPECT_THAT(refused(j), invalid("state: expected succeeded, failed, cancelled or running"));

  EXPECT_THAT(ParseSummary("{\"schema\": ", "s.json"), invalid("s.json: not valid JSON"));
  EXPECT_THAT(ParseSummary("[1, 2]", "s.json"), invalid("expected an object, got an array"));
  EXPECT_THAT(ParseSummary(std::string(100, '['), "s.json"),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("nested deeper")));
  // Brackets inside strings are not nesting.
  j = JobJson();
  j["procedures"][0]["name"] = std::string(100, '[');
  EXPECT_TRUE(Parse(j).ok());
}

// JobJson with a trace shape that follows the v0.25 rules (issue #18): 11 hasher requests, 4
// states (2·11 = 22 controller rows, padded by 10 to 32, 64 permutation rows); $main requests 4
// (1 repeat: 8 + 3·16 = 56 rows), fib 7 (6 repeats: 14 + 16 = 30); one memory row and 6 range
// rows in $main; the overhead: the padding, the range table of {0, 65535} (39) and the chiplets'
// padding row.
nlohmann::json TracedJobJson() {
  nlohmann::json j = JobJson();
  auto rows = [](uint64_t hasher, uint64_t memory, uint64_t range) {
    return nlohmann::json{{"hasher", hasher}, {"bitwise", 0},   {"memory", memory},
                          {"ace", 0},         {"range", range}, {"chiplets", hasher + memory}};
  };
  j["procedures"][0]["trace"] = {{"self", rows(56, 1, 6)},
                                 {"inclusive", rows(86, 1, 6)},
                                 {"hasher_requests", 4},
                                 {"hasher_dedup_hits", 1}};
  j["procedures"][1]["trace"] = {{"self", rows(30, 0, 0)},
                                 {"inclusive", rows(30, 0, 0)},
                                 {"hasher_requests", 7},
                                 {"hasher_dedup_hits", 6}};
  j["trace_shape"] = {{"core_rows", 101},
                      {"range_rows", 45},
                      {"hasher",
                       {{"requests", 11},
                        {"states", 4},
                        {"controller_rows", 22},
                        {"controller_padding", 10},
                        {"permutation_rows", 64},
                        {"rows", 96}}},
                      {"bitwise_rows", 0},
                      {"memory_rows", 1},
                      {"ace_rows", 0},
                      {"kernel_rom_rows", 0},
                      {"chiplets_rows", 98},
                      {"core_height", 128},
                      {"chiplets_height", 128},
                      {"padded_len", 128},
                      {"bound", "core"},
                      {"overhead", rows(10, 0, 39)}};
  j["trace_shape"]["overhead"]["chiplets"] = 11;
  return j;
}

TEST(SummaryFileTest, ReadsTheTraceShapeAndChecksThatItAddsUp) {
  ASSERT_OK_AND_ASSIGN(Summary s, ParseSummary(TracedJobJson().dump(), "t.json"));
  ASSERT_TRUE(s.totals.trace_shape.has_value());
  EXPECT_EQ(s.totals.trace_shape->padded_len, 128u);
  EXPECT_EQ(s.totals.trace_shape->totals[static_cast<size_t>(runner::TraceKind::kChiplets)], 98u);
  EXPECT_TRUE(s.totals.procedures[1].has_trace);
  EXPECT_EQ(s.totals.procedures[1].trace_self[static_cast<size_t>(runner::TraceKind::kHasher)],
            30u);
  EXPECT_EQ(s.totals.procedures[1].hasher_requests, 7u);
  // A job summary without one (v0.16, a trap) reads as before.
  ASSERT_OK_AND_ASSIGN(Summary plain, ParseSummary(JobJson().dump(), "p.json"));
  EXPECT_FALSE(plain.totals.trace_shape.has_value());

  nlohmann::json bad = TracedJobJson();
  bad["trace_shape"]["overhead"]["range"] = 38;
  EXPECT_THAT(ParseSummary(bad.dump(), "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.json: trace_shape: the procedures' self range rows and the "
                                 "overhead sum to 44, not the total 45")));
  bad = TracedJobJson();
  bad["trace_shape"]["padded_len"] = 256;
  EXPECT_THAT(ParseSummary(bad.dump(), "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trace_shape.padded_len")));
  bad = TracedJobJson();
  bad.erase("trace_shape");
  EXPECT_THAT(ParseSummary(bad.dump(), "t.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trace_shape: missing")));
  bad = TracedJobJson();
  bad["procedures"][1]["trace"]["self"]["memory"] = -1;
  EXPECT_THAT(
      ParseSummary(bad.dump(), "t.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("procedures[1].trace.self.memory")));
}

// The reader checks a trace shape with the wire decoder's check (runner::CheckTraceShape): the
// dialect's rules, named by the JSON path (also inside a batch's jobs[]).
TEST(SummaryFileTest, RefusesATraceShapeThatBreaksTheDialectsRulesNamingTheField) {
  struct Case {
    const char* expected;
    void (*mutate)(nlohmann::json&);
  };
  const std::vector<Case> cases = {
      {"t.json: trace_shape.hasher.rows: 82 is not controller_rows + controller_padding + "
       "permutation_rows = 96",
       [](nlohmann::json& j) { j["trace_shape"]["hasher"]["rows"] = 82; }},
      {"t.json: trace_shape.hasher.controller_padding: 0 is not",
       [](nlohmann::json& j) { j["trace_shape"]["hasher"]["controller_padding"] = 0; }},
      {"t.json: trace_shape.core_rows: 100 is not cycles + 1 = 101",
       [](nlohmann::json& j) { j["trace_shape"]["core_rows"] = 100; }},
      {"t.json: trace_shape.core_height: 256 is not",
       [](nlohmann::json& j) {
         j["trace_shape"]["core_height"] = 256;
         j["trace_shape"]["padded_len"] = 256;
       }},
      {"t.json: trace_shape.bound: \"chiplets\" is not \"core\"",
       [](nlohmann::json& j) { j["trace_shape"]["bound"] = "chiplets"; }},
      {"t.json: trace_shape.bound: \"fast\" is not a trace bound",
       [](nlohmann::json& j) { j["trace_shape"]["bound"] = "fast"; }},
      {"t.json: procedures[1].trace.self.hasher: 32 is not",
       [](nlohmann::json& j) {
         j["procedures"][1]["trace"]["self"]["hasher"] = 32;
         j["procedures"][1]["trace"]["self"]["chiplets"] = 32;
       }},
      {"t.json: procedures[0].trace: missing",
       [](nlohmann::json& j) { j["procedures"][0].erase("trace"); }},
      {"t.json: procedures[1].trace.hasher_dedup_hits: missing",
       [](nlohmann::json& j) { j["procedures"][1]["trace"].erase("hasher_dedup_hits"); }},
      {"t.json: trace_shape: dialect \"v0.16\" has no trace-shape rules",
       [](nlohmann::json& j) { j["dialect"] = "v0.16"; }},
      {"t.json: dialect: missing", [](nlohmann::json& j) { j.erase("dialect"); }},
      {"t.json: trace_shape: set, but the run ended with an error",
       [](nlohmann::json& j) {
         j["status"] = "error";
         j["error"] = {{"code", "RESOURCE_EXHAUSTED"}, {"message", "cycle limit"}};
       }},
  };
  for (const Case& c : cases) {
    nlohmann::json j = TracedJobJson();
    c.mutate(j);
    EXPECT_THAT(ParseSummary(j.dump(), "t.json"),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)))
        << c.expected;
  }
  // Inside a batch, the path starts at the job.
  nlohmann::json batch = BatchJson();
  batch["jobs"][0] = TracedJobJson();
  batch["jobs"][0]["trace_shape"]["hasher"]["rows"] = 82;
  EXPECT_THAT(Parse(batch), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("s.json: jobs[0].trace_shape.hasher.rows: 82")));
}

// BatchJson whose first job has TracedJobJson's trace shape: trace_totals and the procedures'
// trace rows are that job's (the second job trapped: no trace shape).
nlohmann::json TracedBatchJson() {
  nlohmann::json batch = BatchJson();
  const nlohmann::json job = TracedJobJson();
  batch["jobs"][0] = job;
  batch["procedures"] = {
      {{"name", "$exec::fib"}, {"calls", 14}, {"self", 160}, {"inclusive", 160}},
      {{"name", "$exec::$main"}, {"calls", 2}, {"self", 40}, {"inclusive", 200}}};
  batch["procedures"][0]["trace"] = job["procedures"][1]["trace"];
  batch["procedures"][1]["trace"] = job["procedures"][0]["trace"];
  nlohmann::json rows = job["trace_shape"]["overhead"];
  rows["hasher"] = 96;
  rows["memory"] = 1;
  rows["range"] = 45;
  rows["chiplets"] = 98;
  batch["trace_totals"] = {{"jobs", 1},
                           {"core_rows", 101},
                           {"padded_len", 128},
                           {"rows", rows},
                           {"overhead", job["trace_shape"]["overhead"]}};
  return batch;
}

TEST(SummaryFileTest, ReadsABatchsTraceTotalsAndChecksThemAgainstItsJobs) {
  ASSERT_OK_AND_ASSIGN(Summary s, Parse(TracedBatchJson()));
  ASSERT_TRUE(s.totals.trace_shape.has_value());
  EXPECT_EQ(s.totals.trace_shape->jobs, 1u);
  EXPECT_EQ(s.totals.trace_shape->padded_len, 128u);
  EXPECT_EQ(s.totals.trace_shape->totals[static_cast<size_t>(runner::TraceKind::kHasher)], 96u);
  EXPECT_EQ(s.totals.procedures[1].trace_self[static_cast<size_t>(runner::TraceKind::kHasher)],
            56u);
  // A batch without them (no job had a trace shape) reads as before.
  ASSERT_OK_AND_ASSIGN(Summary plain, Parse(BatchJson()));
  EXPECT_FALSE(plain.totals.trace_shape.has_value());

  struct Case {
    const char* expected;
    void (*mutate)(nlohmann::json&);
  };
  const std::vector<Case> cases = {
      {"s.json: trace_totals.rows.hasher: expected the sum over the jobs with a trace_shape (96), "
       "got 97",
       [](nlohmann::json& b) { b["trace_totals"]["rows"]["hasher"] = 97; }},
      {"s.json: trace_totals.jobs: expected the sum over the jobs with a trace_shape (1), got 2",
       [](nlohmann::json& b) { b["trace_totals"]["jobs"] = 2; }},
      {"s.json: trace_totals.padded_len:",
       [](nlohmann::json& b) { b["trace_totals"]["padded_len"] = 64; }},
      {"s.json: trace_totals: the procedures' self hasher rows and the overhead sum to 95",
       [](nlohmann::json& b) { b["procedures"][0]["trace"]["self"]["hasher"] = 29; }},
      {"s.json: procedures[0].trace.self.range: 1 exceeds inclusive 0",
       [](nlohmann::json& b) { b["procedures"][0]["trace"]["self"]["range"] = 1; }},
      {"s.json: procedures[1].trace: missing (the summary has trace_totals)",
       [](nlohmann::json& b) { b["procedures"][1].erase("trace"); }},
      {"s.json: trace_totals: missing (procedures[0] has trace rows)",
       [](nlohmann::json& b) { b.erase("trace_totals"); }},
      {"s.json: trace_totals.rows.ace: missing",
       [](nlohmann::json& b) { b["trace_totals"]["rows"].erase("ace"); }},
  };
  for (const Case& c : cases) {
    nlohmann::json b = TracedBatchJson();
    c.mutate(b);
    EXPECT_THAT(Parse(b), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)))
        << c.expected;
  }
}

TEST(SummaryFileTest, BoundsTheFileAndTheLists) {
  const std::string text = JobJson().dump();
  SummaryReadOptions small;
  small.max_bytes = text.size() - 1;
  EXPECT_THAT(ParseSummary(text, "s.json", small),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("bytes exceed the summary limit of")));
  const std::filesystem::path file =
      std::filesystem::path(testing::TempDir()) / absl::StrCat("summary_", getpid(), ".json");
  testutil::WriteFile(file, text);
  EXPECT_THAT(ReadSummaryFile(file.string(), small),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr(file.string())));
  ASSERT_OK_AND_ASSIGN(Summary s, ReadSummaryFile(file.string()));
  EXPECT_EQ(s.source, file.string());
  std::filesystem::remove(file);
  EXPECT_THAT(ReadSummaryFile(file.string()), StatusIs(absl::StatusCode::kNotFound));

  nlohmann::json j = JobJson();
  j["instructions"] = nlohmann::json::array();
  for (size_t i = 0; i <= kMaxSummaryRows; ++i) j["instructions"].push_back(0);
  EXPECT_THAT(Parse(j), StatusIs(absl::StatusCode::kResourceExhausted,
                                 HasSubstr("instructions: 1000001 rows exceed the limit")));
}

}  // namespace
}  // namespace flamefleet::cli
