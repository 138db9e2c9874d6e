// summary.json against docs/summary.schema.json, and a batch's summary.json against
// docs/batch-summary.schema.json (its jobs against summary.schema.json), with the validator of
// tests/testing/json_schema.h.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runner/run_stats.h"
#include "runner/summary.h"
#include "tests/testing/json_schema.h"
#include "tests/testing/status_matchers.h"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

using nlohmann::json;

json LoadSchema(const std::string& file = "summary.schema.json") {
  return testutil::LoadJsonSchema(std::string(FLAMEFLEET_DOCS_DIR) + "/" + file);
}

std::vector<std::string> Errors(const json& doc, const std::string& file = "summary.schema.json") {
  return testutil::SchemaErrors(LoadSchema(file), doc);
}

JobSummary Job(vm::Dialect dialect, const std::string& source, const StatsOptions& options,
               const std::string& name) {
  vm::AssemblerOptions assembler;
  assembler.dialect = dialect;
  absl::StatusOr<vm::Program> program = vm::Assembler(assembler).AssembleSource("t.masm", source);
  EXPECT_TRUE(program.ok()) << program.status();
  vm::ProgramInputs inputs;
  absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, inputs, {}, options);
  EXPECT_TRUE(run.ok()) << run.status();
  return MakeJobSummary({.job = name, .program = &*program, .inputs = &inputs, .run = &*run});
}

json Summary(vm::Dialect dialect, const std::string& source, const StatsOptions& options) {
  vm::AssemblerOptions assembler;
  assembler.dialect = dialect;
  absl::StatusOr<vm::Program> program = vm::Assembler(assembler).AssembleSource("t.masm", source);
  EXPECT_TRUE(program.ok()) << program.status();
  vm::ProgramInputs inputs;
  inputs.stack = {vm::Felt(3)};
  absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, inputs, {}, options);
  EXPECT_TRUE(run.ok()) << run.status();
  return json::parse(
      SummaryJson({.job = "t", .program = &*program, .inputs = &inputs, .run = &*run}));
}

TEST(SummarySchemaTest, ASuccessfulRunWithPhasesMatchesTheSchema) {
  StatsOptions options;
  options.marker_prefixes = {"p::"};
  const json doc = Summary(vm::Dialect::kV0_25,
                           R"(proc f add.1 end
                              begin emit.event("p::a") exec.f repeat.2 emit.event("p::b") end
                              drop end)",
                           options);
  EXPECT_EQ(Errors(doc), std::vector<std::string>{});
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["dialect"], "v0.25");
  EXPECT_EQ(doc["final_stack"].size(), 16u);
  EXPECT_EQ(doc["phases"].size(), 2u);
}

TEST(SummarySchemaTest, AFailedRunMatchesTheSchemaAndNamesTheError) {
  const json doc = Summary(vm::Dialect::kV0_16, "begin push.0 assert end", {});
  EXPECT_EQ(Errors(doc), std::vector<std::string>{});
  EXPECT_EQ(doc["status"], "error");
  EXPECT_EQ(doc["error"]["code"], "INVALID_ARGUMENT");
}

TEST(SummarySchemaTest, TheValidatorRejectsWhatTheSchemaForbids) {
  json doc = Summary(vm::Dialect::kV0_16, "begin push.1 drop end", {});
  doc["cycles"] = -1;
  doc["procedures"][0].erase("calls");
  doc["surprise"] = true;
  doc["program_digest"] = "0x12";
  EXPECT_EQ(Errors(doc).size(), 4u);
}

TEST(SummarySchemaTest, ABatchSummaryMatchesTheBatchSchemaAndItsJobsTheJobSchema) {
  StatsOptions options;
  options.marker_prefixes = {"p::"};
  options.trace_shape = true;  // the v0.25 job: trace_totals and procedures' trace rows
  BatchSummaryInput batch;
  batch.batch_id = "3";
  batch.state = "failed";
  batch.jobs.push_back(Job(vm::Dialect::kV0_25,
                           R"(proc f add.1 end
                              begin emit.event("p::a") exec.f emit.event("p::b") drop end)",
                           options, "a"));
  batch.jobs.push_back(Job(vm::Dialect::kV0_16, "begin push.0 assert end", {}, "b"));
  batch.without_summary.push_back({"c", "failed", "c: unknown procedure"});
  batch.without_summary.push_back({"d", "queued", std::nullopt});
  const json doc = json::parse(BatchSummaryJson(batch));
  EXPECT_EQ(Errors(doc, "batch-summary.schema.json"), std::vector<std::string>{});
  for (const json& job : doc["jobs"]) EXPECT_EQ(Errors(job), std::vector<std::string>{});
  EXPECT_EQ(doc["phases"].size(), 2u);
  EXPECT_EQ(doc["trace_totals"]["jobs"], 1u);
  EXPECT_TRUE(doc["procedures"][0].contains("trace"));

  json bad = doc;
  bad["state"] = "done";
  bad["without_summary"][0].erase("error");
  bad["phases"][0].erase("jobs");
  EXPECT_EQ(Errors(bad, "batch-summary.schema.json").size(), 3u);
}

}  // namespace
}  // namespace flamefleet::runner
