// Per-job accounting beside the flamegraph: calls, self and inclusive cycles per procedure,
// executions and cycles per MASM instruction and per native operation, phases between named
// markers, and the program's MAST size; and `summary.json`, the machine-readable summary of a
// job (schema "flamefleet.summary/1", docs/summary.md). The fleet's worker can build the same
// summary from the same run.
//
//   StatsOptions stats{.phases = {{"prologue_start", "prologue_end"}},
//                      .marker_prefixes = {"myapp::phase::"}};
//   FLAMEFLEET_ASSIGN_OR_RETURN(StatsRun run,
//       ProfileProgramWithStats(program, inputs, vm::ExecutionOptions{}, stats));
//   std::string json = SummaryJson({.job = "fib", .program = &program, .inputs = &inputs,
//                                   .run = &run});
//
// Every table adds up: the procedures' self cycles, the instructions' cycles and the
// operations' cycles each sum to run.result.cycles.
#ifndef FLAMEFLEET_RUNNER_RUN_STATS_H_
#define FLAMEFLEET_RUNNER_RUN_STATS_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "profile/profile.h"
#include "vm/vm.h"

namespace flamefleet::runner {

// `--phase START=END`: the spans from a START marker to the next END marker (nested pairs
// match innermost first), named "START..END".
struct PhasePair {
  std::string start;
  std::string end;
};

// Parses "START=END" (both non-empty). InvalidArgument otherwise.
absl::StatusOr<PhasePair> ParsePhasePair(absl::string_view flag);

struct StatsOptions {
  // Count executions per row (instructions and operations). Off: the executor's uncounted loop.
  bool count_instructions = true;
  // Explicit phases; their START and END events become markers.
  std::vector<PhasePair> phases;
  // Every event whose name starts with one of these is a marker: a phase named after it runs
  // from it to the next such marker (or the end of the run).
  std::vector<std::string> marker_prefixes;
  // Count the trace shape (rows per chiplet, range checker, padded heights) and attribute it to
  // procedures (docs/trace-shape.md). Only for dialects with TraceShapeRules (v0.25); ignored
  // otherwise.
  bool trace_shape = false;
};

// The row kinds a procedure's trace-shape cost is reported in, and a profile weighted by
// (`top --by KIND`, `profile --weight KIND`).
enum class TraceKind : uint8_t { kHasher, kBitwise, kMemory, kAce, kRange, kChiplets };
inline constexpr size_t kNumTraceKinds = 6;
inline constexpr TraceKind kAllTraceKinds[kNumTraceKinds] = {
    TraceKind::kHasher, TraceKind::kBitwise, TraceKind::kMemory,
    TraceKind::kAce,    TraceKind::kRange,   TraceKind::kChiplets};

// Returns "hasher", "bitwise", "memory", "ace", "range" or "chiplets".
absl::string_view TraceKindName(TraceKind kind);
// Parses a TraceKindName. InvalidArgument listing the kinds otherwise.
absl::StatusOr<TraceKind> ParseTraceKind(absl::string_view name);
// Returns the rows of `kind` in `counts` (chiplets: hasher + bitwise + memory + ACE).
uint64_t TraceKindRows(const vm::TraceShapeCounts& counts, TraceKind kind,
                       const vm::TraceShapeRules& rules);

// A procedure's trace-shape rows (docs/trace-shape.md: local rows where they are requested,
// a new hasher state to its first requester, range rows by marginal first insertion).
struct ProcedureTraceShape {
  std::string name;
  std::array<uint64_t, kNumTraceKinds> self{};       // by TraceKind
  std::array<uint64_t, kNumTraceKinds> inclusive{};  // recursion counted once
  uint64_t hasher_requests = 0;                      // self
  uint64_t hasher_dedup_hits = 0;                    // self: requests of a state seen before
};

struct TraceShapeStats {
  const vm::TraceShapeRules* rules = nullptr;  // the dialect's (never null once built)
  vm::TraceShape totals;                       // its buckets are `nodes`
  // The rows no procedure is charged for, by TraceKind: the range table of {0, 65535}, the
  // hasher's controller padding, the chiplets' padding row and the kernel ROM.
  std::array<uint64_t, kNumTraceKinds> overhead{};
  // By name, in the order of RunStats::procedures; self rows plus `overhead` sum to the totals.
  std::vector<ProcedureTraceShape> procedures;
  // By node of StatsRun::profile: what each call-tree node requested.
  std::vector<vm::TraceShapeCounts> nodes;

  // Returns the total rows of `kind` (the chiplets total includes its overhead).
  uint64_t Total(TraceKind kind) const;
};

// Rows by TraceKind.
using TraceRows = std::array<uint64_t, kNumTraceKinds>;

// Returns the trace-shape rules of the dialect named `dialect` ("v0.25"). InvalidArgument
// "trace_shape: ..." when the dialect is unknown or has no rules (v0.16: not modelled).
absl::StatusOr<const vm::TraceShapeRules*> TraceShapeRulesOf(absl::string_view dialect);

// Parses a vm::TraceBoundName ("core", "range", "chiplets"). InvalidArgument otherwise.
absl::StatusOr<vm::TraceBound> ParseTraceBound(absl::string_view name);

// Checks `shape` as something a finished run of `cycles` cycles can have produced, by the rules
// of docs/trace-shape.md and `*shape.rules` (must not be null; `shape.nodes` and the buckets of
// `shape.totals` are not looked at): core_rows = cycles + the HALT row; the hasher's controller
// rows, padding (to the controller alignment), permutation rows and their sum from its requests
// and distinct states (states <= requests); bitwise rows a multiple of the rows per operation;
// the chiplets total; both heights max(min_trace_len, next_pow2(...)); padded_len the larger;
// `bound` the trace that sets it; and every procedure (CheckTraceAttribution, plus its hasher
// rows from its requests and de-duplication hits, its chiplets rows the sum of its hasher,
// bitwise, memory and ACE rows, and the procedures' requests and new states within the totals).
// Returns InvalidArgument "FIELD: problem", FIELD a path of summary.json
// ("trace_shape.padded_len", "procedures[3].trace.self.hasher"), for the first inconsistency or a
// sum that overflows 64 bits. The one check of a job's trace shape: the wire decoder
// (DecodeJobSummary) and the CLI's summary.json reader both call it. Pure; thread-safe.
absl::Status CheckTraceShape(const TraceShapeStats& shape, uint64_t cycles);

// Checks the attribution of `totals` rows (by kind) to `procedures`: each procedure's self rows
// at most its inclusive rows, its inclusive rows at most the total, and per kind the procedures'
// self rows plus `overhead` equal to the total. `totals_field` names the totals in errors
// ("trace_shape"); procedures are named "procedures[I].trace...". InvalidArgument otherwise (also
// for a sum that overflows). Used for a job's trace shape and for a batch's trace totals.
absl::Status CheckTraceAttribution(const TraceRows& totals, const TraceRows& overhead,
                                   const std::vector<ProcedureTraceShape>& procedures,
                                   absl::string_view totals_field);

// The name of the pseudo-frame that holds a weighted profile's overhead rows.
inline constexpr absl::string_view kTraceOverheadFrame = "[trace overhead]";

// Returns `cycles` (the run's profile, StatsRun::profile) with every node's self weight
// replaced by its rows of `kind`, plus a root child kTraceOverheadFrame for the overhead: its
// total is shape.Total(kind).
profile::Profile TraceWeightedProfile(const profile::Profile& cycles, const TraceShapeStats& shape,
                                      TraceKind kind);

struct ProcedureStats {
  std::string name;
  uint64_t calls = 0;      // entries of its frame
  uint64_t self = 0;       // cycles in which it was the innermost frame
  uint64_t inclusive = 0;  // cycles in which it was on the stack (recursion counted once)
};

// A MASM instruction (by mnemonic) or a native operation (by name).
struct InstructionStats {
  std::string name;
  uint64_t count = 0;   // executions
  uint64_t cycles = 0;  // rows it ran
};

struct PhaseStats {
  std::string name;
  uint64_t count = 0;  // spans
  uint64_t total = 0;  // cycles of all spans
  uint64_t min = 0;
  uint64_t max = 0;
  bool open = false;  // a span was still open when the run ended (closed at the last cycle)
};

struct MastSize {
  uint64_t nodes = 0;            // MAST nodes of the forest as assembled
  uint64_t basic_block_ops = 0;  // operations in its basic blocks (padding NOOPs excluded)
};

struct RunStats {
  std::vector<ProcedureStats> procedures;      // by inclusive cycles, descending
  std::vector<InstructionStats> instructions;  // by cycles, descending (empty: not counted)
  std::vector<InstructionStats> operations;    // by cycles, descending (empty: not counted)
  std::vector<PhaseStats> phases;  // explicit pairs in flag order, then markers in first order
  MastSize mast;
  // With StatsOptions::trace_shape, for a dialect that has it and a run that finished.
  std::optional<TraceShapeStats> trace_shape;
};

struct StatsRun {
  // The program's own outcome: OK or the error vm::RunProgram returns (a trap, the cycle cap).
  absl::Status status;
  // The final stack (top 16, top first) and cycles; after an error, those at the trap.
  vm::RunResult result;
  profile::Profile profile;  // nested call stacks (StackMode::kNested)
  RunStats stats;
};

// Runs `program` like ProfileProgram (StackMode::kNested) and also collects `stats`. Markers
// named by `stats` are accepted as events with no other effect; other events go to `host` (may
// be null; not kept). An error of the program itself is returned in StatsRun::status with the
// numbers up to the trap; the call fails only for bad inputs or options (InvalidArgument) or
// `cancel` (Cancelled; polled as in ProfileProgram).
absl::StatusOr<StatsRun> ProfileProgramWithStats(const vm::Program& program,
                                                 const vm::ProgramInputs& inputs,
                                                 const vm::ExecutionOptions& options,
                                                 const StatsOptions& stats,
                                                 const std::atomic<bool>* cancel = nullptr,
                                                 vm::Host* host = nullptr);

// Returns the id of the event `name`: a decimal number is the id itself (v0.16 `emit.N`), any
// other name hashes as `event("name")` does (the low felt of BLAKE3(name)).
uint64_t EventIdOfName(absl::string_view name);

// Returns "0x" and the 64 hex digits of the program's MAST root (its entry procedure's digest,
// element 0 first, each element as 8 little-endian bytes, as miden prints program hashes).
std::string ProgramDigest(const vm::Program& program);

// Returns "blake3:<hex>" of the inputs in a canonical byte form (operand stack, advice stack,
// advice map in file order, Merkle store sources; docs/summary.md).
std::string InputsDigest(const vm::ProgramInputs& inputs);

// What summary.json describes; the pointers must be valid for the call.
struct SummaryInput {
  std::string job;  // the job's name
  const vm::Program* program = nullptr;
  const vm::ProgramInputs* inputs = nullptr;
  const StatsRun* run = nullptr;
};

// Returns summary.json (schema "flamefleet.summary/1", docs/summary.schema.json), pretty-printed
// with a trailing newline. The writer is runner/summary.h's (one for local and fleet jobs).
std::string SummaryJson(const SummaryInput& summary);

}  // namespace flamefleet::runner

#endif  // FLAMEFLEET_RUNNER_RUN_STATS_H_
