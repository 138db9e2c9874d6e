#include "cli/profile_commands.h"

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/program_flags.h"
#include "common/file.h"
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
  std::string summary;                       // --summary: summary.json path
  std::vector<std::string> phases;           // --phase START=END
  std::vector<std::string> marker_prefixes;  // --marker PREFIX
  std::string weight;                        // --weight KIND: rows of KIND instead of cycles
};

// What `profile` draws: the profile and its unit.
struct Drawn {
  runner::ProfiledRun run;
  std::string count_name = "cycles";
};

// Prints the run's trace shape in the terms of `miden run`'s block (docs/trace-shape.md).
void PrintTraceShape(const vm::TraceShape& t) {
  std::cerr << "Trace shape: core " << t.core_rows << " rows, range " << t.range_rows
            << ", chiplets " << t.chiplets_rows << " (hasher " << t.hasher_rows << ", bitwise "
            << t.bitwise_rows << ", memory " << t.memory_rows << ", ace " << t.ace_rows
            << ", kernel ROM " << t.kernel_rom_rows << "); padded " << t.padded_len << " (core "
            << t.core_height << ", chiplets " << t.chiplets_height << "; set by "
            << vm::TraceBoundName(t.bound) << ")\n";
}

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
    return runner::ProfileReplay(snapshot, p.max_cycles, mode, /*cancel=*/nullptr, p.max_memory,
                                 p.DebugPrintStream());
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(Loaded loaded, Load(p));
  return runner::ProfileProgram(loaded.program, loaded.inputs, p.ExecutionOptions(), mode);
}

// `profile --summary` / `--weight`: the profile and the job's accounting (with its trace shape)
// from one run, and summary.json; with --weight the profile weighted by that row kind.
absl::StatusOr<Drawn> ProfileWithSummary(const ProfileFlags& flags) {
  const ProgramFlags& p = flags.program;
  const char* flag = flags.summary.empty() ? "--weight" : "--summary";
  if (!p.replay.empty()) {
    return UsageError(
        absl::InvalidArgumentError(absl::StrCat(flag, " cannot be used with --replay")));
  }
  if (flags.flat) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat(flag,
                     " needs the nested call stacks (drop --flat): inclusive cycles and calls "
                     "are per call stack")));
  }
  std::optional<runner::TraceKind> weight;
  if (!flags.weight.empty()) {
    absl::StatusOr<runner::TraceKind> kind = runner::ParseTraceKind(flags.weight);
    if (!kind.ok()) return UsageError(kind.status());
    weight = *kind;
  }
  runner::StatsOptions stats;
  stats.trace_shape = true;
  for (const std::string& phase : flags.phases) {
    absl::StatusOr<runner::PhasePair> pair = runner::ParsePhasePair(phase);
    if (!pair.ok()) return UsageError(pair.status());
    stats.phases.push_back(*std::move(pair));
  }
  stats.marker_prefixes = flags.marker_prefixes;
  FLAMEFLEET_ASSIGN_OR_RETURN(Loaded loaded, Load(p));
  if (weight.has_value() && loaded.program.dialect->trace_shape == nullptr) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--weight: the trace shape is modelled for v0.25 programs only, not ",
                     loaded.program.dialect->name)));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(
      runner::StatsRun run,
      runner::ProfileProgramWithStats(loaded.program, loaded.inputs, p.ExecutionOptions(), stats));
  if (!flags.summary.empty()) {
    const std::string json = runner::SummaryJson({.job = std::filesystem::path(p.program).stem(),
                                                  .program = &loaded.program,
                                                  .inputs = &loaded.inputs,
                                                  .run = &run});
    FLAMEFLEET_RETURN_IF_ERROR(WriteFileAtomically(flags.summary, json));
    std::cerr << "Wrote summary to " << flags.summary << "\n";
  }
  // The summary records a failed run too; the command still fails as `profile` does.
  FLAMEFLEET_RETURN_IF_ERROR(run.status);
  Drawn drawn;
  if (run.stats.trace_shape.has_value()) {
    PrintTraceShape(run.stats.trace_shape->totals);
    if (weight.has_value()) {
      drawn.count_name = absl::StrCat(runner::TraceKindName(*weight), " rows");
      run.profile = runner::TraceWeightedProfile(run.profile, *run.stats.trace_shape, *weight);
    }
  }
  drawn.run = runner::ProfiledRun{std::move(run.result), std::move(run.profile)};
  return drawn;
}

absl::Status RunProfile(const ProfileFlags& flags) {
  if (absl::Status usage = flags.program.CheckReplay(); !usage.ok()) return UsageError(usage);
  if (flags.summary.empty() && (!flags.phases.empty() || !flags.marker_prefixes.empty())) {
    return UsageError(absl::InvalidArgumentError("--phase and --marker need --summary"));
  }
  Drawn drawn;
  if (flags.summary.empty() && flags.weight.empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(drawn.run, ProfileFromFlags(flags));
  } else {
    FLAMEFLEET_ASSIGN_OR_RETURN(drawn, ProfileWithSummary(flags));
  }
  const runner::ProfiledRun& run = drawn.run;
  std::cerr << "Executed " << run.result.cycles << " cycles across " << UniqueStacks(run.profile)
            << " unique stack paths\n";
  renderer::RenderOptions options;
  options.title = flags.title;
  if (!flags.weight.empty() && flags.title == ProfileFlags{}.title) {
    options.title = absl::StrCat("Miden VM Flame Graph (", drawn.count_name, ")");
  }
  options.count_name = drawn.count_name;
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
  cmd->add_option("--summary", flags->summary,
                  "also write the job's summary as JSON (calls, instructions, phases, MAST size, "
                  "trace shape; docs/summary.md)");
  cmd->add_option("--weight", flags->weight,
                  "weigh the profile by trace rows of KIND instead of cycles: hasher, bitwise, "
                  "memory, ace, range or chiplets (v0.25; docs/trace-shape.md)");
  cmd->add_option("--phase", flags->phases,
                  "a phase from event START to event END, as START=END (repeatable; needs "
                  "--summary)");
  cmd->add_option("--marker", flags->marker_prefixes,
                  "events whose names start with PREFIX are phase markers (repeatable; needs "
                  "--summary)");
  SetCommand(cmd, exit_code, [flags] { return RunProfile(*flags); });
}

}  // namespace flamefleet::cli
