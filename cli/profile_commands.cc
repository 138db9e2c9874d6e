#include "cli/profile_commands.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/program_flags.h"
#include "common/status_macros.h"
#include "profile/export.h"
#include "renderer/flamegraph.h"
#include "renderer/profile_file.h"
#include "runner/runner.h"
#include "vm/vm.h"

namespace flamefleet::cli {
namespace {

struct ProfileFlags {
  ProgramFlags program{ProgramCommand::kProfile};
  bool flat = false;
  std::string output = "flamegraph.svg";
  std::string title = "Miden VM Flame Graph (cycles)";
};

struct Loaded {
  vm::Program program;
  vm::ProgramInputs inputs;
};

// Assembles `flags.program` and loads its inputs.
absl::StatusOr<Loaded> Load(const ProgramFlags& flags) {
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::AssemblerOptions assembler_options, flags.AssemblerOptions());
  vm::Assembler assembler(assembler_options);
  Loaded loaded;
  FLAMEFLEET_ASSIGN_OR_RETURN(loaded.program,
                              assembler.AssembleFile(flags.program, flags.AssembleLimits()));
  FLAMEFLEET_ASSIGN_OR_RETURN(loaded.inputs, flags.LoadInputs());
  return loaded;
}

// Number of distinct folded stacks: nodes that have self cycles.
size_t UniqueStacks(const profile::Profile& p) {
  size_t n = 0;
  for (profile::Profile::NodeId i = 1; i < p.num_nodes(); ++i) n += p.self(i) != 0;
  return n;
}

absl::StatusOr<runner::ProfiledRun> ProfileFromFlags(const ProfileFlags& flags) {
  const ProgramFlags& p = flags.program;
  const runner::StackMode mode = flags.flat ? runner::StackMode::kFlat : runner::StackMode::kNested;
  if (!p.replay.empty()) {
    if (!p.kernel.empty()) {
      return absl::InvalidArgumentError(
          "--kernel cannot be used with --replay (a snapshot carries its own kernel)");
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snapshot, runner::LoadSnapshotFile(p.replay));
    return runner::ProfileReplay(snapshot, p.max_cycles, mode, /*cancel=*/nullptr, p.max_memory);
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(Loaded loaded, Load(p));
  return runner::ProfileProgram(loaded.program, loaded.inputs, p.ExecutionOptions(), mode);
}

absl::Status RunProfile(const ProfileFlags& flags) {
  if (absl::Status usage = flags.program.CheckReplay(); !usage.ok()) return UsageError(usage);
  FLAMEFLEET_ASSIGN_OR_RETURN(runner::ProfiledRun run, ProfileFromFlags(flags));
  std::cerr << "Executed " << run.result.cycles << " cycles across " << UniqueStacks(run.profile)
            << " unique stack paths\n";
  renderer::RenderOptions options;
  options.title = flags.title;
  options.count_name = "cycles";
  const profile::OutputFormat format = profile::OutputFormatForPath(flags.output);
  FLAMEFLEET_RETURN_IF_ERROR(renderer::WriteProfileFile(run.profile, flags.output, options));
  std::cerr << "Wrote "
            << (format.format == profile::ProfileFormat::kSvg ? "flame graph"
                : format.format == profile::ProfileFormat::kFolded
                    ? "folded stacks"
                    : absl::StrCat(profile::ProfileFormatName(format.format), " profile"))
            << " to " << flags.output << "\n";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<profile::Profile> ProfileMasmFile(const std::string& program_path,
                                                 const std::string& inputs_path,
                                                 const std::vector<std::string>& libs, bool flat) {
  ProgramFlags flags(ProgramCommand::kProfile);
  flags.program = program_path;
  flags.inputs = inputs_path;
  flags.libs = libs;
  FLAMEFLEET_ASSIGN_OR_RETURN(Loaded loaded, Load(flags));
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
  flags->program.Add(cmd);
  cmd->add_option("-o,--output", flags->output,
                  "output path (default flamegraph.svg): .svg, .svgz, .pb.gz, .speedscope.json, "
                  ".folded");
  cmd->add_flag("--flat", flags->flat,
                "miden-debug compatible stacks: one frame, the executing op's procedure");
  cmd->add_option("--title", flags->title, "flamegraph title");
  SetCommand(cmd, exit_code, [flags] { return RunProfile(*flags); });
}

}  // namespace flamefleet::cli
