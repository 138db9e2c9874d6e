// Dialects: the versions of Miden Assembly and of the Miden VM that flamefleet's VM speaks.
//
// One VM runs every dialect. Everything that differs between dialects is data held by an
// immutable DialectSpec, defined in the dialect's own folder vm/dialects/<name>/: the
// instruction table (syntax and lowering of each mnemonic), the wire opcode table (the MAST
// encoding of each native operation), the MAST rules (op groups, batches, loop shape, locals,
// entry prologue), the native hash, the system events, how `.inputs` files order the operand
// stack, and the engine version that keys cached results. The parser, assembler and executor are
// dialect-free: they read the spec of the program they work on, and a Program keeps a pointer to
// its spec, so no program can run under the wrong dialect.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::Dialect dialect, vm::ParseDialect(flag_value));  // "v0.16"
//   const vm::DialectSpec& spec = vm::GetDialectSpec(dialect);
//   vm::Assembler assembler({.dialect = dialect});
//
// Adding a dialect: add a row to FLAMEFLEET_VM_DIALECTS below and a folder vm/dialects/<ns>/
// whose Spec() returns its DialectSpec (see docs/vm/dialects.md).
#ifndef FLAMEFLEET_VM_DIALECT_H_
#define FLAMEFLEET_VM_DIALECT_H_

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/assembler/instruction_table.h"
#include "vm/assembler/mast_rules.h"
#include "vm/assembler/opcodes.h"
#include "vm/crypto/hasher.h"
#include "vm/executor/system_events.h"
#include "vm/executor/trace_shape_rules.h"
#include "vm/parser/syntax_rules.h"

namespace flamefleet::vm {

// Every dialect: X(Enumerator, "name", namespace of vm/dialects/<namespace>/).
#define FLAMEFLEET_VM_DIALECTS(X) \
  X(V0_16, "v0.16", v0_16)        \
  X(V0_25, "v0.25", v0_25)

enum class Dialect : uint8_t {
#define FLAMEFLEET_VM_DIALECT_ENUM(e, name, ns) k##e,
  FLAMEFLEET_VM_DIALECTS(FLAMEFLEET_VM_DIALECT_ENUM)
#undef FLAMEFLEET_VM_DIALECT_ENUM
};

// The dialect used where none is named (a command without --dialect, a manifest without
// `dialect`, a job that names none): v0.25, the dialect Miden developers write today.
inline constexpr Dialect kDefaultDialect = Dialect::kV0_25;

// The dialect of what was written before dialects were named (a replay snapshot without a
// dialect field): v0.16, whatever the default becomes.
inline constexpr Dialect kUnnamedLegacyDialect = Dialect::kV0_16;

// How the miden-vm JSON `.inputs` format lists `operand_stack`.
enum class JsonStackOrder : uint8_t {
  kLastOnTop,   // the last element ends on top of the stack
  kFirstOnTop,  // the first element is the top
};

struct DialectSpec {
  Dialect dialect;
  absl::string_view name;  // "v0.16": what --dialect, manifests and snapshots say
  // Identifies the behaviour of the VM and profiler for this dialect: it changes whenever a
  // program's stack, cycles or profile could come out differently, so that cached results are
  // not reused across versions.
  absl::string_view engine_version;
  // Every mnemonic's syntax and lowering; its events() are `events` below.
  const InstructionTable* instructions;
  // System events: EMIT ids the VM answers itself (the rest go to the Host).
  const SystemEventTable* events;
  // The MAST encoding of each native operation (kNotNative for executor-only operations).
  const WireOpcodeTable* wire;
  // Op groups and batches, block merging, loop shape, locals, entry prologue, DYN digests.
  const MastRules* mast;
  // The native hash: MAST digests, the Merkle store, hash events.
  const Hasher* hasher;
  JsonStackOrder json_stack_order;
  // The surface grammar and module layout: declaration forms, loops, slices, limits.
  const SyntaxRules* syntax;
  // How the dialect's prover shapes its traces (vm/executor/trace_shape.h); null when the
  // trace-shape model does not describe the dialect's VM.
  const TraceShapeRules* trace_shape = nullptr;
};

// Returns the spec of `dialect`. The result lives for the whole process; thread-safe.
const DialectSpec& GetDialectSpec(Dialect dialect);

// Returns the dialect's name ("v0.16").
absl::string_view DialectName(Dialect dialect);

// Parses a dialect name as written by users: "v0.16" (or "0.16"). Returns InvalidArgument
// listing the known dialects otherwise.
absl::StatusOr<Dialect> ParseDialect(absl::string_view name);

// Every dialect, in declaration order.
std::span<const Dialect> AllDialects();

// Returns "v0.16" (the known names, comma-separated), for help texts and errors.
absl::string_view DialectNamesForHelp();

}  // namespace flamefleet::vm

// Each dialect folder defines its spec: namespace flamefleet::vm::<ns> { const DialectSpec&
// Spec(); }.
#define FLAMEFLEET_VM_DIALECT_SPEC_DECL(e, name, ns) \
  namespace flamefleet::vm::ns {                     \
  const ::flamefleet::vm::DialectSpec& Spec();       \
  }
FLAMEFLEET_VM_DIALECTS(FLAMEFLEET_VM_DIALECT_SPEC_DECL)
#undef FLAMEFLEET_VM_DIALECT_SPEC_DECL

#endif  // FLAMEFLEET_VM_DIALECT_H_
