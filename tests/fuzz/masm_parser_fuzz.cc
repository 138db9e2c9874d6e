// libFuzzer target for the MASM parser: feeds arbitrary bytes to ParseModule as
// each module kind and discards the result. The parser must never crash, hang,
// overflow the stack or allocate without bound; errors are expected and
// ignored.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. \
//       vm/parser/*.cc tests/fuzz/masm_parser_fuzz.cc $(pkg-config ... absl
//       ...) -o fuzz
//   ./fuzz -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string>

#include "vm/dialects/v0_16/v0_16.h"
#include "vm/parser/ast.h"
#include "vm/parser/parser.h"
#include "vm/parser/source_manager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  flamefleet::vm::SourceManager sources;
  const uint32_t id =
      sources.Add("fuzz.masm", std::string(reinterpret_cast<const char*>(data), size));
  for (flamefleet::vm::ast::ModuleKind kind :
       {flamefleet::vm::ast::ModuleKind::kExecutable, flamefleet::vm::ast::ModuleKind::kLibrary,
        flamefleet::vm::ast::ModuleKind::kKernel}) {
    // The result (a module or an InvalidArgument error) is irrelevant here.
    (void)flamefleet::vm::ParseModule(sources, id, kind, flamefleet::vm::v0_16::Instructions());
  }
  return 0;
}
