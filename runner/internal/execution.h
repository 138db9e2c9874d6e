// Internal to runner/: what ProfileProgram and ProfileProgramWithStats share before and while
// they run the executor (the inputs' own cycle cap, the stack-size check, the advice, and the
// run loop that polls a cancel flag between slices).
#ifndef FLAMEFLEET_RUNNER_INTERNAL_EXECUTION_H_
#define FLAMEFLEET_RUNNER_INTERNAL_EXECUTION_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vm/executor/executor.h"
#include "vm/vm.h"

namespace flamefleet::runner::internal {

// Cycles run between two polls of a cancel flag (about a few ms).
inline constexpr uint64_t kCancelSlice = uint64_t{1} << 20;

// The executor's options and advice for running `program` on `inputs`: the inputs file's own
// max_cycles lowers options.max_cycles; more than 16 stack values is InvalidArgument.
struct ExecutionSetup {
  vm::ExecutionOptions options;
  vm::AdviceProvider advice;
};
inline absl::StatusOr<ExecutionSetup> PrepareExecution(const vm::Program& program,
                                                       const vm::ProgramInputs& inputs,
                                                       const vm::ExecutionOptions& options) {
  vm::ExecutionOptions opts = options;
  if (inputs.max_cycles.has_value() && *inputs.max_cycles < opts.max_cycles) {
    opts.max_cycles = *inputs.max_cycles;
  }
  if (inputs.stack.size() > 16) {
    return absl::InvalidArgumentError("at most 16 initial stack values are allowed");
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::AdviceProvider advice,
                              vm::MakeAdvice(inputs, *program.dialect->hasher));
  return ExecutionSetup{opts, std::move(advice)};
}

// Returns the Cancelled status of a run stopped at `clk`.
inline absl::Status CancelledAt(uint64_t clk) {
  return absl::CancelledError(absl::StrCat("stopped after ", clk, " cycles"));
}

// Runs `exec` to its end; with a `cancel` flag, in slices, stopping with CancelledAt once it is
// set. OK when the executor stopped by itself (finished or trapped: see its state).
inline absl::Status RunCancellable(vm::Executor& exec, const std::atomic<bool>* cancel) {
  if (cancel == nullptr) {
    exec.Run();
    return absl::OkStatus();
  }
  while (exec.Run(kCancelSlice) == vm::Executor::State::kPaused) {
    if (cancel->load(std::memory_order_relaxed)) return CancelledAt(exec.clk());
  }
  return absl::OkStatus();
}

}  // namespace flamefleet::runner::internal

#endif  // FLAMEFLEET_RUNNER_INTERNAL_EXECUTION_H_
