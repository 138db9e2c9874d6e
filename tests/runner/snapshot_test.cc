#include "runner/snapshot.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/folded.h"
#include "renderer/flamegraph.h"
#include "runner/profile_run.h"
#include "tests/testing/classic.h"
#include "tests/testing/status_matchers.h"

namespace flamefleet::runner {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// These programs are classic v0.16 MASM (the examples under examples/v0_16 among them).
RecordOptions ClassicRecord() {
  RecordOptions options;
  options.dialect = vm::Dialect::kV0_16;
  return options;
}

std::string Folded(const profile::Profile& p) {
  std::ostringstream out;
  EXPECT_TRUE(profile::WriteFolded(p, out).ok());
  return out.str();
}

std::string Svg(const profile::Profile& p) {
  renderer::RenderOptions options;
  options.title = "Miden VM Flame Graph (cycles)";
  options.count_name = "cycles";
  std::ostringstream out;
  EXPECT_TRUE(renderer::RenderSvg(p, options, out).ok());
  return out.str();
}

std::vector<fs::path> Examples() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(FLAMEFLEET_EXAMPLES_DIR)) {
    if (entry.path().extension() == ".masm") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A snapshot that went through the file format.
v1::ReplaySnapshot RoundTrip(const v1::ReplaySnapshot& snapshot) {
  absl::StatusOr<v1::ReplaySnapshot> decoded = DecodeSnapshot(EncodeSnapshot(snapshot));
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  return decoded.ok() ? *decoded : v1::ReplaySnapshot{};
}

TEST(SnapshotTest, ReplayOfEveryExampleProfilesIdenticallyToTheLiveRun) {
  std::vector<fs::path> examples = Examples();
  ASSERT_GE(examples.size(), 8u);
  const std::vector<std::pair<std::string, std::string>> libs = {
      {"ex", std::string(FLAMEFLEET_EXAMPLES_DIR) + "/lib"}};
  for (const fs::path& path : examples) {
    SCOPED_TRACE(path.string());
    vm::ProgramInputs inputs;
    fs::path inputs_path = path;
    inputs_path.replace_extension(".inputs");
    if (fs::exists(inputs_path)) {
      absl::StatusOr<vm::ProgramInputs> loaded = vm::LoadInputs(inputs_path.string());
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      inputs = *loaded;
    }
    vm::AssemblerOptions assembler_options = testutil::ClassicOptions();
    assembler_options.libraries = libs;
    absl::StatusOr<vm::Program> program =
        vm::Assembler(assembler_options).AssembleFile(path.string());
    ASSERT_TRUE(program.ok()) << program.status();

    RecordOptions record_options = ClassicRecord();
    record_options.libraries = libs;
    absl::StatusOr<Recording> recording = RecordFile(path.string(), inputs, record_options);
    ASSERT_TRUE(recording.ok()) << recording.status();
    ASSERT_TRUE(recording->run_status.ok()) << recording->run_status;
    v1::ReplaySnapshot snapshot = RoundTrip(recording->snapshot);

    for (StackMode mode : {StackMode::kNested, StackMode::kFlat}) {
      absl::StatusOr<ProfiledRun> live =
          ProfileProgram(*program, inputs, vm::ExecutionOptions{}, mode);
      ASSERT_TRUE(live.ok()) << live.status();
      absl::StatusOr<ProfiledRun> replay = ProfileReplay(snapshot, std::nullopt, mode);
      ASSERT_TRUE(replay.ok()) << replay.status();
      EXPECT_EQ(replay->result.cycles, live->result.cycles);
      EXPECT_EQ(replay->result.stack, live->result.stack);
      EXPECT_EQ(Folded(replay->profile), Folded(live->profile));
      EXPECT_EQ(Svg(replay->profile), Svg(live->profile));
      EXPECT_EQ(snapshot.outcome().cycles(), live->result.cycles);
    }
  }
}

TEST(SnapshotTest, RecordingKeepsExactlyTheLoadedModules) {
  const fs::path dir = fs::path(::testing::TempDir()) / "snapshot_modules";
  fs::remove_all(dir);
  fs::create_directories(dir / "lib" / "util");
  std::ofstream(dir / "lib" / "util" / "math.masm") << "export.add3\n  add add\nend\n";
  std::ofstream(dir / "lib" / "unused.masm") << "export.nothing\n  nop\nend\n";
  RecordOptions options = ClassicRecord();
  options.libraries = {{"mylib", (dir / "lib").string() + "/"}};
  absl::StatusOr<Recording> recording = RecordSource(
      "main.masm",
      "use.mylib::util::math\nbegin\n  push.1 push.2 push.3\n  exec.math::add3\n  swap drop\nend\n",
      vm::ProgramInputs{}, options);
  ASSERT_TRUE(recording.ok()) << recording.status();
  ASSERT_TRUE(recording->run_status.ok()) << recording->run_status;
  const v1::SnapshotProgram& program = recording->snapshot.program();
  ASSERT_EQ(program.libraries_size(), 1);
  ASSERT_EQ(program.libraries(0).modules_size(), 1);
  EXPECT_EQ(program.libraries(0).namespace_(), "mylib");
  EXPECT_EQ(program.libraries(0).modules(0).path(), "util/math.masm");
  EXPECT_EQ(program.libraries(0).modules(0).digest(),
            SourceDigest("export.add3\n  add add\nend\n"));

  // Replay reads nothing from the disk.
  fs::remove_all(dir);
  v1::ReplaySnapshot snapshot = RoundTrip(recording->snapshot);
  absl::StatusOr<vm::RunResult> replay = ReplayRun(snapshot);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->stack, recording->result.stack);
  EXPECT_EQ(replay->cycles, recording->result.cycles);
}

TEST(SnapshotTest, KernelTravelsInTheSnapshot) {
  const fs::path dir = fs::path(::testing::TempDir()) / "snapshot_kernel";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string kernel_source =
      "export.bump\n  mem_load.0 add.1 dup mem_store.0\n  swap drop\nend\n";
  std::ofstream(dir / "kernel.masm") << kernel_source;
  RecordOptions options = ClassicRecord();
  options.kernel_path = (dir / "kernel.masm").string();
  const char kProgram[] = "begin\n  syscall.bump\n  syscall.bump\n  swap drop\nend\n";
  absl::StatusOr<Recording> recording =
      RecordSource("main.masm", kProgram, vm::ProgramInputs{}, options);
  ASSERT_TRUE(recording.ok()) << recording.status();
  ASSERT_TRUE(recording->run_status.ok()) << recording->run_status;
  EXPECT_EQ(recording->result.stack[0].value(), 2u);
  const v1::SnapshotProgram& program = recording->snapshot.program();
  ASSERT_TRUE(program.has_kernel());
  EXPECT_EQ(program.kernel().path(), options.kernel_path);
  EXPECT_EQ(program.kernel().digest(), SourceDigest(kernel_source));
  EXPECT_EQ(program.libraries_size(), 0);

  // The kernel is part of the program's identity.
  v1::SnapshotProgram without = program;
  without.clear_kernel();
  EXPECT_NE(SnapshotSourceDigest(program), SnapshotSourceDigest(without));

  // Replay needs no file: the kernel comes from the snapshot.
  fs::remove_all(dir);
  v1::ReplaySnapshot snapshot = RoundTrip(recording->snapshot);
  absl::StatusOr<vm::RunResult> replay = ReplayRun(snapshot);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->stack, recording->result.stack);
  EXPECT_EQ(replay->cycles, recording->result.cycles);

  // A kernel whose source does not match its digest is refused when the file is read.
  v1::ReplaySnapshot tampered = recording->snapshot;
  tampered.mutable_program()->mutable_kernel()->set_source(
      "export.bump\n  push.1000 swap drop\nend\n");
  absl::StatusOr<v1::ReplaySnapshot> decoded = DecodeSnapshot(EncodeSnapshot(tampered));
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("kernel"), std::string::npos) << decoded.status();
}

// A v0.25 kernel with a submodule: the submodule is recorded beside the kernel (its path as
// the assembler read it) and replayed from the snapshot alone.
TEST(SnapshotTest, KernelSubmodulesTravelInTheSnapshot) {
  const fs::path dir = fs::path(::testing::TempDir()) / "snapshot_kernel_modules";
  fs::remove_all(dir);
  fs::create_directories(dir / "kern");
  std::ofstream(dir / "kern" / "mod.masm") << "mod sys\npub proc f\n    exec.sys::double\nend\n";
  const std::string sys = "pub proc double\n    dup add\nend\n";
  std::ofstream(dir / "kern" / "sys.masm") << sys;
  std::ofstream(dir / "kern" / "unused.masm") << "pub proc nothing\n    nop\nend\n";
  RecordOptions options;
  options.dialect = vm::Dialect::kV0_25;
  options.kernel_path = (dir / "kern" / "mod.masm").string();
  absl::StatusOr<Recording> recording =
      RecordSource("main.masm", "begin\n  push.21\n  syscall.f\n  swap drop\nend\n",
                   vm::ProgramInputs{}, options);
  ASSERT_TRUE(recording.ok()) << recording.status();
  ASSERT_TRUE(recording->run_status.ok()) << recording->run_status;
  EXPECT_EQ(recording->result.stack[0].value(), 42u);
  const v1::SnapshotProgram& program = recording->snapshot.program();
  ASSERT_EQ(program.kernel_modules_size(), 1);  // not the undeclared unused.masm
  EXPECT_EQ(program.kernel_modules(0).path(), (dir / "kern" / "sys.masm").string());
  EXPECT_EQ(program.kernel_modules(0).digest(), SourceDigest(sys));
  v1::SnapshotProgram without = program;
  without.clear_kernel_modules();
  EXPECT_NE(SnapshotSourceDigest(program), SnapshotSourceDigest(without));

  fs::remove_all(dir);
  v1::ReplaySnapshot snapshot = RoundTrip(recording->snapshot);
  absl::StatusOr<vm::RunResult> replay = ReplayRun(snapshot);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->stack, recording->result.stack);
  EXPECT_EQ(replay->cycles, recording->result.cycles);

  // A kernel module must sit beside the kernel and match its digest.
  for (const std::string& path : {std::string("/etc/sys.masm"), options.kernel_path}) {
    v1::ReplaySnapshot moved = recording->snapshot;
    moved.mutable_program()->mutable_kernel_modules(0)->set_path(path);
    absl::StatusOr<v1::ReplaySnapshot> decoded = DecodeSnapshot(EncodeSnapshot(moved));
    ASSERT_FALSE(decoded.ok()) << path;
    EXPECT_THAT(decoded.status().message(), HasSubstr("kernel module")) << path;
  }
  v1::ReplaySnapshot tampered = recording->snapshot;
  tampered.mutable_program()->mutable_kernel_modules(0)->set_source("pub proc double\nend\n");
  EXPECT_FALSE(DecodeSnapshot(EncodeSnapshot(tampered)).ok());
  v1::ReplaySnapshot orphan = recording->snapshot;
  orphan.mutable_program()->clear_kernel();
  EXPECT_FALSE(DecodeSnapshot(EncodeSnapshot(orphan)).ok());
}

// Answers event 1234 with two advice-stack values, event 77 with a map entry and one value,
// and event 5 with nothing.
class TestHost : public vm::Host {
 public:
  absl::Status OnEvent(uint64_t event_id, uint64_t clk, const vm::Executor& executor,
                       vm::AdviceProvider& advice) override {
    (void)clk;
    (void)executor;
    ++calls;
    if (event_id == 1234) advice.PushFront({vm::Felt(10), vm::Felt(20)});
    if (event_id == 77) {
      advice.map.insert_or_assign(vm::Word{vm::Felt(1), vm::Felt(2), vm::Felt(3), vm::Felt(4)},
                                  std::vector<vm::Felt>{vm::Felt(500)});
      advice.PushFront({vm::Felt(3)});
    }
    return absl::OkStatus();
  }
  int calls = 0;
};

// 10 20 from event 1234, 3 from event 77, 500 from the map entry event 77 inserted.
constexpr char kEventProgram[] = R"(begin
  emit.1234
  adv_push.2
  emit.5
  emit.77
  adv_push.1
  push.1.2.3.4
  adv.push_mapval
  dropw
  adv_push.1
  add add add
  swap drop
end
)";

absl::StatusOr<Recording> RecordEvents() {
  TestHost host;
  RecordOptions options = ClassicRecord();
  options.host = &host;
  return RecordSource("events.masm", kEventProgram, vm::ProgramInputs{}, options);
}

TEST(SnapshotTest, HostAnswersAreRecordedAndReplayedFromTheLog) {
  absl::StatusOr<Recording> recording = RecordEvents();
  ASSERT_TRUE(recording.ok()) << recording.status();
  ASSERT_TRUE(recording->run_status.ok()) << recording->run_status;
  EXPECT_EQ(recording->result.stack[0], vm::Felt(533));
  const v1::ReplaySnapshot& s = recording->snapshot;
  ASSERT_EQ(s.events_size(), 3);  // adv.push_mapval is a system event: not logged
  EXPECT_EQ(s.events(0).event_id(), 1234u);
  EXPECT_EQ(s.events(0).advice_stack_pushed_size(), 2);
  EXPECT_EQ(s.events(1).event_id(), 5u);  // an empty answer still has its entry
  EXPECT_EQ(s.events(1).advice_stack_pushed_size(), 0);
  EXPECT_EQ(s.events(1).advice_map_inserted_size(), 0);
  EXPECT_EQ(s.events(2).event_id(), 77u);
  EXPECT_EQ(s.events(2).advice_map_inserted_size(), 1);
  EXPECT_LT(s.events(0).clk(), s.events(1).clk());

  v1::ReplaySnapshot snapshot = RoundTrip(s);
  absl::StatusOr<vm::RunResult> replay = ReplayRun(snapshot);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->stack, recording->result.stack);
  EXPECT_EQ(replay->cycles, recording->result.cycles);

  absl::StatusOr<ProfiledRun> profiled = ProfileReplay(snapshot, std::nullopt, StackMode::kNested);
  ASSERT_TRUE(profiled.ok()) << profiled.status();
  EXPECT_EQ(profiled->result.stack, recording->result.stack);
}

TEST(SnapshotTest, ReplaysPrintTheDebugPrintsOfTheLiveRunWhichAreNotLogged) {
  // The core library's debug prints are answered by the VM: never logged, so a replay with a
  // sink prints exactly what the recording run printed, and one without prints nothing.
  constexpr char kProgram[] = R"(begin
  push.7 mem_store.4
  emit.event("t::marker")
  push.2 push.0 emit.event("miden::core::debug::print_adv_stack") drop drop
  emit.event("miden::core::debug::print_mem_all")
  push.4 push.3 push.2 push.1 emit.event("miden::core::debug::print_adv_map_item") dropw
  emit.event("miden::core::debug::print_stack")
end
)";
  vm::ProgramInputs inputs;
  inputs.advice_stack = {vm::Felt(5), vm::Felt(6), vm::Felt(7)};
  inputs.advice_map = {
      {vm::Word{vm::Felt(1), vm::Felt(2), vm::Felt(3), vm::Felt(4)}, {vm::Felt(9)}}};
  RecordOptions options;
  options.dialect = vm::Dialect::kV0_25;
  std::ostringstream live;
  options.execution.debug_print = &live;
  ASSERT_OK_AND_ASSIGN(Recording recording, RecordSource("p.masm", kProgram, inputs, options));
  ASSERT_OK(recording.run_status);
  EXPECT_THAT(live.str(), HasSubstr("Advice stack state before step "));
  EXPECT_THAT(live.str(), HasSubstr("Advice map entry for key [1, 2, 3, 4] before step "));
  ASSERT_EQ(recording.snapshot.events_size(), 1);  // t::marker only

  const v1::ReplaySnapshot snapshot = RoundTrip(recording.snapshot);
  std::ostringstream replayed;
  ASSERT_OK_AND_ASSIGN(vm::RunResult replay,
                       ReplayRun(snapshot, std::nullopt, std::nullopt, &replayed));
  EXPECT_EQ(replay.cycles, recording.result.cycles);
  EXPECT_EQ(replayed.str(), live.str());
  std::ostringstream profiled;
  ASSERT_OK_AND_ASSIGN(ProfiledRun run, ProfileReplay(snapshot, std::nullopt, StackMode::kFlat,
                                                      nullptr, std::nullopt, &profiled));
  EXPECT_EQ(run.result.cycles, recording.result.cycles);
  EXPECT_EQ(profiled.str(), live.str());
  // Without a sink the same replay prints nothing and costs the same cycles.
  ASSERT_OK_AND_ASSIGN(vm::RunResult quiet, ReplayRun(snapshot));
  EXPECT_EQ(quiet.cycles, recording.result.cycles);
}

// Keccak-256 of c1 ec fd fc (Keccak KAT, Len = 32) through the v0.25 precompile event; the
// digest's 8 LE u32 limbs end on the stack, limbs 4..7 on top.
constexpr char kKeccakProgram[] = R"(begin
  push.4244499649 mem_store.8
  push.4 push.8 emit.event("miden::core::hash::keccak256::hash_bytes") drop drop
  padw adv_loadw padw adv_loadw
  movupw.3 dropw movupw.3 dropw
end
)";
constexpr uint64_t kKeccakEventId = 15409227627783267185ULL;

TEST(SnapshotTest, PrecompileAnswersAreLoggedAndReplayedWithoutRecomputing) {
  RecordOptions options;
  options.dialect = vm::Dialect::kV0_25;
  ASSERT_OK_AND_ASSIGN(Recording recording,
                       RecordSource("keccak.masm", kKeccakProgram, vm::ProgramInputs{}, options));
  ASSERT_OK(recording.run_status);
  EXPECT_EQ(recording.result.stack[4], vm::Felt(0x66e749b1));  // limb 0: bytes b1 49 e7 66
  ASSERT_EQ(recording.snapshot.events_size(), 1);
  const v1::SnapshotEvent& logged = recording.snapshot.events(0);
  EXPECT_EQ(logged.event_id(), kKeccakEventId);
  ASSERT_EQ(logged.advice_stack_pushed_size(), 8);
  EXPECT_EQ(logged.advice_stack_pushed(7), 0x66e749b1u);  // the back is popped first
  // The request a prover logs: the hashed bytes.
  ASSERT_TRUE(logged.has_precompile_calldata());
  EXPECT_EQ(logged.precompile_calldata(), std::string("\xc1\xec\xfd\xfc", 4));

  ASSERT_OK_AND_ASSIGN(vm::RunResult replayed, ReplayRun(RoundTrip(recording.snapshot)));
  EXPECT_EQ(replayed.stack, recording.result.stack);
  EXPECT_EQ(replayed.cycles, recording.result.cycles);

  // The replay takes the answer from the log: a changed log entry changes the result.
  v1::ReplaySnapshot edited = recording.snapshot;
  edited.mutable_events(0)->set_advice_stack_pushed(7, 12345);
  ASSERT_OK_AND_ASSIGN(replayed, ReplayRun(RoundTrip(edited)));
  EXPECT_EQ(replayed.stack[4], vm::Felt(12345));

  // A log without the entry: the VM computes the answer itself.
  v1::ReplaySnapshot without = recording.snapshot;
  without.clear_events();
  ASSERT_OK_AND_ASSIGN(replayed, ReplayRun(RoundTrip(without)));
  EXPECT_EQ(replayed.stack, recording.result.stack);
}

TEST(SnapshotTest, ExhaustedLogStopsTheReplayNamingCycleAndEvent) {
  absl::StatusOr<Recording> recording = RecordEvents();
  ASSERT_TRUE(recording.ok()) << recording.status();
  v1::ReplaySnapshot snapshot = recording->snapshot;
  const uint64_t clk = snapshot.events(2).clk();
  snapshot.mutable_events()->RemoveLast();
  absl::StatusOr<vm::RunResult> replay = ReplayRun(RoundTrip(snapshot));
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(replay.status().message(),
              HasSubstr(absl::StrCat("replay diverged at cycle ", clk, ": event 77")));
  EXPECT_THAT(replay.status().message(), HasSubstr("no entry"));
}

TEST(SnapshotTest, WrongEventIdStopsTheReplayNamingCycleAndEvent) {
  absl::StatusOr<Recording> recording = RecordEvents();
  ASSERT_TRUE(recording.ok()) << recording.status();
  v1::ReplaySnapshot snapshot = recording->snapshot;
  const uint64_t clk = snapshot.events(1).clk();
  snapshot.mutable_events(1)->set_event_id(6);
  absl::StatusOr<ProfiledRun> replay =
      ProfileReplay(RoundTrip(snapshot), std::nullopt, StackMode::kNested);
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(replay.status().message(),
              HasSubstr(absl::StrCat("replay diverged at cycle ", clk,
                                     ": event 5, but event log entry 1 is event 6")));
}

TEST(SnapshotTest, UnusedLogEntriesAreADivergence) {
  absl::StatusOr<Recording> recording = RecordEvents();
  ASSERT_TRUE(recording.ok()) << recording.status();
  v1::ReplaySnapshot snapshot = recording->snapshot;
  snapshot.add_events()->set_event_id(9);
  absl::StatusOr<vm::RunResult> replay = ReplayRun(RoundTrip(snapshot));
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(replay.status().message(), HasSubstr("event 9"));
  EXPECT_THAT(replay.status().message(),
              HasSubstr(absl::StrCat("at cycle ", recording->result.cycles)));
}

TEST(SnapshotTest, FailedRunStillYieldsASnapshotWithoutOutcome) {
  absl::StatusOr<Recording> recording = RecordSource(
      "fail.masm", "begin\n  emit.3\n  push.0 assert\nend\n", vm::ProgramInputs{}, ClassicRecord());
  ASSERT_TRUE(recording.ok()) << recording.status();
  EXPECT_FALSE(recording->run_status.ok());
  EXPECT_FALSE(recording->snapshot.has_outcome());
  EXPECT_EQ(recording->snapshot.events_size(), 1);
  absl::StatusOr<vm::RunResult> replay = ReplayRun(RoundTrip(recording->snapshot));
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().message(), recording->run_status.message());
}

TEST(SnapshotTest, DialectIsRecordedAndOldSnapshotsReplayAsTheClassicDialect) {
  ASSERT_OK_AND_ASSIGN(Recording recording,
                       RecordSource("d.masm", "begin\n  push.3 push.4 add swap drop\nend\n",
                                    vm::ProgramInputs{}, ClassicRecord()));
  ASSERT_OK(recording.run_status);
  EXPECT_EQ(recording.snapshot.program().dialect(), "v0.16");
  ASSERT_OK_AND_ASSIGN(vm::Dialect dialect, SnapshotDialect(RoundTrip(recording.snapshot)));
  EXPECT_EQ(dialect, vm::Dialect::kV0_16);

  // Unnamed, a recording is of the default dialect, and says so.
  ASSERT_OK_AND_ASSIGN(Recording current,
                       RecordSource("d.masm", "begin\n  push.3 push.4 add swap drop\nend\n",
                                    vm::ProgramInputs{}, RecordOptions{}));
  ASSERT_OK(current.run_status);
  EXPECT_EQ(current.snapshot.program().dialect(), "v0.25");
  EXPECT_NE(current.result.cycles, recording.result.cycles);  // the v0.25 entry prologue

  // A snapshot recorded before dialects were named has no dialect field: it is v0.16.
  v1::ReplaySnapshot unnamed = recording.snapshot;
  unnamed.mutable_program()->clear_dialect();
  ASSERT_OK_AND_ASSIGN(dialect, SnapshotDialect(RoundTrip(unnamed)));
  EXPECT_EQ(dialect, vm::kUnnamedLegacyDialect);
  ASSERT_OK_AND_ASSIGN(vm::RunResult replayed, ReplayRun(RoundTrip(unnamed)));
  EXPECT_EQ(replayed.cycles, recording.result.cycles);
  EXPECT_EQ(replayed.stack, recording.result.stack);

  // A dialect this build does not know is refused when the snapshot is decoded.
  v1::ReplaySnapshot future = recording.snapshot;
  future.mutable_program()->set_dialect("v9.0");
  EXPECT_THAT(DecodeSnapshot(EncodeSnapshot(future)),
              testutil::StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("program.dialect: unknown dialect 'v9.0'")));
}

TEST(SnapshotTest, MemoryBudgetIsRecordedAndReplayed) {
  // Writes 16 pages (512 KiB): fine under the default, over a 256 KiB budget.
  const char* source =
      "begin\n  push.0\n  repeat.16\n    push.7 dup.1 mem_store push.4096 add\n  end\n  "
      "drop\nend\n";
  RecordOptions options = ClassicRecord();
  options.execution.max_memory_bytes = 256 << 10;
  absl::StatusOr<Recording> recording =
      RecordSource("pages.masm", source, vm::ProgramInputs{}, options);
  ASSERT_TRUE(recording.ok()) << recording.status();
  EXPECT_EQ(recording->run_status.code(), absl::StatusCode::kResourceExhausted)
      << recording->run_status;
  ASSERT_TRUE(recording->snapshot.options().has_max_memory_bytes());
  EXPECT_EQ(recording->snapshot.options().max_memory_bytes(), 256u << 10);
  // The replay runs under the recorded budget, and fails the same way.
  absl::StatusOr<vm::RunResult> replay = ReplayRun(recording->snapshot);
  EXPECT_EQ(replay.status().code(), absl::StatusCode::kResourceExhausted) << replay.status();
  EXPECT_THAT(std::string(replay.status().message()), HasSubstr("memory budget of 262144 bytes"));
  // A budget given to the replay replaces the recorded one.
  EXPECT_TRUE(ReplayRun(recording->snapshot, std::nullopt, uint64_t{1} << 30).ok());
  // A snapshot from before the field replays with the default budget.
  v1::ReplaySnapshot old = recording->snapshot;
  old.mutable_options()->clear_max_memory_bytes();
  absl::StatusOr<ReplayPlan> plan = PrepareReplay(old);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->options.max_memory_bytes, vm::kDefaultMaxMemoryBytes);
  // A recorded budget above the default is not trusted without an override.
  old.mutable_options()->set_max_memory_bytes(uint64_t{1} << 40);
  plan = PrepareReplay(old);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->options.max_memory_bytes, vm::kDefaultMaxMemoryBytes);
}

TEST(SnapshotTest, AssemblyErrorsAreNotRecorded) {
  absl::StatusOr<Recording> recording =
      RecordSource("bad.masm", "begin\n  bogus\nend\n", vm::ProgramInputs{}, ClassicRecord());
  EXPECT_EQ(recording.status().code(), absl::StatusCode::kInvalidArgument);
}

std::string SmallSnapshotBytes() {
  absl::StatusOr<Recording> recording = RecordEvents();
  EXPECT_TRUE(recording.ok());
  return recording.ok() ? EncodeSnapshot(recording->snapshot) : std::string();
}

TEST(SnapshotTest, TruncationAtEveryOffsetIsACleanError) {
  const std::string bytes = SmallSnapshotBytes();
  ASSERT_GT(bytes.size(), kSnapshotHeaderBytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<v1::ReplaySnapshot> decoded = DecodeSnapshot(bytes.substr(0, n));
    ASSERT_FALSE(decoded.ok()) << n;
    EXPECT_THAT(decoded.status().message(), HasSubstr("truncated")) << n;
  }
  EXPECT_TRUE(DecodeSnapshot(bytes).ok());
}

TEST(SnapshotTest, EveryCorruptedByteIsACleanError) {
  const std::string bytes = SmallSnapshotBytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      EXPECT_FALSE(DecodeSnapshot(bad).ok()) << i;
    }
  }
  EXPECT_FALSE(DecodeSnapshot(bytes + "x").ok());
}

TEST(SnapshotTest, WrongMagicIsNotASnapshot) {
  std::string bytes = SmallSnapshotBytes();
  bytes[0] = 'G';
  absl::StatusOr<v1::ReplaySnapshot> decoded = DecodeSnapshot(bytes);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(decoded.status().message(), HasSubstr("not a flamefleet snapshot"));
  EXPECT_THAT(DecodeSnapshot("begin push.1 end").status().message(),
              HasSubstr("not a flamefleet snapshot"));
}

TEST(SnapshotTest, FutureVersionAsksForAnUpgrade) {
  std::string bytes = SmallSnapshotBytes();
  bytes[8] = static_cast<char>(kSnapshotFormatVersion + 1);
  absl::StatusOr<v1::ReplaySnapshot> decoded = DecodeSnapshot(bytes.substr(0, 12));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      decoded.status().message(),
      HasSubstr(absl::StrCat("snapshot format version ", kSnapshotFormatVersion + 1, " is newer")));
  EXPECT_EQ(DecodeSnapshot(bytes).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SnapshotTest, InvalidPayloadFieldsAreNamed) {
  absl::StatusOr<Recording> recording = RecordEvents();
  ASSERT_TRUE(recording.ok());
  {
    v1::ReplaySnapshot s = recording->snapshot;
    s.mutable_inputs()->add_stack(vm::Felt::kModulus);
    absl::StatusOr<v1::ReplaySnapshot> d = DecodeSnapshot(EncodeSnapshot(s));
    EXPECT_THAT(d.status().message(), HasSubstr("inputs.stack[0]"));
  }
  {
    v1::ReplaySnapshot s = recording->snapshot;
    s.mutable_program()->set_source("begin push.2 end");
    absl::StatusOr<v1::ReplaySnapshot> d = DecodeSnapshot(EncodeSnapshot(s));
    EXPECT_THAT(d.status().message(), HasSubstr("does not match its digest"));
  }
  {
    v1::ReplaySnapshot s = recording->snapshot;
    s.mutable_events(2)->mutable_advice_map_inserted(0)->mutable_key()->add_elements(1);
    absl::StatusOr<v1::ReplaySnapshot> d = DecodeSnapshot(EncodeSnapshot(s));
    EXPECT_THAT(d.status().message(), HasSubstr("events[2].advice_map_inserted[0].key"));
  }
  {
    v1::ReplaySnapshot s = recording->snapshot;
    v1::SnapshotLibrary* lib = s.mutable_program()->add_libraries();
    lib->set_namespace_("evil");
    lib->set_dir("/etc");
    v1::SnapshotModule* m = lib->add_modules();
    m->set_path("../passwd");
    m->set_digest(SourceDigest(""));
    absl::StatusOr<v1::ReplaySnapshot> d = DecodeSnapshot(EncodeSnapshot(s));
    EXPECT_THAT(d.status().message(), HasSubstr("invalid module path"));
  }
  EXPECT_THAT(DecodeSnapshotPayload("\xff\xff\xff").status().message(),
              HasSubstr("snapshot is corrupted"));
}

TEST(SnapshotTest, FilesAreWrittenAtomicallyAndLoadBack) {
  const fs::path dir = fs::path(::testing::TempDir()) / "snapshot_files";
  fs::remove_all(dir);
  fs::create_directories(dir);
  absl::StatusOr<Recording> recording = RecordEvents();
  ASSERT_TRUE(recording.ok());
  const std::string path = (dir / "run.snap").string();
  ASSERT_TRUE(WriteSnapshotFile(path, recording->snapshot).ok());
  ASSERT_TRUE(WriteSnapshotFile(path, recording->snapshot).ok());  // replaces
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  absl::StatusOr<v1::ReplaySnapshot> loaded = LoadSnapshotFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->SerializeAsString(), RoundTrip(recording->snapshot).SerializeAsString());
  EXPECT_EQ(LoadSnapshotFile((dir / "missing.snap").string()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(
      WriteSnapshotFile((dir / "no" / "such" / "dir.snap").string(), recording->snapshot).ok());
  std::ofstream(dir / "short.snap") << "FFSNAP";
  EXPECT_THAT(LoadSnapshotFile((dir / "short.snap").string()).status().message(),
              HasSubstr("short.snap: snapshot is truncated"));
}

}  // namespace
}  // namespace flamefleet::runner
