#include "cli/profile_commands.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/vm_commands.h"
#include "common/status_macros.h"
#include "profile/folded.h"
#include "profile/export.h"
#include "renderer/flamegraph.h"
#include "renderer/profile_file.h"
#include "vm/vm.h"
#include "runner/runner.h"

namespace flamefleet::cli {
namespace {

struct ProfileFlags {
  std::string program;
  std::string inputs;
  std::vector<std::string> libs;
  std::string kernel;
  std::optional<uint64_t> max_cycles;
  ResourceLimitFlags limits;
  bool flat = false;
  std::string output = "flamegraph.svg";
  std::string title = "Miden VM Flame Graph (cycles)";
  std::string replay;
};

struct Loaded {
  vm::Program program;
  vm::ProgramInputs inputs;
};

absl::StatusOr<Loaded> Load(const std::string& program_path, const std::string& inputs_path,
                            const std::vector<std::string>& libs,
                            const std::string& kernel = "",
                            const vm::AssembleLimits& limits = {}) {
  FLAMEFLEET_ASSIGN_OR_RETURN(auto lib_pairs, ParseLibraryFlags(libs));
  vm::AssemblerOptions assembler_options;
  assembler_options.libraries = lib_pairs;
  assembler_options.kernel_path = kernel;
  vm::Assembler assembler(assembler_options);
  Loaded loaded;
  FLAMEFLEET_ASSIGN_OR_RETURN(loaded.program, assembler.AssembleFile(program_path, limits));
  FLAMEFLEET_ASSIGN_OR_RETURN(loaded.inputs, LoadProgramInputs(program_path, inputs_path));
  return loaded;
}

// Number of distinct folded stacks: nodes that have self cycles.
size_t UniqueStacks(const profile::Profile& p) {
  size_t n = 0;
  for (profile::Profile::NodeId i = 1; i < p.num_nodes(); ++i) n += p.self(i) != 0;
  return n;
}

absl::StatusOr<runner::ProfiledRun> ProfileFromFlags(const ProfileFlags& flags) {
  const runner::StackMode mode = flags.flat ? runner::StackMode::kFlat : runner::StackMode::kNested;
  if (!flags.replay.empty()) {
    if (!flags.kernel.empty()) {
      return absl::InvalidArgumentError("--kernel cannot be used with --replay (a snapshot carries its own kernel)");
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snapshot,
                                runner::LoadSnapshotFile(flags.replay));
    return runner::ProfileReplay(snapshot, flags.max_cycles, mode, /*cancel=*/nullptr,
                                 flags.limits.max_memory);
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(Loaded loaded,
                              Load(flags.program, flags.inputs, flags.libs, flags.kernel,
                                   AssembleLimitsFromFlags(flags.limits)));
  vm::ExecutionOptions options;
  if (flags.max_cycles.has_value()) options.max_cycles = *flags.max_cycles;
  if (flags.limits.max_memory.has_value()) options.max_memory_bytes = *flags.limits.max_memory;
  return runner::ProfileProgram(loaded.program, loaded.inputs, options, mode);
}

int RunProfile(const ProfileFlags& flags) {
  if (absl::Status usage = CheckReplayFlags(flags.program, flags.replay, flags.inputs, flags.libs);
      !usage.ok()) {
    std::cerr << "error: " << usage.message() << "\n";
    return 2;
  }
  absl::StatusOr<runner::ProfiledRun> run = ProfileFromFlags(flags);
  if (!run.ok()) {
    std::cerr << "error: " << run.status().message() << "\n";
    return 1;
  }
  std::cerr << "Executed " << run->result.cycles << " cycles across "
            << UniqueStacks(run->profile) << " unique stack paths\n";
  renderer::RenderOptions options;
  options.title = flags.title;
  options.count_name = "cycles";
  const profile::OutputFormat format = profile::OutputFormatForPath(flags.output);
  absl::Status st = renderer::WriteProfileFile(run->profile, flags.output, options);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  std::cerr << "Wrote "
            << (format.format == profile::ProfileFormat::kSvg ? "flame graph"
                : format.format == profile::ProfileFormat::kFolded
                    ? "folded stacks"
                    : absl::StrCat(profile::ProfileFormatName(format.format), " profile"))
            << " to " << flags.output << "\n";
  return 0;
}

}  // namespace

absl::StatusOr<profile::Profile> ProfileMasmFile(const std::string& program_path,
                                                 const std::string& inputs_path,
                                                 const std::vector<std::string>& libs,
                                                 bool flat) {
  FLAMEFLEET_ASSIGN_OR_RETURN(Loaded loaded, Load(program_path, inputs_path, libs));
  FLAMEFLEET_ASSIGN_OR_RETURN(
      runner::ProfiledRun run,
      runner::ProfileProgram(loaded.program, loaded.inputs, vm::ExecutionOptions{},
                             flat ? runner::StackMode::kFlat : runner::StackMode::kNested));
  return std::move(run.profile);
}

void AddProfileCommands(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ProfileFlags>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Run a MASM program and write its cycle profile; the format follows OUT's name: "
      ".svg/.svgz flamegraph, .pb.gz pprof, .speedscope.json speedscope, else folded stacks");
  cmd->add_option("program", flags->program, "MASM program (.masm)");
  cmd->add_option("--replay", flags->replay,
                  "profile a replay of a snapshot (flamefleet record) instead of a program");
  cmd->add_option("-o,--output", flags->output, "output path (default flamegraph.svg): .svg, .svgz, .pb.gz, .speedscope.json, .folded");
  cmd->add_option("--inputs", flags->inputs,
                  "inputs file (.inputs JSON or .toml); default: beside the program");
  cmd->add_option("--lib", flags->libs, "library NAMESPACE=DIR (repeatable)");
  cmd->add_option("--kernel", flags->kernel, "kernel module (.masm) for `syscall`");
  cmd->add_option("--max-cycles", flags->max_cycles, "stop with an error after N cycles");
  AddResourceLimitFlags(cmd, &flags->limits);
  cmd->add_flag("--flat", flags->flat,
                "miden-debug compatible stacks: one frame, the executing op's procedure");
  cmd->add_option("--title", flags->title, "flamegraph title");
  cmd->callback([flags, exit_code]() { *exit_code = RunProfile(*flags); });
}

}  // namespace flamefleet::cli
