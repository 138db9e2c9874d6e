// For tests written in classic v0.16 MASM: since v0.25 became the default dialect, a test whose
// programs, expected stacks and cycles are v0.16's names the dialect through these.
#ifndef FLAMEFLEET_TESTS_TESTING_CLASSIC_H_
#define FLAMEFLEET_TESTS_TESTING_CLASSIC_H_

#include "vm/assembler/assembler.h"
#include "vm/dialect.h"

namespace flamefleet::testutil {

// Assembler options for the classic dialect, everything else at its default.
inline vm::AssemblerOptions ClassicOptions() {
  vm::AssemblerOptions options;
  options.dialect = vm::Dialect::kV0_16;
  return options;
}

}  // namespace flamefleet::testutil

#endif  // FLAMEFLEET_TESTS_TESTING_CLASSIC_H_
