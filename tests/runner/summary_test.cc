// The wire form of a job's summary (runner/summary.h): the proto round trip gives byte for byte
// the summary.json of the run, the one decoder refuses what does not add up (naming the
// field), and the batch document sums the jobs' tables by name.
#include "runner/summary.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runner/run_stats.h"
#include "tests/testing/status_matchers.h"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::HasSubstr;
using testutil::StatusIs;

constexpr const char* kProgram = R"(proc f add.1 end
begin emit.event("p::a") exec.f repeat.2 emit.event("p::b") exec.f end drop end)";

struct JobRun {
  vm::Program program;
  vm::ProgramInputs inputs;
  StatsRun run;
};

JobRun RunProgram(vm::Dialect dialect, const std::string& source, const StatsOptions& options) {
  vm::AssemblerOptions assembler;
  assembler.dialect = dialect;
  absl::StatusOr<vm::Program> program = vm::Assembler(assembler).AssembleSource("t.masm", source);
  EXPECT_TRUE(program.ok()) << program.status();
  JobRun out;
  out.program = *std::move(program);
  out.inputs.stack = {vm::Felt(3)};
  absl::StatusOr<StatsRun> run = ProfileProgramWithStats(out.program, out.inputs, {}, options);
  EXPECT_TRUE(run.ok()) << run.status();
  out.run = *std::move(run);
  return out;
}

StatsOptions Markers() {
  StatsOptions options;
  options.marker_prefixes = {"p::"};
  options.phases = {{"p::a", "p::b"}};
  return options;
}

v1::JobSummary Valid() {
  const JobRun r = RunProgram(vm::Dialect::kV0_25, kProgram, Markers());
  return JobSummaryToProto(
      MakeJobSummary({.job = "t", .program = &r.program, .inputs = &r.inputs, .run = &r.run}));
}

TEST(JobSummaryTest, TheProtoRoundTripWritesTheSameSummaryJson) {
  for (const auto& [dialect, source] :
       {std::pair{vm::Dialect::kV0_25, std::string(kProgram)},
        std::pair{vm::Dialect::kV0_16, std::string("begin push.0 assert end")}}) {
    const JobRun r =
        RunProgram(dialect, source, dialect == vm::Dialect::kV0_25 ? Markers() : StatsOptions{});
    const SummaryInput input{.job = "t", .program = &r.program, .inputs = &r.inputs, .run = &r.run};
    const std::string bytes = JobSummaryToProto(MakeJobSummary(input)).SerializeAsString();
    ASSERT_OK_AND_ASSIGN(JobSummary decoded, DecodeJobSummary(bytes));
    EXPECT_EQ(SummaryJson(decoded), SummaryJson(input));
  }
}

TEST(JobSummaryTest, AFailedRunKeepsItsErrorOnTheWire) {
  const JobRun r = RunProgram(vm::Dialect::kV0_16, "begin push.0 assert end", {});
  ASSERT_FALSE(r.run.status.ok());
  ASSERT_OK_AND_ASSIGN(
      JobSummary decoded,
      DecodeJobSummary(JobSummaryToProto(MakeJobSummary(
          {.job = "t", .program = &r.program, .inputs = &r.inputs, .run = &r.run}))));
  EXPECT_EQ(decoded.status, r.run.status);
  EXPECT_EQ(json::parse(SummaryJson(decoded))["status"], "error");
}

TEST(JobSummaryTest, TheDecoderRefusesWhatDoesNotAddUpNamingTheField) {
  struct Case {
    const char* expected;
    void (*mutate)(v1::JobSummary&);
  };
  const std::vector<Case> cases = {
      {"job: empty", [](v1::JobSummary& m) { m.clear_job(); }},
      {"job: 5000 bytes", [](v1::JobSummary& m) { m.set_job(std::string(5000, 'j')); }},
      {"program_digest:", [](v1::JobSummary& m) { m.set_program_digest("0x12"); }},
      {"inputs_digest:", [](v1::JobSummary& m) { m.set_inputs_digest("sha256:00"); }},
      {"dialect:", [](v1::JobSummary& m) { m.set_dialect("latest"); }},
      {"error_code: 99", [](v1::JobSummary& m) { m.set_error_code(99); }},
      {"error_message: set, but error_code is 0",
       [](v1::JobSummary& m) { m.set_error_message("x"); }},
      {"final_stack: 17 values",
       [](v1::JobSummary& m) {
         while (m.final_stack_size() < 17) m.add_final_stack(0);
       }},
      {"final_stack[0]: 18446744069414584321 is not a field element",
       [](v1::JobSummary& m) { m.set_final_stack(0, vm::Felt::kModulus); }},
      {"procedures: self cycles sum to",
       [](v1::JobSummary& m) { m.mutable_procedures(0)->set_self(m.procedures(0).self() - 1); }},
      {"procedures[0].self:", [](v1::JobSummary& m) { m.mutable_procedures(0)->set_inclusive(0); }},
      {"procedures[0].inclusive:",
       [](v1::JobSummary& m) { m.mutable_procedures(0)->set_inclusive(m.cycles() + 1); }},
      {"procedures[0].name: empty",
       [](v1::JobSummary& m) { m.mutable_procedures(0)->clear_name(); }},
      {"procedures[1].self: the procedures' sum overflows",
       [](v1::JobSummary& m) {
         m.set_cycles(UINT64_MAX);
         m.mutable_procedures(0)->set_self(UINT64_MAX);
         m.mutable_procedures(0)->set_inclusive(UINT64_MAX);
         m.mutable_procedures(1)->set_self(1);
         m.mutable_procedures(1)->set_inclusive(1);
       }},
      {"instructions: cycles sum to",
       [](v1::JobSummary& m) {
         m.mutable_instructions(0)->set_cycles(m.instructions(0).cycles() + 1);
       }},
      {"operations: cycles sum to",
       [](v1::JobSummary& m) { m.mutable_operations()->RemoveLast(); }},
      {"phases[0].min:",
       [](v1::JobSummary& m) { m.mutable_phases(0)->set_min(m.phases(0).max() + 1); }},
      {"phases[0].total:",
       [](v1::JobSummary& m) {
         m.mutable_phases(0)->set_total(m.phases(0).total() + m.cycles() * 10);
       }},
      {"phases[0].max:", [](v1::JobSummary& m) { m.mutable_phases(0)->set_max(m.cycles() + 1); }},
      {"phases[0]: a phase with no spans",
       [](v1::JobSummary& m) { m.mutable_phases(0)->set_count(0); }},
      {"phases: 65537 rows",
       [](v1::JobSummary& m) {
         while (m.phases_size() <= static_cast<int>(kMaxSummaryRows)) *m.add_phases() = m.phases(0);
       }},
  };
  ASSERT_OK(DecodeJobSummary(Valid()).status());
  ASSERT_GE(Valid().procedures_size(), 2);
  ASSERT_GE(Valid().phases_size(), 1);
  ASSERT_GE(Valid().phases(0).count(), 1u);
  for (const Case& c : cases) {
    v1::JobSummary m = Valid();
    c.mutate(m);
    EXPECT_THAT(DecodeJobSummary(m).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)))
        << c.expected;
  }
}

// The decoder accepts what every conformance program's run gives (its checks are the runner's
// own invariants), and the round trip keeps the JSON. Markers: every event named in the
// sources.
TEST(JobSummaryTest, EveryConformanceProgramsSummaryDecodesToTheSameJson) {
  const fs::path data = fs::path(FLAMEFLEET_TESTDATA_DIR) / "vm";
  size_t ran = 0;
  for (vm::Dialect d : {vm::Dialect::kV0_16, vm::Dialect::kV0_25}) {
    const fs::path root = d == vm::Dialect::kV0_25 ? data / "v0_25" : data;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
      const fs::path file = entry.path();
      if (file.extension() != ".masm") continue;
      if (d == vm::Dialect::kV0_16 && file.lexically_relative(root).begin()->string() == "v0_25") {
        continue;
      }
      vm::AssemblerOptions options;
      options.dialect = d;
      absl::StatusOr<vm::Program> program = vm::Assembler(options).AssembleFile(file);
      if (!program.ok()) continue;  // libraries, kernels, assembly-error cases
      vm::ProgramInputs inputs;
      fs::path in = file;
      if (fs::exists(in.replace_extension(".inputs"))) {
        absl::StatusOr<vm::ProgramInputs> loaded =
            vm::LoadInputs(in.string(), vm::GetDialectSpec(d).json_stack_order);
        if (!loaded.ok()) continue;
        inputs = *loaded;
      }
      StatsOptions stats;
      stats.marker_prefixes = {""};
      vm::ExecutionOptions exec;
      exec.max_cycles = 1 << 22;
      absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, inputs, exec, stats);
      if (!run.ok()) continue;
      ++ran;
      const SummaryInput input{
          .job = file.stem().string(), .program = &*program, .inputs = &inputs, .run = &*run};
      absl::StatusOr<JobSummary> decoded =
          DecodeJobSummary(JobSummaryToProto(MakeJobSummary(input)).SerializeAsString());
      ASSERT_TRUE(decoded.ok()) << file << ": " << decoded.status();
      EXPECT_EQ(SummaryJson(*decoded), SummaryJson(input)) << file;
    }
  }
  EXPECT_GT(ran, 100u);
}

TEST(JobSummaryTest, TheByteDecoderRefusesOversizedAndUnparsableBytes) {
  EXPECT_THAT(DecodeJobSummary(std::string(kMaxSummaryBytes + 1, '\0')).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the limit is")));
  EXPECT_THAT(DecodeJobSummary(absl::string_view("\xff\xff\xff")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JobSummary")));
}

TEST(BatchSummaryTest, SumsTheJobsByNameAndMergesPhases) {
  const JobRun a = RunProgram(vm::Dialect::kV0_25, kProgram, Markers());
  const JobRun b =
      RunProgram(vm::Dialect::kV0_25, "proc f add.1 end begin exec.f drop end", Markers());
  BatchSummaryInput batch;
  batch.batch_id = "7";
  batch.state = "failed";
  batch.jobs.push_back(
      MakeJobSummary({.job = "a", .program = &a.program, .inputs = &a.inputs, .run = &a.run}));
  batch.jobs.push_back(
      MakeJobSummary({.job = "b", .program = &b.program, .inputs = &b.inputs, .run = &b.run}));
  batch.without_summary.push_back({"c", "failed", "c: assembly error"});
  batch.without_summary.push_back({"d", "cancelled", std::nullopt});
  const json doc = json::parse(BatchSummaryJson(batch));
  EXPECT_EQ(doc["schema"], "flamefleet.batch-summary/1");
  EXPECT_EQ(doc["batch"], "7");
  EXPECT_EQ(doc["state"], "failed");
  const uint64_t cycles = a.run.result.cycles + b.run.result.cycles;
  EXPECT_EQ(doc["cycles"], cycles);
  ASSERT_EQ(doc["jobs"].size(), 2u);
  EXPECT_EQ(doc["jobs"][0],
            json::parse(SummaryJson(
                {.job = "a", .program = &a.program, .inputs = &a.inputs, .run = &a.run})));
  EXPECT_EQ(doc["without_summary"][0]["error"], "c: assembly error");
  EXPECT_TRUE(doc["without_summary"][1]["error"].is_null());
  for (const char* table : {"procedures", "instructions", "operations"}) {
    uint64_t sum = 0;
    for (const json& row : doc[table])
      sum += row[table == std::string("procedures") ? "self" : "cycles"].get<uint64_t>();
    EXPECT_EQ(sum, cycles) << table;
  }
  // f is called 3 times by a and once by b.
  bool found = false;
  for (const json& row : doc["procedures"]) {
    if (row["name"] == "t::f" || row["name"] == "f" ||
        row["name"].get<std::string>().ends_with("::f")) {
      EXPECT_EQ(row["calls"], 4u);
      found = true;
    }
  }
  EXPECT_TRUE(found) << doc["procedures"].dump();
  // Phases merged by name: "p::a..p::b" in both jobs, but with spans only in a.
  ASSERT_GE(doc["phases"].size(), 1u);
  EXPECT_EQ(doc["phases"][0]["name"], "p::a..p::b");
  EXPECT_EQ(doc["phases"][0]["jobs"], 1u);
  EXPECT_EQ(doc["phases"][0]["count"], a.run.stats.phases[0].count);
  // Descending by inclusive cycles.
  for (size_t i = 1; i < doc["procedures"].size(); ++i) {
    EXPECT_GE(doc["procedures"][i - 1]["inclusive"], doc["procedures"][i]["inclusive"]);
  }
}

}  // namespace
}  // namespace flamefleet::runner
