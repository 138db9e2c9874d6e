// The wire form of a job's summary (runner/summary.h): the proto round trip gives byte for byte
// the summary.json of the run, the one decoder refuses what does not add up (naming the
// field), and the batch document sums the jobs' tables by name.
#include "runner/summary.h"

#include <filesystem>
#include <fstream>
#include <iterator>
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
  options.trace_shape = true;
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
    // The v0.25 run's trace shape travels too (issue #18); v0.16 has none.
    const json doc = json::parse(SummaryJson(decoded));
    EXPECT_EQ(doc.contains("trace_shape"), dialect == vm::Dialect::kV0_25);
    EXPECT_EQ(doc["procedures"][0].contains("trace"), dialect == vm::Dialect::kV0_25);
  }
}

// A summary written before trace shapes existed (or of a v0.16 run) has no trace fields on the
// wire, and still decodes: without a trace shape.
TEST(JobSummaryTest, ASummaryWithoutTraceFieldsDecodesWithoutATraceShape) {
  v1::JobSummary m = Valid();
  ASSERT_TRUE(m.has_trace_shape());
  m.clear_trace_shape();
  for (v1::SummaryProcedure& p : *m.mutable_procedures()) p.clear_trace();
  ASSERT_OK_AND_ASSIGN(JobSummary decoded, DecodeJobSummary(m.SerializeAsString()));
  EXPECT_FALSE(decoded.stats.trace_shape.has_value());
  EXPECT_FALSE(json::parse(SummaryJson(decoded)).contains("trace_shape"));
}

// Issue #18: the decoder checks a trace shape by the rules of docs/trace-shape.md and the
// dialect's TraceShapeRules, naming the field.
TEST(JobSummaryTest, TheDecoderRefusesATraceShapeThatBreaksTheRulesNamingTheField) {
  struct Case {
    const char* expected;
    void (*mutate)(v1::JobSummary&);
  };
  const std::vector<Case> cases = {
      {"trace_shape.core_rows: ",
       [](v1::JobSummary& m) { m.mutable_trace_shape()->set_core_rows(m.cycles()); }},
      {"trace_shape.hasher.states: ",
       [](v1::JobSummary& m) {
         m.mutable_trace_shape()->mutable_hasher()->set_states(m.trace_shape().hasher().requests() +
                                                               1);
       }},
      {"trace_shape.hasher.controller_rows: ",
       [](v1::JobSummary& m) {
         v1::SummaryHasherRows* h = m.mutable_trace_shape()->mutable_hasher();
         h->set_requests(h->requests() + 1);
       }},
      {"trace_shape.hasher.controller_rows: 2 x requests overflows 64 bits",
       [](v1::JobSummary& m) {
         m.mutable_trace_shape()->mutable_hasher()->set_requests(UINT64_MAX);
       }},
      {"trace_shape.hasher.controller_padding: ",
       [](v1::JobSummary& m) {
         v1::SummaryHasherRows* h = m.mutable_trace_shape()->mutable_hasher();
         h->set_controller_padding(h->controller_padding() + 16);
       }},
      {"trace_shape.hasher.permutation_rows: ",
       [](v1::JobSummary& m) {
         v1::SummaryHasherRows* h = m.mutable_trace_shape()->mutable_hasher();
         h->set_permutation_rows(h->permutation_rows() + 16);
       }},
      {"trace_shape.hasher.rows: ",
       [](v1::JobSummary& m) {
         v1::SummaryHasherRows* h = m.mutable_trace_shape()->mutable_hasher();
         h->set_rows(h->rows() + 1);
       }},
      {"trace_shape.bitwise_rows: 3 is not a multiple of 8",
       [](v1::JobSummary& m) { m.mutable_trace_shape()->set_bitwise_rows(3); }},
      {"trace_shape.chiplets_rows: ",
       [](v1::JobSummary& m) {
         m.mutable_trace_shape()->set_chiplets_rows(m.trace_shape().chiplets_rows() + 1);
       }},
      {"trace_shape.core_height: ",
       [](v1::JobSummary& m) {
         m.mutable_trace_shape()->set_core_height(m.trace_shape().core_height() * 2);
       }},
      {"trace_shape.core_height: max(64, next_pow2(max(core_rows, range_rows))) overflows",
       [](v1::JobSummary& m) { m.mutable_trace_shape()->set_range_rows(UINT64_MAX); }},
      {"trace_shape.chiplets_height: ",
       [](v1::JobSummary& m) {
         m.mutable_trace_shape()->set_chiplets_height(m.trace_shape().chiplets_height() * 2);
       }},
      {"trace_shape.padded_len: ",
       [](v1::JobSummary& m) {
         m.mutable_trace_shape()->set_padded_len(m.trace_shape().padded_len() * 2);
       }},
      {"trace_shape.bound: \"",
       [](v1::JobSummary& m) {
         m.mutable_trace_shape()->set_bound(m.trace_shape().bound() == v1::SUMMARY_TRACE_BOUND_CORE
                                                ? v1::SUMMARY_TRACE_BOUND_CHIPLETS
                                                : v1::SUMMARY_TRACE_BOUND_CORE);
       }},
      {"trace_shape.bound: 0 is not core, range or chiplets",
       [](v1::JobSummary& m) { m.mutable_trace_shape()->clear_bound(); }},
      {"trace_shape: the procedures' self range rows and the overhead sum to",
       [](v1::JobSummary& m) {
         v1::SummaryTraceRows* o = m.mutable_trace_shape()->mutable_overhead();
         o->set_range(o->range() + 1);
       }},
      {"procedures[0].trace.self.range: ",
       [](v1::JobSummary& m) {
         v1::SummaryProcedureTrace* t = m.mutable_procedures(0)->mutable_trace();
         t->mutable_self()->set_range(t->inclusive().range() + 1);
       }},
      {"procedures[0].trace.inclusive.range: ",
       [](v1::JobSummary& m) {
         m.mutable_procedures(0)->mutable_trace()->mutable_inclusive()->set_range(
             m.trace_shape().range_rows() + 1);
       }},
      {"procedures[0].trace.self.hasher: ",
       [](v1::JobSummary& m) {
         v1::SummaryProcedureTrace* t = m.mutable_procedures(0)->mutable_trace();
         t->set_hasher_requests(t->hasher_requests() + 1);
       }},
      {"procedures[0].trace.hasher_dedup_hits: ",
       [](v1::JobSummary& m) {
         v1::SummaryProcedureTrace* t = m.mutable_procedures(0)->mutable_trace();
         t->set_hasher_dedup_hits(t->hasher_requests() + 1);
       }},
      {"procedures[0].trace.self.chiplets: ",
       [](v1::JobSummary& m) {
         v1::SummaryTraceRows* r = m.mutable_procedures(0)->mutable_trace()->mutable_self();
         r->set_chiplets(r->chiplets() + 1);
       }},
      {"procedures[1].trace: missing",
       [](v1::JobSummary& m) { m.mutable_procedures(1)->clear_trace(); }},
      {"trace_shape: missing (procedures[0] has trace rows)",
       [](v1::JobSummary& m) { m.clear_trace_shape(); }},
      {"trace_shape: dialect \"v0.16\" has no trace-shape rules",
       [](v1::JobSummary& m) { m.set_dialect("v0.16"); }},
      {"trace_shape: set, but the run ended with an error",
       [](v1::JobSummary& m) {
         m.set_error_code(static_cast<uint32_t>(absl::StatusCode::kResourceExhausted));
         m.set_error_message("cycle limit");
       }},
  };
  const v1::JobSummary valid = Valid();
  ASSERT_OK(DecodeJobSummary(valid).status());
  ASSERT_TRUE(valid.has_trace_shape());
  ASSERT_GE(valid.procedures_size(), 2);
  for (const Case& c : cases) {
    v1::JobSummary m = valid;
    c.mutate(m);
    EXPECT_THAT(DecodeJobSummary(m).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)))
        << c.expected;
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
      stats.trace_shape = true;  // v0.25: checked by the decoder's trace-shape rules too
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

// Issue #18: the batch document sums the trace shapes of the jobs that have one (rows per kind,
// overhead, core rows, padded lengths) and each procedure's trace rows by name; they add up as a
// job's do. A batch without such jobs has no trace_totals.
TEST(BatchSummaryTest, TraceTotalsSumTheJobsThatHaveATraceShape) {
  const JobRun a = RunProgram(vm::Dialect::kV0_25, kProgram, Markers());
  const JobRun b = RunProgram(
      vm::Dialect::kV0_25, "proc f add.1 end begin exec.f hperm dropw dropw dropw end", Markers());
  const JobRun c = RunProgram(vm::Dialect::kV0_16, "proc.f add.1 end begin exec.f drop end", {});
  BatchSummaryInput batch;
  batch.batch_id = "8";
  batch.state = "succeeded";
  for (const auto& [name, r] : {std::pair{"a", &a}, std::pair{"b", &b}, std::pair{"c", &c}}) {
    batch.jobs.push_back(MakeJobSummary(
        {.job = name, .program = &r->program, .inputs = &r->inputs, .run = &r->run}));
  }
  const json doc = json::parse(BatchSummaryJson(batch));
  ASSERT_TRUE(doc.contains("trace_totals")) << doc.dump(1);
  const json& totals = doc["trace_totals"];
  EXPECT_EQ(totals["jobs"], 2u);
  const json& ja = doc["jobs"][0]["trace_shape"];
  const json& jb = doc["jobs"][1]["trace_shape"];
  EXPECT_FALSE(doc["jobs"][2].contains("trace_shape"));
  EXPECT_EQ(totals["core_rows"], ja["core_rows"].get<uint64_t>() + jb["core_rows"].get<uint64_t>());
  EXPECT_EQ(totals["padded_len"],
            ja["padded_len"].get<uint64_t>() + jb["padded_len"].get<uint64_t>());
  auto total = [](const json& shape, const std::string& kind) -> uint64_t {
    return kind == "hasher" ? shape["hasher"]["rows"].get<uint64_t>()
                            : shape[kind + "_rows"].get<uint64_t>();
  };
  for (const char* kind : {"hasher", "bitwise", "memory", "ace", "range", "chiplets"}) {
    EXPECT_EQ(totals["rows"][kind], total(ja, kind) + total(jb, kind)) << kind;
    EXPECT_EQ(totals["overhead"][kind],
              ja["overhead"][kind].get<uint64_t>() + jb["overhead"][kind].get<uint64_t>())
        << kind;
    // The procedures' self rows (summed by name) plus the overhead are the total.
    uint64_t sum = totals["overhead"][kind].get<uint64_t>();
    for (const json& p : doc["procedures"]) {
      if (p.contains("trace")) sum += p["trace"]["self"][kind].get<uint64_t>();
    }
    EXPECT_EQ(sum, totals["rows"][kind].get<uint64_t>()) << kind;
  }
  // b's hperm: the batch's hasher rows exceed a's alone.
  EXPECT_GT(totals["rows"]["hasher"].get<uint64_t>(), total(ja, "hasher"));

  batch.jobs.resize(0);
  batch.jobs.push_back(
      MakeJobSummary({.job = "c", .program = &c.program, .inputs = &c.inputs, .run = &c.run}));
  const json plain = json::parse(BatchSummaryJson(batch));
  EXPECT_FALSE(plain.contains("trace_totals"));
  EXPECT_FALSE(plain["procedures"][0].contains("trace"));
}

// The summary decoder's fuzz seed (tests/testdata/summary/) is a valid summary with a trace
// shape, so the fuzzer starts inside the trace checks.
TEST(JobSummaryTest, TheFuzzSeedDecodesWithItsTraceShape) {
  const fs::path dir = fs::path(FLAMEFLEET_TESTDATA_DIR) / "summary";
  size_t seeds = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".binpb") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_OK_AND_ASSIGN(JobSummary summary, DecodeJobSummary(bytes));
    EXPECT_TRUE(summary.stats.trace_shape.has_value()) << entry.path();
    ++seeds;
  }
  EXPECT_GE(seeds, 1u);
}

}  // namespace
}  // namespace flamefleet::runner
