#include "runner/profile_run.h"

#include <atomic>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "runner/internal/execution.h"

namespace flamefleet::runner {
namespace {

using internal::CancelledAt;
using internal::kCancelSlice;

constexpr profile::Profile::FrameId kNoFrame = ~profile::Profile::FrameId{0};

bool Cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

}  // namespace

CycleRecorder::CycleRecorder(const vm::Program& program, profile::Profile* profile)
    : program_(program),
      profile_(profile),
      frames_(program.procedures.size(), kNoFrame),
      cache_(kCacheSize),
      calls_(program.procedures.size(), 0) {
  path_.reserve(64);
  path_.push_back(profile::Profile::kRoot);
}

profile::Profile::FrameId CycleRecorder::Frame(uint32_t procedure) {
  profile::Profile::FrameId& f = frames_[procedure];
  if (f == kNoFrame) f = profile_->InternFrame(program_.procedures[procedure].name);
  return f;
}

void CycleRecorder::Charge(uint64_t clk) {
  if (clk > last_clk_) {
    profile_->AddSelf(path_.back(), clk - last_clk_);
    last_clk_ = clk;
  }
}

profile::Profile::NodeId CycleRecorder::ChildOf(profile::Profile::NodeId parent,
                                                uint32_t procedure) {
  CacheEntry& e = cache_[(parent * 0x9E3779B1u ^ procedure * 0x85EBCA77u) & (kCacheSize - 1)];
  if (e.parent == parent && e.procedure == procedure) return e.child;
  e.parent = parent;
  e.procedure = procedure;
  e.child = profile_->Child(parent, Frame(procedure));
  return e.child;
}

void CycleRecorder::Push(uint32_t procedure, uint64_t clk) {
  Charge(clk);
  path_.push_back(ChildOf(path_.back(), procedure));
  if (shape_ != nullptr) shape_->set_bucket(path_.back());
}

void CycleRecorder::OnEnter(uint32_t procedure, uint64_t clk) {
  ++calls_[procedure];
  Push(procedure, clk);
}

void CycleRecorder::OnResume(uint32_t procedure, uint64_t clk) { Push(procedure, clk); }

void CycleRecorder::OnLeave(uint64_t clk) {
  Charge(clk);
  if (path_.size() > 1) path_.pop_back();
  if (shape_ != nullptr) shape_->set_bucket(path_.back());
}

void CycleRecorder::Finish(uint64_t clk) { Charge(clk); }

namespace {

bool IsControlRow(vm::Opcode op) { return vm::IsControl(op); }

absl::StatusOr<ProfiledRun> ProfileFlat(const vm::Program& program, const vm::ProgramInputs& inputs,
                                        const vm::ExecutionOptions& options,
                                        const std::atomic<bool>* cancel, vm::Host* host) {
  FLAMEFLEET_ASSIGN_OR_RETURN(internal::ExecutionSetup setup,
                              internal::PrepareExecution(program, inputs, options));
  vm::Executor exec(program, inputs.stack, std::move(setup.advice), setup.options, host);
  ProfiledRun run;
  std::vector<profile::Profile::NodeId> node_of(program.procedures.size(),
                                                profile::Profile::kNoNode);
  auto node_for = [&](uint32_t procedure) {
    profile::Profile::NodeId& n = node_of[procedure];
    if (n == profile::Profile::kNoNode) {
      n = run.profile.Child(profile::Profile::kRoot,
                            run.profile.InternFrame(program.procedures[procedure].name));
    }
    return n;
  };
  profile::Profile::NodeId current = profile::Profile::kNoNode;
  uint64_t steps = 0;
  while (exec.state() == vm::Executor::State::kPaused) {
    if ((++steps & (kCancelSlice - 1)) == 0 && Cancelled(cancel)) return CancelledAt(exec.clk());
    uint64_t before = exec.clk();
    exec.Step();
    if (exec.clk() == before) continue;
    vm::Opcode op = program.code[exec.last_row()].opcode;
    if (current == profile::Profile::kNoNode || !IsControlRow(op)) {
      current = exec.frames().empty() ? profile::Profile::kRoot : node_for(exec.frames().back());
    }
    run.profile.AddSelf(current, 1);
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(run.result, vm::FinishRun(exec));
  return run;
}

}  // namespace

absl::StatusOr<ProfiledRun> ProfileProgram(const vm::Program& program,
                                           const vm::ProgramInputs& inputs,
                                           const vm::ExecutionOptions& options, StackMode mode,
                                           const std::atomic<bool>* cancel, vm::Host* host) {
  if (mode == StackMode::kFlat) return ProfileFlat(program, inputs, options, cancel, host);
  ProfiledRun run;
  CycleRecorder recorder(program, &run.profile);
  FLAMEFLEET_ASSIGN_OR_RETURN(internal::ExecutionSetup setup,
                              internal::PrepareExecution(program, inputs, options));
  vm::Executor exec(program, inputs.stack, std::move(setup.advice), setup.options, host, &recorder);
  FLAMEFLEET_RETURN_IF_ERROR(internal::RunCancellable(exec, cancel));
  FLAMEFLEET_ASSIGN_OR_RETURN(run.result, vm::FinishRun(exec));
  recorder.Finish(exec.clk());
  return run;
}

absl::StatusOr<ProfiledRun> ProfileReplay(const v1::ReplaySnapshot& snapshot,
                                          std::optional<uint64_t> max_cycles, StackMode mode,
                                          const std::atomic<bool>* cancel,
                                          std::optional<uint64_t> max_memory_bytes,
                                          std::ostream* debug_print) {
  FLAMEFLEET_ASSIGN_OR_RETURN(ReplayPlan plan,
                              PrepareReplay(snapshot, max_cycles, max_memory_bytes));
  plan.options.debug_print = debug_print;
  ReplayHost host(&snapshot);
  FLAMEFLEET_ASSIGN_OR_RETURN(ProfiledRun run, ProfileProgram(plan.program, plan.inputs,
                                                              plan.options, mode, cancel, &host));
  FLAMEFLEET_RETURN_IF_ERROR(host.CheckFinished(run.result.cycles));
  return run;
}

}  // namespace flamefleet::runner
