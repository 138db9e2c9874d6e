#include "vm/assembler/internal/stack_lowering.h"

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "vm/assembler/internal/lower_helpers.h"
#include "vm/assembler/opcodes.h"

namespace flamefleet::vm::lowering {
namespace {

using enum Opcode;

// DUPn, MOVUPn and MOVDNn by n (NOOP where the VM has no such operation).
constexpr std::array<Opcode, 16> kDup = {kDup0, kDup1, kDup2, kDup3,  kDup4, kDup5,  kDup6, kDup7,
                                         kNoop, kDup9, kNoop, kDup11, kNoop, kDup13, kNoop, kDup15};
constexpr std::array<Opcode, 9> kMovUp = {kNoop,   kNoop,   kMovUp2, kMovUp3, kMovUp4,
                                          kMovUp5, kMovUp6, kMovUp7, kMovUp8};
constexpr std::array<Opcode, 9> kMovDn = {kNoop,   kNoop,   kMovDn2, kMovDn3, kMovDn4,
                                          kMovDn5, kMovDn6, kMovDn7, kMovDn8};

}  // namespace

absl::Status LowerDup(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(0, 15, 0));
  if (n == 8 || n == 10 || n == 12 || n == 14) {
    l.emit().Ops({kPad, kDup[n + 1], kAdd});
  } else {
    l.emit().Op(kDup[n]);
  }
  return absl::OkStatus();
}

absl::Status LowerDupw(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(0, 3, 0));
  l.emit().Times(kDup[4 * n + 3], 4);
  return absl::OkStatus();
}

absl::Status LowerSwap(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(1, 15, 1));
  Emitter& e = l.emit();
  if (n == 1) {
    e.Op(kSwap);
  } else if (n == 2) {
    e.Ops({kSwap, kMovUp2});
  } else if (n <= 8) {
    e.Ops({kMovDn[n - 1], kMovUp[n]});
  } else {
    e.Ops({kMovDn8, kSwapDW});
    if (n == 9) {
      e.Op(kSwap);
    } else if (n == 10) {
      e.Ops({kSwap, kMovUp2});
    } else {
      e.Ops({kMovDn[n - 9], kMovUp[n - 8]});
    }
    e.Ops({kSwapDW, kMovUp8});
  }
  return absl::OkStatus();
}

absl::Status LowerSwapw(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(1, 3, 1));
  l.emit().Op(n == 1 ? kSwapW : n == 2 ? kSwapW2 : kSwapW3);
  return absl::OkStatus();
}

absl::Status LowerMovup(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(2, 15, std::nullopt));
  if (n <= 8) {
    l.emit().Op(kMovUp[n]);
  } else {
    l.emit().Ops({kSwapDW, n == 9 ? kSwap : kMovUp[n - 8], kSwapDW, kMovUp8});
  }
  return absl::OkStatus();
}

absl::Status LowerMovdn(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(2, 15, std::nullopt));
  if (n <= 8) {
    l.emit().Op(kMovDn[n]);
  } else {
    l.emit().Ops({kMovDn8, kSwapDW, n == 9 ? kSwap : kMovDn[n - 8], kSwapDW});
  }
  return absl::OkStatus();
}

absl::Status LowerMovupw(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(2, 3, std::nullopt));
  l.emit().Ops({kSwapW, kSwapW2});
  if (n == 3) l.emit().Op(kSwapW3);
  return absl::OkStatus();
}

absl::Status LowerMovdnw(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, l.StackIndex(2, 3, std::nullopt));
  if (n == 3) l.emit().Op(kSwapW3);
  l.emit().Ops({kSwapW2, kSwapW});
  return absl::OkStatus();
}

}  // namespace flamefleet::vm::lowering
