#include "cli/vm_commands.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/program_flags.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "runner/runner.h"
#include "vm/vm.h"

namespace flamefleet::cli {
namespace {

struct ExecFlags {
  ProgramFlags program{ProgramCommand::kExec};
  bool json = false;
};

void PrintResult(const vm::RunResult& result, bool json) {
  if (json) {
    nlohmann::json out;
    out["stack"] = nlohmann::json::array();
    for (vm::Felt f : result.stack) out["stack"].push_back(f.value());
    out["cycles"] = result.cycles;
    std::cout << out.dump() << "\n";
  } else {
    std::vector<uint64_t> values;
    for (vm::Felt f : result.stack) values.push_back(f.value());
    std::cout << "Output: [" << absl::StrJoin(values, ", ") << "]\n";
    std::cout << "Cycles: " << result.cycles << "\n";
  }
}

// `exec`: runs the program (or replays the snapshot, answering events from its log).
absl::Status RunExec(const ExecFlags& flags) {
  const ProgramFlags& p = flags.program;
  if (absl::Status usage = p.CheckReplay(); !usage.ok()) return UsageError(usage);
  if (!p.replay.empty() && !p.kernel.empty()) {
    return UsageError("--kernel cannot be used with --replay (a snapshot carries its own kernel)");
  }
  if (!p.replay.empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snapshot, runner::LoadSnapshotFile(p.replay));
    FLAMEFLEET_ASSIGN_OR_RETURN(
        vm::RunResult result,
        runner::ReplayRun(snapshot, p.max_cycles, p.max_memory, p.DebugPrintStream()));
    PrintResult(result, flags.json);
    return absl::OkStatus();
  }
  absl::StatusOr<vm::AssemblerOptions> assembler_options = p.AssemblerOptions();
  if (!assembler_options.ok()) return UsageError(assembler_options.status());
  vm::Assembler assembler(*assembler_options);
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::Program program,
                              assembler.AssembleFile(p.program, p.AssembleLimits()));
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::ProgramInputs inputs, p.LoadInputs());
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::RunResult result,
                              vm::RunProgram(program, inputs, p.ExecutionOptions()));
  PrintResult(result, flags.json);
  return absl::OkStatus();
}

}  // namespace

void AddVmCommands(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ExecFlags>();
  CLI::App* exec = app.add_subcommand(
      "exec",
      "Run a MASM program; print its final operand stack (top 16, top first) and cycle count as "
      "text or JSON (--json)");
  flags->program.Add(exec);
  exec->add_flag("--json", flags->json, "print {\"stack\": [...], \"cycles\": N}");
  SetCommand(exec, exit_code, [flags] { return RunExec(*flags); });
}

}  // namespace flamefleet::cli
