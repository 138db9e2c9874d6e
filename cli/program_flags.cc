#include "cli/program_flags.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "cli/project.h"
#include "common/status_macros.h"
#include "vm/dialect.h"

namespace flamefleet::cli {
namespace {

// How one flag's help reads for each command; "" leaves the flag off that command.
struct HelpRow {
  const char* exec;
  const char* profile;
  const char* record;
  const char* fleet;  // submit and run
};

const char* HelpFor(const HelpRow& row, ProgramCommand command) {
  switch (command) {
    case ProgramCommand::kExec:
      return row.exec;
    case ProgramCommand::kProfile:
      return row.profile;
    case ProgramCommand::kRecord:
      return row.record;
    case ProgramCommand::kSubmit:
    case ProgramCommand::kRun:
      return row.fleet;
  }
  return "";
}

constexpr char kProgramHelp[] = "MASM program (.masm)";
constexpr char kShortInputsHelp[] =
    "inputs file (.inputs JSON or .toml); default: beside the program";
constexpr char kLibHelp[] = "library NAMESPACE=DIR (repeatable)";
constexpr char kKernelHelp[] = "kernel module (.masm) for `syscall`";
constexpr char kMaxCyclesHelp[] = "stop with an error after N cycles";

constexpr HelpRow kPrograms = {kProgramHelp, kProgramHelp, kProgramHelp,
                               ".masm files or directories (searched recursively)"};
constexpr HelpRow kReplay = {
    "replay a snapshot (flamefleet record) instead of running a program",
    "profile a replay of a snapshot (flamefleet record) instead of a program", "",
    "replay snapshot files (flamefleet record); may be mixed with programs"};
constexpr HelpRow kInputs = {
    "inputs file: miden-vm JSON (.inputs) or miden-debug TOML (.toml); default: "
    "PROGRAM.inputs or PROGRAM.toml beside the program",
    kShortInputsHelp, kShortInputsHelp, ""};
constexpr HelpRow kLib = {"library NAMESPACE=DIR (repeatable), e.g. std=DIR", kLibHelp, kLibHelp,
                          "library NAMESPACE=DIR sent with the batch (repeatable)"};
constexpr HelpRow kKernel = {
    kKernelHelp, kKernelHelp, "kernel module (.masm) for `syscall` (recorded in the snapshot)",
    "kernel module (.masm) of every program job, sent with its `mod` submodules"};
constexpr HelpRow kMaxCycles = {kMaxCyclesHelp, kMaxCyclesHelp, kMaxCyclesHelp,
                                "cycle cap per job"};
constexpr char kDebugPrintHelp[] =
    "print to stderr what the v0.25 core library's debug procedures (miden::core::debug::"
    "print_stack, print_mem, print_mem_all, print_adv_stack, print_adv_map, "
    "print_adv_map_item) show, as miden-vm v0.25.7 prints it; without it they print nothing "
    "and cost the same cycles (v0.16 `debug.*` decorators are not printed)";

}  // namespace

bool ProgramFlags::local() const {
  return command != ProgramCommand::kSubmit && command != ProgramCommand::kRun;
}

void ProgramFlags::Add(CLI::App* cmd) {
  const bool here = local();
  if (here) {
    CLI::Option* positional = cmd->add_option("program", program, HelpFor(kPrograms, command));
    if (command == ProgramCommand::kRecord) positional->required();
  } else {
    cmd->add_option("programs", programs, HelpFor(kPrograms, command));
  }
  if (command == ProgramCommand::kExec || command == ProgramCommand::kProfile) {
    cmd->add_option("--replay", replay, HelpFor(kReplay, command));
  } else if (!here) {
    cmd->add_option("--replay", replays, HelpFor(kReplay, command));
  }
  if (here) cmd->add_option("--inputs", inputs, HelpFor(kInputs, command));
  cmd->add_option("--lib", libs, HelpFor(kLib, command));
  cmd->add_option("--kernel", kernel, HelpFor(kKernel, command));
  cmd->add_option("--max-cycles", max_cycles, HelpFor(kMaxCycles, command));
  if (here) {
    cmd->add_option("--max-memory", max_memory,
                    absl::StrCat("memory budget per run in bytes: VM memory, advice, operand and "
                                 "call stacks (default ",
                                 vm::kDefaultMaxMemoryBytes, " = 1 GiB); over it the run fails"));
    cmd->add_option("--max-program-ops", max_program_ops,
                    absl::StrCat("refuse a program whose repeats expand past N operations "
                                 "(default ",
                                 vm::kDefaultMaxProgramOps, ")"));
  } else {
    cmd->add_option("--max-memory", max_memory,
                    "memory budget per job in bytes: VM memory, advice, operand and call stacks "
                    "(0: the worker's default, 1 GiB; the coordinator's --max-memory-cap is the "
                    "ceiling)");
    cmd->add_option("--max-program-ops", max_program_ops,
                    absl::StrCat("refuse a program whose repeats expand past N operations "
                                 "(0: the default, ",
                                 vm::kDefaultMaxProgramOps, ")"));
  }
  if (here) cmd->add_flag("--debug-print", debug_print, kDebugPrintHelp);
  if (here) {
    cmd->add_option(
        "--dialect", dialect,
        absl::StrCat("Miden dialect the program is written in: ", vm::DialectNamesForHelp(),
                     " (default ", vm::DialectName(vm::kDefaultDialect), ")"));
  } else {
    cmd->add_option(
        "--dialect", dialect,
        absl::StrCat("Miden dialect of the programs whose suite manifest names none: ",
                     vm::DialectNamesForHelp(), " (default ", vm::DialectName(vm::kDefaultDialect),
                     "; snapshots run under their own)"));
  }
}

absl::StatusOr<vm::Dialect> ProgramFlags::Dialect() const {
  if (dialect.empty()) return vm::kDefaultDialect;
  absl::StatusOr<vm::Dialect> parsed = vm::ParseDialect(dialect);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--dialect: ", parsed.status().message()));
  }
  return *parsed;
}

absl::StatusOr<vm::AssemblerOptions> ProgramFlags::AssemblerOptions() const {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> parsed = ParseLibraryFlags(libs);
  if (!parsed.ok()) return parsed.status();
  vm::AssemblerOptions options;
  options.libraries = *std::move(parsed);
  options.kernel_path = kernel;
  FLAMEFLEET_ASSIGN_OR_RETURN(options.dialect, Dialect());
  const vm::SyntaxRules& rules = *vm::GetDialectSpec(options.dialect).syntax;
  const std::string ns(rules.core_library_namespace);
  const bool mapped = std::any_of(options.libraries.begin(), options.libraries.end(),
                                  [&](const auto& lib) { return lib.first == ns; });
  // The core library is mapped wherever it is found (the linker reads only the modules that
  // are imported, so the program and its --lib libraries alike may use it); not finding it is an
  // error only when the program names it.
  if (!ns.empty() && !mapped && !program.empty()) {
    absl::StatusOr<std::string> dir = LocateCoreLibrary(options.dialect);
    if (dir.ok()) {
      options.libraries.emplace_back(ns, *std::move(dir));
    } else {
      std::ifstream in(program, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find(absl::StrCat(ns, "::")) != std::string::npos) return dir.status();
    }
  }
  return options;
}

absl::StatusOr<std::string> LocateCoreLibrary(vm::Dialect dialect) {
  const vm::SyntaxRules& rules = *vm::GetDialectSpec(dialect).syntax;
  const char* env = std::getenv("MIDEN_CORE_LIB");
  const char* cargo = std::getenv("CARGO_HOME");
  const char* home = std::getenv("HOME");
  std::string cargo_home = cargo != nullptr && *cargo != '\0' ? cargo
                           : home != nullptr                  ? absl::StrCat(home, "/.cargo")
                                                              : "";
  return FindCoreLibrary(rules.core_library_namespace, rules.core_library_crate_prefix,
                         env != nullptr ? env : "", cargo_home);
}

absl::StatusOr<std::string> FindCoreLibrary(absl::string_view ns, absl::string_view crate_prefix,
                                            const std::string& env_dir,
                                            const std::string& cargo_home) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string how =
      absl::StrCat("pass --lib ", ns,
                   "=DIR or set MIDEN_CORE_LIB=DIR, DIR being the core "
                   "library's MASM sources (crates/lib/core/asm of 0xMiden/miden-vm, or asm/ of "
                   "the ",
                   crate_prefix, "* crate)");
  if (!env_dir.empty()) {
    if (!fs::is_directory(env_dir, ec)) {
      return absl::NotFoundError(
          absl::StrCat("MIDEN_CORE_LIB=", env_dir, " is not a directory: ", how));
    }
    return env_dir;
  }
  std::vector<std::string> found;
  const fs::path registry = fs::path(cargo_home) / "registry" / "src";
  if (!cargo_home.empty() && fs::is_directory(registry, ec)) {
    for (const fs::directory_entry& index : fs::directory_iterator(registry, ec)) {
      std::error_code ec2;
      for (const fs::directory_entry& crate : fs::directory_iterator(index.path(), ec2)) {
        const std::string name = crate.path().filename().string();
        std::error_code ec3;
        if (name.rfind(std::string(crate_prefix), 0) == 0 &&
            fs::is_directory(crate.path() / "asm", ec3)) {
          found.push_back((crate.path() / "asm").string());
        }
      }
    }
  }
  if (found.empty()) {
    return absl::NotFoundError(
        absl::StrCat("the program uses ", ns, " but no core library was found (no --lib ", ns,
                     ", no MIDEN_CORE_LIB, no ", crate_prefix, "* crate in ",
                     cargo_home.empty() ? "the cargo registry" : registry.string(), "): ", how));
  }
  // The newest version: the greatest name (versions of one minor differ in the patch number).
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return found.back();
}

vm::AssembleLimits ProgramFlags::AssembleLimits() const {
  vm::AssembleLimits limits;
  if (max_program_ops.has_value()) limits.max_program_ops = *max_program_ops;
  return limits;
}

vm::ExecutionOptions ProgramFlags::ExecutionOptions() const {
  vm::ExecutionOptions options;
  if (max_cycles.has_value()) options.max_cycles = *max_cycles;
  if (max_memory.has_value()) options.max_memory_bytes = *max_memory;
  options.debug_print = DebugPrintStream();
  return options;
}

std::ostream* ProgramFlags::DebugPrintStream() const { return debug_print ? &std::cerr : nullptr; }

absl::StatusOr<vm::ProgramInputs> ProgramFlags::LoadInputs() const {
  FLAMEFLEET_ASSIGN_OR_RETURN(const vm::Dialect named, Dialect());
  return LoadProgramInputs(program, inputs, vm::GetDialectSpec(named).json_stack_order);
}

absl::Status ProgramFlags::CheckReplay() const {
  FLAMEFLEET_RETURN_IF_ERROR(CheckAcceptedInput(program));
  FLAMEFLEET_RETURN_IF_ERROR(CheckAcceptedInput(replay));
  FLAMEFLEET_RETURN_IF_ERROR(CheckReplayFlags(program, replay, inputs, libs));
  if (!replay.empty() && !dialect.empty()) {
    return absl::InvalidArgumentError(
        "--dialect cannot be used with --replay: the snapshot records its own");
  }
  return absl::OkStatus();
}

absl::Status ProgramFlags::SetBatchOptions(v1::BatchOptions* options) const {
  FLAMEFLEET_ASSIGN_OR_RETURN(const vm::Dialect named, Dialect());
  // Unnamed stays unnamed on the wire: the coordinator then applies its default.
  options->set_dialect(dialect.empty() ? "" : std::string(vm::DialectName(named)));
  options->set_max_cycles(max_cycles.value_or(0));
  options->set_max_memory_bytes(max_memory.value_or(0));
  options->set_max_program_ops(max_program_ops.value_or(0));
  return absl::OkStatus();
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

absl::StatusOr<vm::ProgramInputs> LoadProgramInputs(const std::string& program,
                                                    const std::string& inputs_flag,
                                                    vm::JsonStackOrder stack_order) {
  std::string path = inputs_flag.empty() ? DefaultInputsPath(program) : inputs_flag;
  if (path.empty()) return vm::ProgramInputs{};
  return vm::LoadInputs(path, stack_order);
}

}  // namespace flamefleet::cli
