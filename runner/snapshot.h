// Replay snapshots: record one execution of a MASM program once, replay it anywhere.
//
// A snapshot (flamefleet.v1.ReplaySnapshot, proto/flamefleet/v1/snapshot.proto, which also
// documents the file layout) holds the entry source and exactly the library modules the
// assembler loaded, the stack and advice inputs, the execution options and the event log: one
// entry per non-system `emit`, with the advice mutations the live host made. Replaying
// assembles the program from the embedded sources (nothing is read from the disk) and answers
// every event from the log, in order; a program that emits an event the log does not have
// stops with an error naming the cycle and the event.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(Recording rec,
//       RecordFile("prog.masm", inputs, RecordOptions{.libraries = {{"std", "stdlib"}}}));
//   FLAMEFLEET_RETURN_IF_ERROR(WriteSnapshotFile("run.snap", rec.snapshot));
//   FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snap, LoadSnapshotFile("run.snap"));
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::RunResult result, ReplayRun(snap));
//
// This library depends on the VM and the generated snapshot messages only (no gRPC, no
// profile), so that the decoder also builds in the libFuzzer configuration. All functions are
// thread-safe; the hosts are not (one per run).
#ifndef FLAMEFLEET_RUNNER_SNAPSHOT_H_
#define FLAMEFLEET_RUNNER_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flamefleet/v1/snapshot.pb.h"
#include "vm/vm.h"

namespace flamefleet::runner {

// The snapshot format version this build writes and the newest it reads.
inline constexpr uint32_t kSnapshotFormatVersion = 1;
// The 8 magic bytes that start every snapshot file.
inline constexpr char kSnapshotMagic[8] = {'F', 'F', 'S', 'N', 'A', 'P', '\0', '\x01'};
// Header size: magic, u32 version, u64 payload length, 8-byte checksum.
inline constexpr size_t kSnapshotHeaderBytes = 28;
// The largest snapshot accepted (file or bytes): 1 GiB.
inline constexpr uint64_t kMaxSnapshotBytes = uint64_t{1} << 30;

// Returns "blake3:" followed by the 64 lowercase hex digits of BLAKE3(`text`).
std::string SourceDigest(absl::string_view text);

// Returns a digest of a snapshot's program sources: the entry source and every module, by
// namespace, path and content ("blake3:<hex>"). Two snapshots of the same code have the same
// digest. (The coordinator's job identity is another digest, JobProgramDigest.)
std::string SnapshotSourceDigest(const v1::SnapshotProgram& program);

// Records the advice mutations of every non-system event. Wraps the live host `live` (may be
// null: then every answer is empty, and the log still gets one entry per event); `live` is
// kept and must outlive this host. Mutations that cannot be replayed (the host popped or
// changed existing advice-stack values, or removed map entries) trap the run with
// Unimplemented. Not thread-safe.
class RecordingHost : public vm::Host {
 public:
  explicit RecordingHost(vm::Host* live) : live_(live) {}

  absl::Status OnEvent(uint64_t event_id, uint64_t clk, const vm::Executor& executor,
                       vm::AdviceProvider& advice) override;
  // Precompiles the VM computes are logged like any host answer (their advice-stack pushes),
  // so that a replay answers them from the log; the live host may still answer them itself.
  bool AnswersPrecompile(uint64_t event_id) const override;
  absl::Status OnPrecompileAnswered(uint64_t event_id, uint64_t clk,
                                    std::span<const vm::Felt> pushed,
                                    const vm::PrecompileRequest* request) override;

  // Returns the events recorded so far, in execution order.
  const std::vector<v1::SnapshotEvent>& events() const { return events_; }
  // Moves the recorded events out.
  std::vector<v1::SnapshotEvent> TakeEvents() { return std::move(events_); }

 private:
  vm::Host* live_;
  std::vector<v1::SnapshotEvent> events_;
};

// Answers every event from a snapshot's log, in order, never from a live host. The snapshot
// is kept by pointer (not null) and must outlive the host. OnEvent fails with
// FailedPrecondition "replay diverged at cycle C: event E ..." when the log is exhausted or
// its next entry is for another event id; the executor turns that into a trap at that cycle.
// Not thread-safe.
class ReplayHost : public vm::Host {
 public:
  explicit ReplayHost(const v1::ReplaySnapshot* snapshot);

  absl::Status OnEvent(uint64_t event_id, uint64_t clk, const vm::Executor& executor,
                       vm::AdviceProvider& advice) override;
  // True when the log's next entry is for `event_id`: the precompile is answered from the log
  // (no crypto, no memory read); otherwise the VM computes it.
  bool AnswersPrecompile(uint64_t event_id) const override;

  // Returns OK if every logged event was consumed; else FailedPrecondition naming the final
  // cycle `clk` and the first event left over.
  absl::Status CheckFinished(uint64_t clk) const;
  // Number of log entries consumed so far.
  size_t consumed() const { return next_; }

 private:
  const v1::ReplaySnapshot* snapshot_;
  size_t next_ = 0;
};

struct RecordOptions {
  // Library namespaces (namespace, directory), as AssemblerOptions::libraries. Trailing '/'
  // of a directory is ignored.
  std::vector<std::pair<std::string, std::string>> libraries;
  // Kernel module file (AssemblerOptions::kernel_path); empty: none. Its source is recorded.
  std::string kernel_path;
  // The dialect the program is assembled under; recorded, and replayed under.
  vm::Dialect dialect = vm::kDefaultDialect;
  vm::ExecutionOptions execution;  // max_memory_bytes is recorded and replayed
  vm::AssembleLimits assemble;
  // The live host whose answers are recorded; may be null; not kept after the call.
  vm::Host* host = nullptr;
};

struct Recording {
  // The complete snapshot, with `outcome` set when the run succeeded. It is written even when
  // the run failed (its log then ends at the failure), like miden-debug does.
  v1::ReplaySnapshot snapshot;
  // The run's own status: OK, or the trap of the program (see vm::RunProgram).
  absl::Status run_status;
  // The final stack and cycles when run_status is OK.
  vm::RunResult result;
};

// Assembles the program in file `path` (libraries from the disk), runs it with `inputs` and a
// RecordingHost around options.host, and returns the snapshot. Returns the assembler's error
// (InvalidArgument, NotFound) when the program does not assemble; a failing run is not an
// error of this function (see Recording::run_status).
absl::StatusOr<Recording> RecordFile(const std::string& path, const vm::ProgramInputs& inputs,
                                     const RecordOptions& options);

// As RecordFile, for a program given as text; `name` names it in locations.
absl::StatusOr<Recording> RecordSource(absl::string_view name, absl::string_view text,
                                       const vm::ProgramInputs& inputs,
                                       const RecordOptions& options);

// Returns the file bytes of `snapshot` (header + payload, see snapshot.proto). The format
// version written is kSnapshotFormatVersion, whatever snapshot.format_version says.
std::string EncodeSnapshot(const v1::ReplaySnapshot& snapshot);

// Decodes and validates file bytes. Never crashes on any input. Returns InvalidArgument with
// a message starting "not a flamefleet snapshot" (wrong magic), "snapshot is truncated",
// "snapshot is corrupted" (checksum, unparsable payload, a module whose digest does not
// match), "snapshot format version N is newer ..." (FailedPrecondition), or naming the bad
// field ("inputs.stack[3]: 18446744069414584321 is not a field element").
absl::StatusOr<v1::ReplaySnapshot> DecodeSnapshot(absl::string_view bytes);

// Parses and validates a payload (a serialized ReplaySnapshot without the header). Errors as
// DecodeSnapshot. Exposed for the fuzzer, which cannot forge checksums.
absl::StatusOr<v1::ReplaySnapshot> DecodeSnapshotPayload(absl::string_view payload);

// Writes `snapshot` to `path` atomically: a temporary file beside it, fsync, rename. Returns
// InvalidArgument (with the path and errno text) when it cannot be written.
absl::Status WriteSnapshotFile(const std::string& path, const v1::ReplaySnapshot& snapshot);

// Reads and decodes the snapshot file at `path`. NotFound if it does not exist; errors of
// DecodeSnapshot prefixed with the path; InvalidArgument for files over kMaxSnapshotBytes.
absl::StatusOr<v1::ReplaySnapshot> LoadSnapshotFile(const std::string& path);

// What a replay runs: the program assembled from the snapshot's sources, its inputs and
// options.
struct ReplayPlan {
  vm::Program program;
  vm::ProgramInputs inputs;
  vm::ExecutionOptions options;
};

// Assembles the snapshot's program from its embedded sources only (AssemblerOptions::read_disk
// is false) and converts its inputs and options. `max_cycles`, when set, replaces the
// recorded cycle cap; `max_memory_bytes`, when set, the recorded memory budget. Otherwise the
// recorded budget is used up to vm::kDefaultMaxMemoryBytes (the snapshot may be hostile), and
// a snapshot without one replays with the default. Returns the assembler's errors.
// `snapshot` must have been validated by DecodeSnapshot (or come from Record*).
// Returns the dialect `snapshot` was recorded under: its program's `dialect`, or
// vm::kUnnamedLegacyDialect (v0.16) for a snapshot recorded before dialects were named.
// InvalidArgument ("snapshot: program.dialect: unknown dialect ...") for a name this build does
// not know (DecodeSnapshot rejects those too).
absl::StatusOr<vm::Dialect> SnapshotDialect(const v1::ReplaySnapshot& snapshot);

absl::StatusOr<ReplayPlan> PrepareReplay(const v1::ReplaySnapshot& snapshot,
                                         std::optional<uint64_t> max_cycles = std::nullopt,
                                         std::optional<uint64_t> max_memory_bytes = std::nullopt);

// Replays `snapshot` to the end and returns its final stack and cycles. Errors: those of
// PrepareReplay and vm::RunProgram, including divergence (see ReplayHost; InvalidArgument,
// whose message names the cycle and the event), and FailedPrecondition when the program
// finished with logged events left over. `debug_print` (may be null; not kept) is
// vm::ExecutionOptions::debug_print of the replay: the debug prints are answered by the VM,
// never logged, so a replay prints what the live run printed.
absl::StatusOr<vm::RunResult> ReplayRun(const v1::ReplaySnapshot& snapshot,
                                        std::optional<uint64_t> max_cycles = std::nullopt,
                                        std::optional<uint64_t> max_memory_bytes = std::nullopt,
                                        std::ostream* debug_print = nullptr);

}  // namespace flamefleet::runner

#endif  // FLAMEFLEET_RUNNER_SNAPSHOT_H_
