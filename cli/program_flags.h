// The flags of every `flamefleet` command that assembles a program, each defined once: the
// program (one PROGRAM run here by exec, profile and record; PROGRAMS... sent to a fleet by
// submit and run), --replay, --inputs, --lib, --kernel, --max-cycles, --max-memory,
// --max-program-ops, --dialect and --debug-print (local commands only), and their conversion to
// the assembler, execution and batch options.
// A command words a flag's help its own way where it always has (ProgramCommand picks it).
//
//   auto flags = std::make_shared<ProgramFlags>(ProgramCommand::kExec);
//   flags->Add(exec_cmd);   // before app.parse(); `flags` must outlive the parse
//   // In the command's callback, after the parse:
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::AssemblerOptions options, flags->AssemblerOptions());
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::Program program,
//       vm::Assembler(options).AssembleFile(flags->program, flags->AssembleLimits()));
//
// Not thread-safe (CLI11 apps are not).
#ifndef FLAMEFLEET_CLI_PROGRAM_FLAGS_H_
#define FLAMEFLEET_CLI_PROGRAM_FLAGS_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flamefleet/v1/coordinator.pb.h"
#include "vm/dialect.h"
#include "vm/vm.h"

namespace flamefleet::cli {

// The commands that take ProgramFlags. It decides which flags a command has and how their
// help reads: exec, profile and record run one PROGRAM in this process (with --inputs; record
// has no --replay and requires PROGRAM); submit and run send PROGRAMS... and --replay
// SNAPSHOT... to a fleet as a batch.
enum class ProgramCommand : uint8_t { kExec, kProfile, kRecord, kSubmit, kRun };

// The values of the program flags after a parse. Unset options keep their defaults here and
// mean "the default" (vm::ExecutionOptions, vm::AssembleLimits, or 0 in a batch's options).
struct ProgramFlags {
  explicit ProgramFlags(ProgramCommand command) : command(command) {}

  // Registers this command's program flags on `cmd`, bound to the fields below (so `this` is
  // kept and must outlive the parse). Call once per ProgramFlags.
  void Add(CLI::App* cmd);

  // Returns whether the command runs the program here (exec, profile, record) rather than
  // sending it to a fleet (submit, run).
  bool local() const;

  // Returns the assembler options: the --lib namespaces, the --kernel path and the --dialect.
  // For a local command of a dialect with a core library (v0.25: miden::core) not given by
  // --lib, the core library FindCoreLibrary finds is added (the linker reads only imported
  // modules); NotFound saying how to point at it if none is found and the program names it.
  // InvalidArgument naming the bad --lib value (see ParseLibraryFlags) or --dialect.
  absl::StatusOr<vm::AssemblerOptions> AssemblerOptions() const;
  // Returns the assembler limits: --max-program-ops, defaults where unset.
  vm::AssembleLimits AssembleLimits() const;
  // Returns the execution options: --max-cycles and --max-memory, defaults where unset, and
  // with --debug-print the debug prints' sink (DebugPrintStream).
  vm::ExecutionOptions ExecutionOptions() const;
  // Returns where the v0.25 core library's debug prints write: std::cerr with --debug-print
  // (stdout stays the command's own output), else null (they print nothing).
  std::ostream* DebugPrintStream() const;
  // Loads the inputs of `program` (LoadProgramInputs with --inputs, JSON stacks in the order
  // of the --dialect). Errors of vm::LoadInputs, or an unknown --dialect.
  absl::StatusOr<vm::ProgramInputs> LoadInputs() const;
  // Checks a local command's PROGRAM / --replay choice (CheckReplayFlags) and refuses a .masp
  // or .mdsnap file (CheckAcceptedInput, cli/project.h). InvalidArgument with a usage message.
  absl::Status CheckReplay() const;
  // Returns the --dialect value, vm::kDefaultDialect when unset. InvalidArgument naming
  // --dialect and the known dialects for an unknown name.
  absl::StatusOr<vm::Dialect> Dialect() const;
  // Sets the batch's dialect (only when --dialect is given), cycle cap, memory budget and
  // program-ops limit (0 where unset: the fleet's default). `options` must not be null; it is
  // not kept. InvalidArgument for an unknown --dialect.
  absl::Status SetBatchOptions(v1::BatchOptions* options) const;

  const ProgramCommand command;

  // The program: `program` for a local command, `programs` (.masm files or directories)
  // for a fleet command.
  std::string program;
  std::vector<std::string> programs;
  // --replay: one snapshot for exec and profile (`replay`), any number for a fleet command
  // (`replays`). Record has no --replay.
  std::string replay;
  std::vector<std::string> replays;
  // --inputs (local commands only) and --kernel (a fleet command's: every program job's).
  std::string inputs;
  std::string kernel;
  // --lib NAMESPACE=DIR, repeatable.
  std::vector<std::string> libs;
  std::optional<uint64_t> max_cycles;       // --max-cycles N
  std::optional<uint64_t> max_memory;       // --max-memory BYTES
  std::optional<uint64_t> max_program_ops;  // --max-program-ops N
  // --dialect NAME ("v0.16"); empty: the default dialect (for a fleet command: the suite
  // manifest's, else the coordinator's default). Not with --replay: a snapshot names its own.
  std::string dialect;
  // --debug-print (local commands only; fleet jobs never print): the v0.25 core library's
  // `miden::core::debug::print_*` procedures print to stderr as miden-vm v0.25.7's do.
  bool debug_print = false;
};

// Parses `--lib NS=DIR` values into (namespace, directory) pairs. InvalidArgument names the
// bad value.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseLibraryFlags(
    const std::vector<std::string>& values);

// Finds the directory of a core library's MASM sources when no --lib names it: `env_dir`
// (the value of $MIDEN_CORE_LIB) if not empty, else the `asm` folder of the newest crate
// `<crate_prefix>*` under `<cargo_home>/registry/src/*/` (cargo_home: $CARGO_HOME, else
// ~/.cargo). NotFound, saying how to point at it (--lib NS=DIR or MIDEN_CORE_LIB, the upstream
// path crates/lib/core/asm), when there is none or `env_dir` is not a directory.
absl::StatusOr<std::string> FindCoreLibrary(absl::string_view ns, absl::string_view crate_prefix,
                                            const std::string& env_dir,
                                            const std::string& cargo_home);

// Returns FindCoreLibrary's answer for `dialect`'s core library namespace and crate, from the
// environment ($MIDEN_CORE_LIB, $CARGO_HOME or ~/.cargo). Errors as FindCoreLibrary.
absl::StatusOr<std::string> LocateCoreLibrary(vm::Dialect dialect);

// Checks the program arguments of a command that also accepts `--replay SNAPSHOT`: exactly
// one of `program` and `replay` is set, and a replay takes no inputs or libraries.
// InvalidArgument with a usage message otherwise.
absl::Status CheckReplayFlags(const std::string& program, const std::string& replay,
                              const std::string& inputs, const std::vector<std::string>& libs);

// Returns NAME.inputs or NAME.toml beside `program` if one exists (the Miden examples
// layout), else "".
std::string DefaultInputsPath(const std::string& program);

// Loads the inputs of `program`: from `inputs_flag` when set, else from the default file beside
// the program, else empty inputs; a JSON file's operand_stack is read in `stack_order` (the
// dialect's). Errors are those of vm::LoadInputs.
absl::StatusOr<vm::ProgramInputs> LoadProgramInputs(const std::string& program,
                                                    const std::string& inputs_flag,
                                                    vm::JsonStackOrder stack_order);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_PROGRAM_FLAGS_H_
