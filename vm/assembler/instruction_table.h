// The instruction table of a Miden dialect: one row per mnemonic, holding both what the parser
// needs (the syntax: how the instruction takes its immediates) and how the assembler lowers it
// to native operations (a plain function pointer). The parser and LowerInstruction are generic
// drivers over a table; a dialect (vm/dialects/<name>/) supplies the rows. The table also
// names the dialect's system events, which `adv.<event>` instructions refer to.
//
//   const InstructionTable& table = *GetDialectSpec(dialect).instructions;  // vm/dialect.h
//   if (const InstructionRow* row = table.Find("u32wrapping_add")) {
//     // row->form == Form::kU32: an optional u32 immediate
//   }
//   absl::StatusOr<ast::Module> m = ParseModule(sources, id, kind, table);
//
// Rows are static data. A table is immutable after Create and safe to read from any number of
// threads.
#ifndef FLAMEFLEET_VM_ASSEMBLER_INSTRUCTION_TABLE_H_
#define FLAMEFLEET_VM_ASSEMBLER_INSTRUCTION_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm {

// How an instruction takes its immediates (what the parser accepts after the mnemonic).
enum class Form : uint8_t {
  kPlain,               // no immediates
  kErr,                 // optional `.err=<string|CONST|number>`
  kFelt,                // optional felt immediate (literal or constant)
  kFeltNonZero,         // as kFelt, but a literal 0 is "division by zero"
  kU32,                 // optional u32 immediate (literal or constant)
  kU32NonZero,          // as kU32, but a literal 0 is "division by zero"
  kShift,               // optional shift amount: literal in [min, max] or constant
  kU32Required,         // required u32 immediate
  kLocal,               // required local index: u16 literal or constant
  kStackIndex,          // optional literal stack index in [min, max]
  kStackIndexRequired,  // required literal stack index in [min, max]
  kAdvPush,             // required literal count in [min, max]
  kPush,                // 1..16 values (felts, words or constants)
  kInvoke,              // `.target`
  kExp,                 // exp, exp.<felt>, exp.uN (the AST name of the last is "exp.u")
  kAdv,                 // adv.<system event> (the AST name is "adv.<event>")
  kDebug,               // debug.<kind>[.a[.b]] (the AST name is "debug.<kind>")
  kEvent,  // optional event: `.CONST` (an event constant) or `.event("name")` (v0.25 emit)
};

namespace lowering {
class Lowering;  // vm/assembler/internal/lower_helpers.h
}  // namespace lowering

// Lowers one instruction: reads it and its context from `l` and appends native operations
// through `l.emit()`. Returns InvalidArgument (a plain message, no location) for assembly
// errors. A plain function pointer, so lowering costs no virtual call or std::function.
using LowerFn = absl::Status (*)(lowering::Lowering& l);

// One mnemonic of a dialect.
struct InstructionRow {
  std::string_view name;  // the mnemonic, e.g. "u32wrapping_add", "adv", "exp"
  Form form;
  uint32_t min;  // range of the literal immediate for kShift, kStackIndex*, kAdvPush, kLocal
  uint32_t max;
  // Null for instructions that become MAST nodes (exec, call, syscall, procref, dynexec,
  // dyncall): the assembler builds those itself and LowerInstruction refuses them.
  LowerFn lower;
};

// Returns true if the names of `rows` are strictly increasing (sorted and unique). Dialects
// static_assert it on their row arrays; InstructionTable::Create checks it again.
constexpr bool RowsSortedAndUnique(std::span<const InstructionRow> rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (!(rows[i - 1].name < rows[i].name)) return false;
  }
  return true;
}

// A dialect's mnemonics, sorted by name for binary search.
class InstructionTable {
 public:
  // Builds a table over `rows` and `events`, both kept by reference (they must outlive the
  // table; a dialect passes static data). Returns InvalidArgument naming the first offending
  // row if the names are not strictly increasing (unsorted or duplicate) or a name is empty.
  static absl::StatusOr<InstructionTable> Create(std::span<const InstructionRow> rows,
                                                 const SystemEventTable& events);

  // Returns the row of mnemonic `name` as the parser sees it ("adv", "debug", "exp"), or null
  // if the dialect has no such instruction. O(log n).
  const InstructionRow* Find(absl::string_view name) const;

  // Returns the row of an ast::Instruction named `instruction_name`, or null. Unlike Find it
  // understands the AST's dotted names: "adv.<event>" and "debug.<kind>" find the kAdv and
  // kDebug rows (and the bare "adv" / "debug" find nothing, as the AST never holds them);
  // "exp.u" finds the kExp row. The row's lowering checks the suffix.
  const InstructionRow* FindForInstruction(absl::string_view instruction_name) const;

  // The dialect's system events (the names `adv.<event>` may use).
  const SystemEventTable& events() const { return *events_; }
  // Every row, by name.
  std::span<const InstructionRow> rows() const { return rows_; }

 private:
  InstructionTable(std::span<const InstructionRow> rows, const SystemEventTable& events)
      : rows_(rows), events_(&events) {}

  std::span<const InstructionRow> rows_;
  const SystemEventTable* events_;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_INSTRUCTION_TABLE_H_
