// Runs one MASM program in the VM and records its cycle profile: every VM cycle charged to the
// procedure call stack live in that cycle. This is what a worker does for one task, and what
// `flamefleet profile` does locally.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(ProfiledRun run,
//       ProfileProgram(program, inputs, vm::ExecutionOptions{}, StackMode::kNested));
//   run.result.cycles == run.profile.total();   // every cycle is in the profile
#ifndef FLAMEFLEET_RUNNER_PROFILE_RUN_H_
#define FLAMEFLEET_RUNNER_PROFILE_RUN_H_

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "profile/profile.h"
#include "runner/snapshot.h"
#include "vm/vm.h"

namespace flamefleet::runner {

enum class StackMode : uint8_t {
  // The real procedure stack: $exec::$main;foo;bar (procedures inlined into a caller's basic
  // block still get their own frame).
  kNested,
  // miden-debug compatible: one frame per cycle, the procedure of the executing operation;
  // control rows (SPAN, END, JOIN, ...) keep the procedure of the operation before them.
  kFlat,
};

// Builds a Profile from the executor's frame changes. Each cycle costs nothing: cycles are
// charged in bulk at every frame change (clk deltas), and every entry of a procedure (exec,
// call, syscall, dynexec, dyncall, an inlined procedure) is counted. Not thread-safe; one per run.
class CycleRecorder final : public vm::CallStackObserver {
 public:
  // `profile` is kept and must outlive the recorder; `program` names the procedures.
  CycleRecorder(const vm::Program& program, profile::Profile* profile);

  void OnEnter(uint32_t procedure, uint64_t clk) override;
  void OnResume(uint32_t procedure, uint64_t clk) override;
  void OnLeave(uint64_t clk) override;
  // Charges the cycles up to `clk` (the total) to the current stack. Call once at the end.
  void Finish(uint64_t clk);
  // Keeps `shape`'s bucket on the current call-tree node (a Profile node id) from now on; null
  // stops. `shape` is kept and must outlive the recorder.
  void set_trace_shape(vm::TraceShapeRecorder* shape) {
    shape_ = shape;
    if (shape_ != nullptr) shape_->set_bucket(path_.back());
  }
  // How many times each procedure (by Program::procedures id) was called: frame entries
  // (OnEnter), not resumptions of an inlined execution after its block's RESPAN (OnResume).
  const std::vector<uint64_t>& calls() const { return calls_; }

 private:
  profile::Profile::FrameId Frame(uint32_t procedure);
  void Charge(uint64_t clk);
  // Makes `procedure` the innermost frame at `clk` (OnEnter and OnResume).
  void Push(uint32_t procedure, uint64_t clk);
  // Returns the child of `parent` for `procedure`, through a small direct-mapped cache so that
  // the hot call/return pairs of a loop skip the profile's hash lookup.
  profile::Profile::NodeId ChildOf(profile::Profile::NodeId parent, uint32_t procedure);

  struct CacheEntry {
    profile::Profile::NodeId parent = ~0u;
    uint32_t procedure = ~0u;
    profile::Profile::NodeId child = 0;
  };
  static constexpr size_t kCacheSize = 1024;

  const vm::Program& program_;
  profile::Profile* profile_;
  std::vector<profile::Profile::FrameId> frames_;  // by procedure id, kNoFrame until used
  std::vector<profile::Profile::NodeId> path_;     // current node path, root first
  std::vector<CacheEntry> cache_;
  std::vector<uint64_t> calls_;  // by procedure id
  uint64_t last_clk_ = 0;
  vm::TraceShapeRecorder* shape_ = nullptr;
};

struct ProfiledRun {
  vm::RunResult result;
  profile::Profile profile;
};

// Runs `program` with `inputs` and returns its final stack, cycle count and profile. Errors are
// those of vm::RunProgram (a trap names the cycle, the instruction and the call stack). If
// `cancel` is not null it is polled between slices of about a million cycles (a few ms) and,
// once true, the run stops with Cancelled ("stopped after N cycles"); it is not kept after the
// call and may be set from another thread. `host` (may be null) answers the program's
// non-system events; it is not kept after the call.
absl::StatusOr<ProfiledRun> ProfileProgram(const vm::Program& program,
                                           const vm::ProgramInputs& inputs,
                                           const vm::ExecutionOptions& options, StackMode mode,
                                           const std::atomic<bool>* cancel = nullptr,
                                           vm::Host* host = nullptr);

// Replays `snapshot` (validated by DecodeSnapshot, or recorded) and profiles it: the program
// is assembled from the embedded sources and every event is answered from the log
// (runner/snapshot.h). `max_cycles` and `max_memory_bytes`, when set, replace the recorded
// cycle cap and memory budget; `debug_print` (may be null; not kept) is the replay's
// vm::ExecutionOptions::debug_print (see ReplayRun). Errors: those of PrepareReplay and
// ProfileProgram, divergence (the message names the cycle and the event), FailedPrecondition
// when logged events are left over at the end.
absl::StatusOr<ProfiledRun> ProfileReplay(const v1::ReplaySnapshot& snapshot,
                                          std::optional<uint64_t> max_cycles, StackMode mode,
                                          const std::atomic<bool>* cancel = nullptr,
                                          std::optional<uint64_t> max_memory_bytes = std::nullopt,
                                          std::ostream* debug_print = nullptr);

}  // namespace flamefleet::runner

#endif  // FLAMEFLEET_RUNNER_PROFILE_RUN_H_
