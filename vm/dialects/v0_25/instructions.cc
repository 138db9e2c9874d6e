// The v0.25 instruction table (crates/assembly/src/instruction/ at v0.25.7).
// TODO(#14): every mnemonic.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/statusor.h"
#include "vm/assembler/instruction_table.h"
#include "vm/dialects/v0_25/v0_25.h"

namespace flamefleet::vm::v0_25 {
namespace {

constexpr std::array<InstructionRow, 0> kRows{};

}  // namespace

const InstructionTable& Instructions() {
  static const InstructionTable* const table = [] {
    absl::StatusOr<InstructionTable> t = InstructionTable::Create(kRows, SystemEvents());
    if (!t.ok()) {  // a broken invariant of the static rows above
      std::fprintf(stderr, "v0.25 instructions: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    return new InstructionTable(*std::move(t));
  }();
  return *table;
}

}  // namespace flamefleet::vm::v0_25
