#include "cli/snapshot_commands.h"

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/program_flags.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "runner/runner.h"
#include "vm/vm.h"

namespace flamefleet::cli {
namespace {

// The dialect a snapshot replays under, as `inspect` shows it (decoded snapshots name a known
// one; the field is empty in snapshots from before dialects were named).
std::string SnapshotDialectName(const v1::ReplaySnapshot& snapshot) {
  absl::StatusOr<vm::Dialect> dialect = runner::SnapshotDialect(snapshot);
  if (!dialect.ok()) return snapshot.program().dialect();
  std::string name(vm::DialectName(*dialect));
  if (snapshot.program().dialect().empty()) absl::StrAppend(&name, " (not recorded)");
  return name;
}

struct RecordFlags {
  ProgramFlags program{ProgramCommand::kRecord};
  std::string output;
};

// `record`; a run that fails still leaves its snapshot (and exits 1 after saying so).
CommandResult RunRecord(const RecordFlags& flags) {
  const ProgramFlags& p = flags.program;
  absl::StatusOr<vm::AssemblerOptions> assembler_options = p.AssemblerOptions();
  if (!assembler_options.ok()) return UsageError(assembler_options.status());
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::ProgramInputs inputs, p.LoadInputs());
  runner::RecordOptions options;
  options.libraries = assembler_options->libraries;
  options.kernel_path = assembler_options->kernel_path;
  options.dialect = assembler_options->dialect;
  options.execution = p.ExecutionOptions();
  options.assemble = p.AssembleLimits();
  // The live host: none yet, so every event gets an empty answer (and still a log entry).
  FLAMEFLEET_ASSIGN_OR_RETURN(runner::Recording recording,
                              runner::RecordFile(p.program, inputs, options));
  FLAMEFLEET_RETURN_IF_ERROR(runner::WriteSnapshotFile(flags.output, recording.snapshot));
  if (!recording.run_status.ok()) {
    std::cerr << "error: " << recording.run_status.message() << "\n";
    std::cerr << "Wrote a snapshot of the failed run (" << recording.snapshot.events_size()
              << " events) to " << flags.output << "\n";
    return ExitCode{kExitFailed};
  }
  std::cerr << "Recorded " << recording.result.cycles << " cycles and "
            << recording.snapshot.events_size() << " events to " << flags.output << "\n";
  return absl::OkStatus();
}

absl::Status RunInspect(const std::string& path, bool json) {
  FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snapshot, runner::LoadSnapshotFile(path));
  std::error_code ec;
  uint64_t bytes = std::filesystem::file_size(path, ec);
  std::cout << DescribeSnapshot(snapshot, ec ? 0 : bytes, json);
  return absl::OkStatus();
}

}  // namespace

std::string DescribeSnapshot(const v1::ReplaySnapshot& snapshot, uint64_t file_bytes, bool json) {
  const v1::SnapshotProgram& program = snapshot.program();
  const v1::SnapshotInputs& inputs = snapshot.inputs();
  size_t answered = 0;
  for (const v1::SnapshotEvent& e : snapshot.events()) {
    answered += e.advice_stack_pushed_size() > 0 || e.advice_map_inserted_size() > 0;
  }
  if (json) {
    nlohmann::json out;
    out["format_version"] = snapshot.format_version();
    out["bytes"] = file_bytes;
    out["program"] = {{"name", program.name()},
                      {"digest", runner::SnapshotSourceDigest(program)},
                      {"entry_digest", program.digest()},
                      {"entry_bytes", program.source().size()},
                      {"dialect", SnapshotDialectName(snapshot)}};
    if (program.has_kernel()) {
      out["kernel"] = {{"path", program.kernel().path()},
                       {"digest", program.kernel().digest()},
                       {"bytes", program.kernel().source().size()},
                       {"modules", nlohmann::json::array()}};
      for (const v1::SnapshotModule& m : program.kernel_modules()) {
        out["kernel"]["modules"].push_back(
            {{"path", m.path()}, {"digest", m.digest()}, {"bytes", m.source().size()}});
      }
    }
    out["modules"] = nlohmann::json::array();
    for (const v1::SnapshotLibrary& lib : program.libraries()) {
      for (const v1::SnapshotModule& m : lib.modules()) {
        out["modules"].push_back({{"namespace", lib.namespace_()},
                                  {"path", m.path()},
                                  {"digest", m.digest()},
                                  {"bytes", m.source().size()}});
      }
    }
    out["inputs"] = {{"stack", inputs.stack_size()},
                     {"advice_stack", inputs.advice_stack_size()},
                     {"advice_map", inputs.advice_map_size()},
                     {"merkle_store", inputs.merkle_store_size()}};
    out["max_cycles"] = snapshot.options().max_cycles();
    out["events"] = snapshot.events_size();
    out["events_with_answers"] = answered;
    if (snapshot.has_outcome()) {
      out["cycles"] = snapshot.outcome().cycles();
      out["stack"] = std::vector<uint64_t>(snapshot.outcome().stack().begin(),
                                           snapshot.outcome().stack().end());
    } else {
      out["cycles"] = nullptr;
    }
    return out.dump(2) + "\n";
  }
  std::string out =
      absl::StrCat("format version ", snapshot.format_version(), ", ", file_bytes, " bytes\n");
  absl::StrAppend(&out, "program:  ", program.name(), "\n");
  absl::StrAppend(&out, "  dialect: ", SnapshotDialectName(snapshot), "\n");
  absl::StrAppend(&out, "  digest: ", runner::SnapshotSourceDigest(program), "\n");
  absl::StrAppend(&out, "  entry:  ", program.digest(), " (", program.source().size(), " bytes)\n");
  if (program.has_kernel()) {
    absl::StrAppend(&out, "  kernel: ", program.kernel().path(), "  ", program.kernel().digest(),
                    " (", program.kernel().source().size(), " bytes)\n");
    for (const v1::SnapshotModule& m : program.kernel_modules()) {
      absl::StrAppend(&out, "    ", m.path(), "  ", m.digest(), " (", m.source().size(),
                      " bytes)\n");
    }
  }
  size_t modules = 0;
  for (const v1::SnapshotLibrary& lib : program.libraries()) modules += lib.modules_size();
  absl::StrAppend(&out, "modules:  ", modules, "\n");
  for (const v1::SnapshotLibrary& lib : program.libraries()) {
    for (const v1::SnapshotModule& m : lib.modules()) {
      absl::StrAppend(&out, "  ", lib.namespace_(), ": ", m.path(), "  ", m.digest(), " (",
                      m.source().size(), " bytes)\n");
    }
  }
  absl::StrAppend(&out, "inputs:   stack ", inputs.stack_size(), ", advice stack ",
                  inputs.advice_stack_size(), ", advice map ", inputs.advice_map_size(),
                  " entries, merkle store ", inputs.merkle_store_size(), " sources\n");
  absl::StrAppend(&out, "options:  max_cycles ", snapshot.options().max_cycles(), "\n");
  absl::StrAppend(&out, "events:   ", snapshot.events_size(), " (", answered,
                  " with host answers)\n");
  if (snapshot.has_outcome()) {
    absl::StrAppend(&out, "cycles:   ", snapshot.outcome().cycles(), "\n");
    absl::StrAppend(&out, "stack:    [", absl::StrJoin(snapshot.outcome().stack(), ", "), "]\n");
  } else {
    absl::StrAppend(&out, "cycles:   unknown (the recorded run did not finish)\n");
  }
  return out;
}

void AddSnapshotCommands(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<RecordFlags>();
  CLI::App* record = app.add_subcommand(
      "record", "Run a MASM program and write a replay snapshot file of the execution");
  flags->program.Add(record);
  record->add_option("-o,--output", flags->output, "snapshot file to write")->required();
  SetCommand(record, exit_code, [flags] { return RunRecord(*flags); });

  CLI::App* snapshot = app.add_subcommand("snapshot", "Read replay snapshot files (inspect)");
  snapshot->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* inspect = snapshot->add_subcommand(
      "inspect",
      "Print what a snapshot holds (program digest, modules, inputs, events, cycles) as text or "
      "JSON (--json)");
  inspect->add_option("snapshot", *path, "snapshot file")->required();
  inspect->add_flag("--json", *json, "print JSON");
  SetCommand(inspect, exit_code, [path, json] { return RunInspect(*path, *json); });
}

}  // namespace flamefleet::cli
