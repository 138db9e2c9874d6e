// libFuzzer target for the MASM parser under the v0.25 dialect (its SyntaxRules and instruction
// table): feeds arbitrary bytes to ParseModule as each module kind and discards the result. A
// failed parse also re-parses as v0.16 for the classic-syntax hint, so both grammars are
// exercised. The parser must never crash, hang, overflow the stack or allocate without bound;
// errors are expected and ignored.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFLAMEFLEET_FUZZ=ON
//   cmake --build build-fuzz --target masm_parser_v025_fuzz
//   ./build-fuzz/tests/fuzz/masm_parser_v025_fuzz -max_total_time=60 CORPUS \
//       tests/testdata/fuzz/v0_25
#include <cstddef>
#include <cstdint>
#include <string>

#include "vm/dialect.h"
#include "vm/parser/ast.h"
#include "vm/parser/parser.h"
#include "vm/parser/source_manager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using flamefleet::vm::ast::ModuleKind;
  const flamefleet::vm::DialectSpec& spec =
      flamefleet::vm::GetDialectSpec(flamefleet::vm::Dialect::kV0_25);
  flamefleet::vm::SourceManager sources;
  const uint32_t id =
      sources.Add("fuzz.masm", std::string(reinterpret_cast<const char*>(data), size));
  for (ModuleKind kind : {ModuleKind::kExecutable, ModuleKind::kLibrary, ModuleKind::kKernel}) {
    // The result (a module or an InvalidArgument error) is irrelevant here.
    (void)flamefleet::vm::ParseModule(sources, id, kind, spec);
  }
  return 0;
}
