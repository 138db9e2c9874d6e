// Properties of the trace-shape attribution (runner/run_stats.h, docs/trace-shape.md) over every
// program of the v0.25 conformance corpus (tests/testdata/vm/v0_25, without oracles/ and
// corelib/): for every row kind the procedures' self rows plus the overhead add up to the total,
// the weighted profile's total is that total, no procedure's inclusive rows exceed it, and the
// totals are those of a run without attribution (a bare executor and recorder, one bucket).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runner/runner.h"
#include "tests/testing/json_schema.h"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

namespace fs = std::filesystem;

fs::path CorpusRoot() { return fs::path(FLAMEFLEET_TESTDATA_DIR) / "vm" / "v0_25"; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The successful corpus programs: NAME.masm with a NAME.expect.json that expects no error.
std::vector<std::string> SuccessfulPrograms() {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(CorpusRoot());
       it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    if (it.depth() == 0 && it->is_directory() &&
        (p.filename() == "oracles" || p.filename() == "corelib")) {
      it.disable_recursion_pending();
      continue;
    }
    if (p.extension() != ".masm") continue;
    fs::path expect = p;
    expect.replace_extension(".expect.json");
    if (!fs::exists(expect)) continue;
    if (ReadFile(expect).find("\"error\"") != std::string::npos) continue;
    out.push_back(p.lexically_relative(CorpusRoot()).string());  // p is under the root
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Loaded {
  vm::Program program;
  vm::ProgramInputs inputs;
  vm::ExecutionOptions options;
};

// Assembles a corpus program with the libraries, kernel, inputs and cycle cap its expectation
// names (as tests/vm/conformance_test.cc does).
bool Load(const std::string& rel, Loaded* out) {
  const fs::path program = CorpusRoot() / rel;
  fs::path expect_path = program;
  expect_path.replace_extension(".expect.json");
  const nlohmann::json expect = nlohmann::json::parse(ReadFile(expect_path));
  if (expect.value("core_lib", false)) return false;
  vm::AssemblerOptions options;
  options.dialect = vm::Dialect::kV0_25;
  if (expect.contains("libs")) {
    for (auto& [ns, dir] : expect["libs"].items()) {
      options.libraries.emplace_back(
          ns, (program.parent_path() / dir.get<std::string>()).lexically_normal().string());
    }
  }
  if (expect.contains("kernel")) {
    options.kernel_path =
        (program.parent_path() / expect["kernel"].get<std::string>()).lexically_normal().string();
  }
  absl::StatusOr<vm::Program> assembled = vm::Assembler(options).AssembleFile(program.string());
  EXPECT_TRUE(assembled.ok()) << rel << ": " << assembled.status();
  if (!assembled.ok()) return false;
  out->program = *std::move(assembled);
  for (const char* ext : {".inputs", ".toml"}) {
    fs::path in = program;
    in.replace_extension(ext);
    if (!fs::exists(in)) continue;
    absl::StatusOr<vm::ProgramInputs> inputs =
        vm::LoadInputs(in.string(), out->program.dialect->json_stack_order);
    EXPECT_TRUE(inputs.ok()) << rel << ": " << inputs.status();
    if (inputs.ok()) out->inputs = *std::move(inputs);
  }
  if (expect.contains("max_cycles")) out->options.max_cycles = expect["max_cycles"];
  return true;
}

// The trace shape of a run without a profiler: every row in bucket 0.
vm::TraceShape BareShape(const Loaded& l) {
  absl::StatusOr<vm::AdviceProvider> advice = vm::MakeAdvice(l.inputs, *l.program.dialect->hasher);
  EXPECT_TRUE(advice.ok()) << advice.status();
  vm::TraceShapeRecorder recorder(l.program);
  vm::ExecutionOptions options = l.options;
  if (l.inputs.max_cycles.has_value()) {
    options.max_cycles = std::min(options.max_cycles, *l.inputs.max_cycles);
  }
  vm::Executor exec(l.program, l.inputs.stack, *std::move(advice), options);
  exec.RecordTraceShape(&recorder);
  exec.Run();
  EXPECT_EQ(exec.state(), vm::Executor::State::kFinished) << exec.trap().message;
  return recorder.Finish(exec.clk());
}

TEST(TraceShapeStatsTest, AttributionAddsUpOverTheV025Corpus) {
  const std::vector<std::string> programs = SuccessfulPrograms();
  ASSERT_GT(programs.size(), 100u);
  size_t checked = 0;
  for (const std::string& rel : programs) {
    SCOPED_TRACE(rel);
    Loaded l;
    if (!Load(rel, &l)) continue;
    StatsOptions options;
    options.trace_shape = true;
    absl::StatusOr<StatsRun> run = ProfileProgramWithStats(l.program, l.inputs, l.options, options);
    ASSERT_TRUE(run.ok()) << run.status();
    if (!run->status.ok()) continue;  // an event the corpus answers another way
    ASSERT_TRUE(run->stats.trace_shape.has_value());
    const TraceShapeStats& shape = *run->stats.trace_shape;
    const vm::TraceShape& t = shape.totals;
    EXPECT_EQ(t.core_rows, run->result.cycles + 1);
    for (TraceKind kind : kAllTraceKinds) {
      SCOPED_TRACE(TraceKindName(kind));
      const size_t k = static_cast<size_t>(kind);
      uint64_t self = shape.overhead[k];
      for (const ProcedureTraceShape& p : shape.procedures) {
        self += p.self[k];
        EXPECT_LE(p.self[k], p.inclusive[k]) << p.name;
        EXPECT_LE(p.inclusive[k], shape.Total(kind)) << p.name;
      }
      EXPECT_EQ(self, shape.Total(kind));
      EXPECT_EQ(TraceWeightedProfile(run->profile, shape, kind).total(), shape.Total(kind));
    }
    // The same totals without attribution.
    const vm::TraceShape bare = BareShape(l);
    EXPECT_EQ(bare.range_rows, t.range_rows);
    EXPECT_EQ(bare.hasher_rows, t.hasher_rows);
    EXPECT_EQ(bare.hasher_states, t.hasher_states);
    EXPECT_EQ(bare.memory_rows, t.memory_rows);
    EXPECT_EQ(bare.bitwise_rows, t.bitwise_rows);
    EXPECT_EQ(bare.ace_rows, t.ace_rows);
    EXPECT_EQ(bare.chiplets_rows, t.chiplets_rows);
    EXPECT_EQ(bare.padded_len, t.padded_len);
    ++checked;
  }
  EXPECT_GT(checked, 100u);
}

TEST(TraceShapeStatsTest, SummaryJsonCarriesTraceShapeAndMatchesTheSchema) {
  vm::AssemblerOptions options;
  options.dialect = vm::Dialect::kV0_25;
  absl::StatusOr<vm::Program> program = vm::Assembler(options).AssembleSource(
      "t.masm",
      "proc hash\n  padw padw padw hperm dropw dropw dropw\nend\n"
      "begin\n  exec.hash exec.hash push.5 push.3 u32xor drop\nend\n");
  ASSERT_TRUE(program.ok()) << program.status();
  StatsOptions stats;
  stats.trace_shape = true;
  vm::ProgramInputs inputs;
  absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, inputs, {}, stats);
  ASSERT_TRUE(run.ok()) << run.status();
  const nlohmann::json j = nlohmann::json::parse(
      SummaryJson({.job = "t", .program = &*program, .inputs = &inputs, .run = &*run}));
  const nlohmann::json schema =
      testutil::LoadJsonSchema(std::string(FLAMEFLEET_DOCS_DIR) + "/summary.schema.json");
  EXPECT_EQ(testutil::SchemaErrors(schema, j), std::vector<std::string>{});
  ASSERT_TRUE(j.contains("trace_shape"));
  EXPECT_EQ(j["trace_shape"]["bitwise_rows"], 8);
  EXPECT_EQ(j["trace_shape"]["padded_len"],
            std::max(j["trace_shape"]["core_height"].get<uint64_t>(),
                     j["trace_shape"]["chiplets_height"].get<uint64_t>()));
  // The second `hash` call requests the same HPERM state: a dedup hit, no new cycle.
  bool found = false;
  for (const nlohmann::json& p : j["procedures"]) {
    if (p["name"] != "$exec::hash") continue;
    found = true;
    EXPECT_EQ(p["trace"]["hasher_dedup_hits"], 1);
    EXPECT_EQ(p["calls"], 2);
  }
  EXPECT_TRUE(found);
}

TEST(TraceShapeStatsTest, V016HasNoTraceShape) {
  vm::AssemblerOptions options;
  options.dialect = vm::Dialect::kV0_16;
  absl::StatusOr<vm::Program> program =
      vm::Assembler(options).AssembleSource("t.masm", "begin push.1 drop end");
  ASSERT_TRUE(program.ok()) << program.status();
  StatsOptions stats;
  stats.trace_shape = true;
  absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, {}, {}, stats);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->stats.trace_shape.has_value());
}

TEST(TraceShapeStatsTest, ParsesKindNames) {
  for (TraceKind kind : kAllTraceKinds) {
    absl::StatusOr<TraceKind> parsed = ParseTraceKind(TraceKindName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(ParseTraceKind("cycles").ok());
}

}  // namespace
}  // namespace flamefleet::runner
