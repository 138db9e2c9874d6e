#include "cli/vm_commands.h"

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "vm/vm.h"
#include "runner/runner.h"

namespace flamefleet::cli {

absl::StatusOr<vm::ProgramInputs> LoadProgramInputs(const std::string& program,
                                                   const std::string& inputs_flag) {
  std::string path = inputs_flag.empty() ? DefaultInputsPath(program) : inputs_flag;
  if (path.empty()) return vm::ProgramInputs{};
  return vm::LoadInputs(path);
}

namespace {

struct ExecFlags {
  std::string program;
  std::string inputs;
  std::vector<std::string> libs;
  std::string kernel;
  std::optional<uint64_t> max_cycles;
  ResourceLimitFlags limits;
  bool json = false;
  std::string replay;
};

}  // namespace

std::string DefaultInputsPath(const std::string& program) {
  std::filesystem::path p(program);
  for (const char* ext : {".inputs", ".toml"}) {
    std::filesystem::path candidate = p;
    candidate.replace_extension(ext);
    std::error_code ec;
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return "";
}

namespace {

// `exec --replay`: runs the snapshot, answering events from its log.
absl::StatusOr<vm::RunResult> ReplayExec(const ExecFlags& flags) {
  FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snapshot,
                              runner::LoadSnapshotFile(flags.replay));
  return runner::ReplayRun(snapshot, flags.max_cycles, flags.limits.max_memory);
}

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

int RunExec(const ExecFlags& flags) {
  if (absl::Status usage = CheckReplayFlags(flags.program, flags.replay, flags.inputs, flags.libs);
      !usage.ok()) {
    std::cerr << "error: " << usage.message() << "\n";
    return 2;
  }
  if (!flags.replay.empty() && !flags.kernel.empty()) {
    std::cerr << "error: --kernel cannot be used with --replay (a snapshot carries its own kernel)\n";
    return 2;
  }
  if (!flags.replay.empty()) {
    absl::StatusOr<vm::RunResult> result = ReplayExec(flags);
    if (!result.ok()) {
      std::cerr << "error: " << result.status().message() << "\n";
      return 1;
    }
    PrintResult(*result, flags.json);
    return 0;
  }
  auto libs = ParseLibraryFlags(flags.libs);
  if (!libs.ok()) {
    std::cerr << "error: " << libs.status().message() << "\n";
    return 2;
  }
  vm::AssemblerOptions assembler_options;
  assembler_options.libraries = *libs;
  assembler_options.kernel_path = flags.kernel;
  vm::Assembler assembler(assembler_options);
  absl::StatusOr<vm::Program> program =
      assembler.AssembleFile(flags.program, AssembleLimitsFromFlags(flags.limits));
  if (!program.ok()) {
    std::cerr << "error: " << program.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<vm::ProgramInputs> inputs = LoadProgramInputs(flags.program, flags.inputs);
  if (!inputs.ok()) {
    std::cerr << "error: " << inputs.status().message() << "\n";
    return 1;
  }
  vm::ExecutionOptions options;
  if (flags.max_cycles.has_value()) options.max_cycles = *flags.max_cycles;
  if (flags.limits.max_memory.has_value()) options.max_memory_bytes = *flags.limits.max_memory;
  absl::StatusOr<vm::RunResult> result = vm::RunProgram(*program, *inputs, options);
  if (!result.ok()) {
    std::cerr << "error: " << result.status().message() << "\n";
    return 1;
  }
  PrintResult(*result, flags.json);
  return 0;
}

}  // namespace

absl::Status CheckReplayFlags(const std::string& program, const std::string& replay,
                              const std::string& inputs, const std::vector<std::string>& libs) {
  if (program.empty() == replay.empty()) {
    return absl::InvalidArgumentError("give either a PROGRAM or --replay SNAPSHOT (not both)");
  }
  if (!replay.empty() && (!inputs.empty() || !libs.empty())) {
    return absl::InvalidArgumentError(
        "--inputs and --lib cannot be used with --replay: the snapshot has its own");
  }
  return absl::OkStatus();
}

void AddResourceLimitFlags(CLI::App* cmd, ResourceLimitFlags* flags) {
  cmd->add_option("--max-memory", flags->max_memory,
                  absl::StrCat("memory budget per run in bytes: VM memory, advice, operand and "
                               "call stacks (default ", vm::kDefaultMaxMemoryBytes,
                               " = 1 GiB); over it the run fails"));
  cmd->add_option("--max-program-ops", flags->max_program_ops,
                  absl::StrCat("refuse a program whose repeats expand past N operations "
                               "(default ", vm::kDefaultMaxProgramOps, ")"));
}

vm::AssembleLimits AssembleLimitsFromFlags(const ResourceLimitFlags& flags) {
  vm::AssembleLimits limits;
  if (flags.max_program_ops.has_value()) limits.max_program_ops = *flags.max_program_ops;
  return limits;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseLibraryFlags(
    const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, std::string>> libs;
  for (const std::string& v : values) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--lib '", v, "': expected NAMESPACE=DIR, e.g. std=./stdlib/asm"));
    }
    libs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
  }
  return libs;
}

void AddVmCommands(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ExecFlags>();
  CLI::App* exec = app.add_subcommand(
      "exec", "Run a MASM program; print the final operand stack (top 16, top first) and the "
              "cycle count");
  exec->add_option("program", flags->program, "MASM program (.masm)");
  exec->add_option("--replay", flags->replay,
                   "replay a snapshot (flamefleet record) instead of running a program");
  exec->add_option("--inputs", flags->inputs,
                   "inputs file: miden-vm JSON (.inputs) or miden-debug TOML (.toml); default: "
                   "PROGRAM.inputs or PROGRAM.toml beside the program");
  exec->add_option("--lib", flags->libs, "library NAMESPACE=DIR (repeatable), e.g. std=DIR");
  exec->add_option("--kernel", flags->kernel, "kernel module (.masm) for `syscall`");
  exec->add_option("--max-cycles", flags->max_cycles, "stop with an error after N cycles");
  AddResourceLimitFlags(exec, &flags->limits);
  exec->add_flag("--json", flags->json, "print {\"stack\": [...], \"cycles\": N}");
  exec->callback([flags, exit_code]() { *exit_code = RunExec(*flags); });
}

}  // namespace flamefleet::cli
