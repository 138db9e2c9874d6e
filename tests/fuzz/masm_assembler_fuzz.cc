// libFuzzer target for the whole front end and the executor under the classic v0.16 dialect
// (masm_assembler_v025_fuzz covers v0.25): assembles arbitrary bytes as an
// executable MASM module and, when that succeeds, runs the program under a small cycle cap.
// Errors are expected; crashes, hangs, sanitizer reports and unbounded allocation are bugs.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFLAMEFLEET_FUZZ=ON
//   cmake --build build-fuzz --target masm_assembler_fuzz
//   ./build-fuzz/tests/fuzz/masm_assembler_fuzz -max_total_time=60 NEW_CORPUS_DIR tests/testdata
#include <cstddef>
#include <cstdint>
#include <string>

#include "vm/vm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flamefleet::vm;  // NOLINT(google-build-using-namespace): test driver
  if (size > 64 * 1024) return 0;
  AssemblerOptions assembler_options;
  assembler_options.dialect = Dialect::kV0_16;
  Assembler assembler(assembler_options);
  absl::StatusOr<Program> program =
      assembler.AssembleSource("fuzz.masm", std::string(reinterpret_cast<const char*>(data), size));
  if (!program.ok()) return 0;
  ExecutionOptions options;
  options.max_cycles = 20000;
  options.max_stack_depth = 1 << 16;
  ProgramInputs inputs;
  (void)RunProgram(*program, inputs, options);
  return 0;
}
