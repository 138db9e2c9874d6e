// Linearisation of a MAST forest into the executor's flat instruction array (the layout is
// documented in vm/assembler/program.h). Internal to the assembler.
#ifndef FLAMEFLEET_VM_ASSEMBLER_LINEARIZE_H_
#define FLAMEFLEET_VM_ASSEMBLER_LINEARIZE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/program.h"

namespace flamefleet::vm {

// Appends the code for `entry` (and every procedure and shared subtree it reaches, each emitted
// once as a subroutine) to program->code / source_index and fills procedure entry points.
// `procedure_roots[p]` is the root item of procedure p. Returns ResourceExhausted when the
// code would exceed the size limit. Every procedure in program->dyn_targets is also emitted as a
// subroutine (DYN / DYNCALL may enter it).
absl::Status Linearize(const MastForest& forest, const std::vector<MastItem>& procedure_roots,
                       MastItem entry, Program* program);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_LINEARIZE_H_
