// engine_dump: prints everything the VM computes for a set of MASM programs, in a stable text
// form, so that two builds of flamefleet can be compared byte for byte
// (scripts/compare-engines.sh). A refactor of the VM must leave this output unchanged.
//
//   engine_dump --corpus tests/testdata/vm --dialect v0.16  # every NAME.masm with NAME.expect.json
//   engine_dump --corpus tests/testdata/vm/v0_25 --dialect v0.25
//   engine_dump --suite examples/v0_16 --dialect v0.16 --lib ex=examples/v0_16/lib
//
// Every program is assembled under --dialect (default: the default dialect).
//
// For each program: the assembly error, or every procedure (name, MAST root, entry pc), the
// linearised code (opcode name, aux, imm per instruction), then the run's final stack and cycle
// count or its error, and the nested and flat folded profiles.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "profile/folded.h"
#include "runner/runner.h"
#include "vm/vm.h"

namespace fs = std::filesystem;
using namespace flamefleet;

namespace {

struct Case {
  fs::path program;
  vm::AssemblerOptions assembler;
  vm::ProgramInputs inputs;
  vm::ExecutionOptions options;
  std::string error;  // set when the case cannot be loaded
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Hex(const vm::Word& w) {
  std::string out = "0x";
  for (const vm::Felt& f : w) absl::StrAppendFormat(&out, "%016x", f.value());
  return out;
}

void LoadInputsBeside(Case* c) {
  for (const char* ext : {".inputs", ".toml"}) {
    fs::path in = c->program;
    in.replace_extension(ext);
    if (!fs::exists(in)) continue;
    absl::StatusOr<vm::ProgramInputs> loaded =
        vm::LoadInputs(in.string(), vm::GetDialectSpec(c->assembler.dialect).json_stack_order);
    if (loaded.ok()) {
      c->inputs = *std::move(loaded);
    } else {
      c->error = std::string(loaded.status().message());
    }
  }
}

void DumpProfile(const vm::Program& program, const Case& c, runner::StackMode mode,
                 const char* label, std::ostream& out) {
  absl::StatusOr<runner::ProfiledRun> run =
      runner::ProfileProgram(program, c.inputs, c.options, mode);
  if (!run.ok()) return;  // the error is printed by the run section
  out << "folded " << label << ":\n";
  std::ostringstream folded;
  if (!profile::WriteFolded(run->profile, folded).ok()) out << "  (folded write failed)\n";
  out << folded.str();
}

void Dump(const fs::path& root, const Case& c, std::ostream& out) {
  out << "== " << fs::relative(c.program, root).string() << "\n";
  if (!c.error.empty()) {
    out << "load error: " << c.error << "\n";
    return;
  }
  vm::Assembler assembler(c.assembler);
  absl::StatusOr<vm::Program> program = assembler.AssembleFile(c.program.string());
  if (!program.ok()) {
    out << "assembly error: " << program.status() << "\n";
    return;
  }
  out << "procedures " << program->procedures.size() << " entry " << program->entry_procedure
      << " mast_nodes " << program->num_mast_nodes << " basic_blocks " << program->num_basic_blocks
      << "\n";
  for (const vm::ProcedureInfo& p : program->procedures) {
    out << "  " << p.name << " root=" << Hex(p.mast_root) << " entry_pc=" << p.entry_pc
        << " subroutine=" << p.is_subroutine << "\n";
  }
  out << "code " << program->code.size() << "\n";
  for (size_t pc = 0; pc < program->code.size(); ++pc) {
    const vm::Instruction& inst = program->code[pc];
    out << "  " << pc << " " << vm::OpcodeName(inst.opcode) << " " << inst.aux << " " << inst.imm
        << "\n";
  }
  absl::StatusOr<vm::RunResult> result = vm::RunProgram(*program, c.inputs, c.options);
  if (!result.ok()) {
    out << "run error: " << result.status() << "\n";
    return;
  }
  out << "stack";
  for (const vm::Felt& f : result->stack) out << " " << f.value();
  out << "\ncycles " << result->cycles << "\n";
  DumpProfile(*program, c, runner::StackMode::kNested, "nested", out);
  DumpProfile(*program, c, runner::StackMode::kFlat, "flat", out);
}

std::vector<fs::path> MasmFiles(const fs::path& dir, bool recursive) {
  std::vector<fs::path> out;
  auto add = [&](const fs::directory_entry& e) {
    if (e.is_regular_file() && e.path().extension() == ".masm") out.push_back(e.path());
  };
  if (recursive) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) add(e);
  } else {
    for (const auto& e : fs::directory_iterator(dir)) add(e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A corpus program: libraries, kernel and cycle cap come from its NAME.expect.json.
Case CorpusCase(const fs::path& program, vm::Dialect dialect) {
  Case c;
  c.program = program;
  c.assembler.dialect = dialect;
  fs::path expect_path = program;
  expect_path.replace_extension(".expect.json");
  nlohmann::json expect = nlohmann::json::parse(Slurp(expect_path), nullptr, false);
  if (expect.is_discarded()) {
    c.error = "unparsable " + expect_path.string();
    return c;
  }
  if (expect.contains("libs")) {
    for (auto& [ns, dir] : expect["libs"].items()) {
      c.assembler.libraries.emplace_back(
          ns, (program.parent_path() / dir.get<std::string>()).lexically_normal().string());
    }
  }
  if (expect.contains("kernel")) {
    c.assembler.kernel_path =
        (program.parent_path() / expect["kernel"].get<std::string>()).lexically_normal().string();
  }
  if (expect.contains("max_cycles")) c.options.max_cycles = expect["max_cycles"].get<uint64_t>();
  LoadInputsBeside(&c);
  return c;
}

int Usage() {
  std::cerr << "usage: engine_dump (--corpus DIR | --suite DIR [--lib NS=DIR]...) "
               "[--dialect D]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 2) return Usage();
  const std::string mode = args[0];
  const fs::path dir = args[1];
  std::vector<std::pair<std::string, std::string>> libs;
  vm::Dialect dialect = vm::kDefaultDialect;
  for (size_t i = 2; i + 1 < args.size(); i += 2) {
    if (args[i] == "--dialect") {
      absl::StatusOr<vm::Dialect> named = vm::ParseDialect(args[i + 1]);
      if (!named.ok()) {
        std::cerr << "engine_dump: " << named.status().message() << "\n";
        return 2;
      }
      dialect = *named;
      continue;
    }
    if (args[i] != "--lib") return Usage();
    const size_t eq = args[i + 1].find('=');
    if (eq == std::string::npos) return Usage();
    libs.emplace_back(args[i + 1].substr(0, eq), args[i + 1].substr(eq + 1));
  }
  if (mode == "--corpus") {
    for (const fs::path& p : MasmFiles(dir, /*recursive=*/true)) {
      fs::path expect = p;
      expect.replace_extension(".expect.json");
      if (fs::exists(expect)) Dump(dir, CorpusCase(p, dialect), std::cout);
    }
  } else if (mode == "--suite") {
    for (const fs::path& p : MasmFiles(dir, /*recursive=*/false)) {
      Case c;
      c.program = p;
      c.assembler.dialect = dialect;
      c.assembler.libraries = libs;
      LoadInputsBeside(&c);
      Dump(dir, c, std::cout);
    }
  } else {
    return Usage();
  }
  return 0;
}
