#include "cli/snapshot_commands.h"

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/vm_commands.h"
#include "nlohmann/json.hpp"
#include "vm/vm.h"
#include "runner/runner.h"

namespace flamefleet::cli {
namespace {

struct RecordFlags {
  std::string program;
  std::string inputs;
  std::vector<std::string> libs;
  std::string kernel;
  std::optional<uint64_t> max_cycles;
  ResourceLimitFlags limits;
  std::string output;
};

int RunRecord(const RecordFlags& flags) {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> libs =
      ParseLibraryFlags(flags.libs);
  if (!libs.ok()) {
    std::cerr << "error: " << libs.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<vm::ProgramInputs> inputs = LoadProgramInputs(flags.program, flags.inputs);
  if (!inputs.ok()) {
    std::cerr << "error: " << inputs.status().message() << "\n";
    return 1;
  }
  runner::RecordOptions options;
  options.libraries = *libs;
  options.kernel_path = flags.kernel;
  if (flags.max_cycles.has_value()) options.execution.max_cycles = *flags.max_cycles;
  if (flags.limits.max_memory.has_value()) {
    options.execution.max_memory_bytes = *flags.limits.max_memory;
  }
  options.assemble = AssembleLimitsFromFlags(flags.limits);
  // The live host: none yet, so every event gets an empty answer (and still a log entry).
  absl::StatusOr<runner::Recording> recording =
      runner::RecordFile(flags.program, *inputs, options);
  if (!recording.ok()) {
    std::cerr << "error: " << recording.status().message() << "\n";
    return 1;
  }
  if (absl::Status st = runner::WriteSnapshotFile(flags.output, recording->snapshot); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  if (!recording->run_status.ok()) {
    std::cerr << "error: " << recording->run_status.message() << "\n";
    std::cerr << "Wrote a snapshot of the failed run (" << recording->snapshot.events_size()
              << " events) to " << flags.output << "\n";
    return 1;
  }
  std::cerr << "Recorded " << recording->result.cycles << " cycles and "
            << recording->snapshot.events_size() << " events to " << flags.output << "\n";
  return 0;
}

int RunInspect(const std::string& path, bool json) {
  absl::StatusOr<v1::ReplaySnapshot> snapshot = runner::LoadSnapshotFile(path);
  if (!snapshot.ok()) {
    std::cerr << "error: " << snapshot.status().message() << "\n";
    return 1;
  }
  std::error_code ec;
  uint64_t bytes = std::filesystem::file_size(path, ec);
  std::cout << DescribeSnapshot(*snapshot, ec ? 0 : bytes, json);
  return 0;
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
                      {"entry_bytes", program.source().size()}};
    if (program.has_kernel()) {
      out["kernel"] = {{"path", program.kernel().path()},
                       {"digest", program.kernel().digest()},
                       {"bytes", program.kernel().source().size()}};
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
  std::string out = absl::StrCat("format version ", snapshot.format_version(), ", ", file_bytes,
                                 " bytes\n");
  absl::StrAppend(&out, "program:  ", program.name(), "\n");
  absl::StrAppend(&out, "  digest: ", runner::SnapshotSourceDigest(program), "\n");
  absl::StrAppend(&out, "  entry:  ", program.digest(), " (", program.source().size(),
                  " bytes)\n");
  if (program.has_kernel()) {
    absl::StrAppend(&out, "  kernel: ", program.kernel().path(), "  ", program.kernel().digest(),
                    " (", program.kernel().source().size(), " bytes)\n");
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
      "record", "Run a MASM program and write a replay snapshot of the execution");
  record->add_option("program", flags->program, "MASM program (.masm)")->required();
  record->add_option("--inputs", flags->inputs,
                     "inputs file (.inputs JSON or .toml); default: beside the program");
  record->add_option("--lib", flags->libs, "library NAMESPACE=DIR (repeatable)");
  record->add_option("--kernel", flags->kernel,
                     "kernel module (.masm) for `syscall` (recorded in the snapshot)");
  record->add_option("--max-cycles", flags->max_cycles, "stop with an error after N cycles");
  AddResourceLimitFlags(record, &flags->limits);
  record->add_option("-o,--output", flags->output, "snapshot file to write")->required();
  record->callback([flags, exit_code]() { *exit_code = RunRecord(*flags); });

  CLI::App* snapshot = app.add_subcommand("snapshot", "Replay snapshots");
  snapshot->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* inspect = snapshot->add_subcommand(
      "inspect", "Show what a snapshot holds: program digest, modules, inputs, events, cycles");
  inspect->add_option("snapshot", *path, "snapshot file")->required();
  inspect->add_flag("--json", *json, "print JSON");
  inspect->callback([path, json, exit_code]() { *exit_code = RunInspect(*path, *json); });
}

}  // namespace flamefleet::cli
