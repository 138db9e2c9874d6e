// The v0.16 dialect: classic Miden Assembly and Miden VM v0.16.4 (RPO-256 hashing).
#include "vm/crypto/rpo.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_16/v0_16.h"

namespace flamefleet::vm::v0_16 {
namespace {

// Classic MASM, plus the v0.20 surface forms flamefleet has always accepted.
constexpr SyntaxRules kSyntax{};

}  // namespace

const DialectSpec& Spec() {
  static const DialectSpec spec{
      .dialect = Dialect::kV0_16,
      .name = "v0.16",
      // r3: the memory budget and the repeat expansion limit can fail programs that ran before.
      .engine_version = "flamefleet-vm v0.16 r3",
      .instructions = &Instructions(),
      .events = &SystemEvents(),
      .wire = &WireOpcodes(),
      .mast = &MastRules(),
      .hasher = &RpoHasher::Get(),
      .json_stack_order = JsonStackOrder::kLastOnTop,
      .syntax = &kSyntax,
      .trace_shape = nullptr,  // v0.16 traces are not modelled (docs/trace-shape.md)
  };
  return spec;
}

}  // namespace flamefleet::vm::v0_16
