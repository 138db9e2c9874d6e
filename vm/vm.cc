#include "vm/vm.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace flamefleet::vm {
namespace {

// Cuts `message` to at most kMaxExecutionErrorBytes (never inside a UTF-8 sequence).
void CapMessage(std::string& message) {
  if (message.size() <= kMaxExecutionErrorBytes) return;
  constexpr absl::string_view kMark = "\n... (error message truncated)";
  size_t keep = kMaxExecutionErrorBytes - kMark.size();
  while (keep > 0 && (static_cast<unsigned char>(message[keep]) & 0xC0) == 0x80) --keep;
  message.resize(keep);
  absl::StrAppend(&message, kMark);
}

}  // namespace

absl::StatusOr<AdviceProvider> MakeAdvice(const ProgramInputs& inputs, const Hasher& hasher) {
  AdviceProvider advice(hasher);
  advice.PushFront(inputs.advice_stack);
  for (const auto& [key, values] : inputs.advice_map) advice.map.insert_or_assign(key, values);
  for (size_t i = 0; i < inputs.merkle_store.size(); ++i) {
    absl::StatusOr<Word> root = advice.merkle_store.AddInput(inputs.merkle_store[i]);
    if (!root.ok()) {
      return absl::Status(root.status().code(),
                          absl::StrCat("merkle_store[", i, "]: ", root.status().message()));
    }
  }
  return advice;
}

absl::Status TrapStatus(const Program& program, const Trap& trap) {
  std::string where;
  uint32_t src = trap.pc < program.source_index.size() ? program.source_index[trap.pc] : 0;
  std::string detail = trap.message;
  if (trap.kind == TrapKind::kAssertionFailed || trap.kind == TrapKind::kNotU32 ||
      trap.kind == TrapKind::kMerklePathVerificationFailed) {
    for (const auto& [code, text] : program.error_messages) {
      if (code == trap.error_code && code != 0) {
        absl::StrAppend(&detail, " (\"", text, "\")");
        break;
      }
    }
  }
  std::string message = absl::StrCat("execution failed at cycle ", trap.clk, ": ", detail);
  if (src != 0 && src < program.source_ops.size() && program.sources != nullptr) {
    const SourceOp& op = program.source_ops[src];
    absl::StrAppend(&message, "\n",
                    program.sources->Format(op.loc, absl::StrCat("in `", op.text, "`")));
  }
  if (!trap.frames.empty()) {
    absl::StrAppend(&message, "\ncall stack (innermost last):");
    const size_t n = trap.frames.size();
    const size_t k = kErrorFramesKept;
    for (size_t i = 0; i < n; ++i) {
      if (n > 2 * k && i == k) {
        absl::StrAppend(&message, "\n  ... ", GroupThousands(n - 2 * k), " frames omitted ...");
        i = n - k - 1;
        continue;
      }
      const uint32_t f = trap.frames[i];
      absl::StrAppend(
          &message, "\n  ",
          f < program.procedures.size() ? program.procedures[f].name : std::string("?"));
    }
  }
  CapMessage(message);
  switch (trap.kind) {
    case TrapKind::kCycleLimit:
    case TrapKind::kStackOverflow:
    case TrapKind::kMemoryLimit:
      return absl::ResourceExhaustedError(message);
    case TrapKind::kOutputStackOverflow:
      return absl::FailedPreconditionError(message);
    case TrapKind::kUnsupported:
      return absl::UnimplementedError(message);
    default:
      return absl::InvalidArgumentError(message);
  }
}

absl::StatusOr<RunResult> FinishRun(const Executor& executor) {
  if (executor.state() == Executor::State::kTrapped) {
    return TrapStatus(executor.program(), executor.trap());
  }
  if (executor.state() != Executor::State::kFinished) {
    return absl::FailedPreconditionError("the program has not finished");
  }
  if (executor.stack_depth() > 16) {
    return absl::FailedPreconditionError(absl::StrCat(
        "output stack overflow: the program ended with ", executor.stack_depth(),
        " elements on the operand stack; at most 16 may remain (drop the rest, e.g. with "
        "sys::truncate_stack of the standard library: std:: in v0.16, miden::core:: in v0.25)"));
  }
  return RunResult{executor.StackTop(16), executor.clk()};
}

absl::StatusOr<RunResult> RunProgram(const Program& program, const ProgramInputs& inputs,
                                     const ExecutionOptions& options, Host* host,
                                     CallStackObserver* observer) {
  if (inputs.stack.size() > 16) {
    return absl::InvalidArgumentError("at most 16 initial stack values are allowed");
  }
  ExecutionOptions opts = options;
  if (inputs.max_cycles.has_value())
    opts.max_cycles = std::min(opts.max_cycles, *inputs.max_cycles);
  FLAMEFLEET_ASSIGN_OR_RETURN(AdviceProvider advice, MakeAdvice(inputs, *program.dialect->hasher));
  Executor executor(program, inputs.stack, std::move(advice), opts, host, observer);
  executor.Run();
  return FinishRun(executor);
}

}  // namespace flamefleet::vm
