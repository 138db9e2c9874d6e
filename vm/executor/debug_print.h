// Print debugging of the v0.25 core library: the module `miden::core::debug`
// (crates/lib/core/asm/debug.masm at v0.25.7), whose procedures emit one event each. With
// ExecutionOptions::debug_print set, the executor answers those events with WriteDebugPrint,
// which writes exactly what miden-vm v0.25.7's DebugPrinter writes
// (crates/lib/core/src/handlers/debug.rs) in the VM's tree format (write_stack and
// write_interval of processor/src/host/debug.rs):
//
//   Stack state before step 9:
//   ├── 0: 3
//   ├── 1: 2
//   ...
//   └── 15: 0
//
// The executor gathers what a print reads at the EMIT of its event (DebugPrintView); this file
// formats and writes. The event id is at stack position 0 when the print runs and its
// arguments below it: print_mem [start, end), print_adv_stack [start, end), print_adv_map_item
// KEY (element 0 at position 1). `before step N` is the clk of the EMIT row (upstream's
// process.clock() at the event). Felts print as canonical decimals, memory addresses as
// `0x` + 8 hex digits. Lists longer than DebugPrintView::max_items are cut, the rest counted as
// "(N more items)" (upstream prints every item).
//
//   DebugPrintView view{.clk = clk, .ctx = ctx, .stack = stack, .load = load,
//                       .written = written, .advice = advice, .max_items = 65536};
//   absl::Status st = WriteDebugPrint(SystemEventHandler::kDebugPrintMem, view, &std::cerr);
//
// Thread-safe as far as its arguments are (it keeps nothing).
#ifndef FLAMEFLEET_VM_EXECUTOR_DEBUG_PRINT_H_
#define FLAMEFLEET_VM_EXECUTOR_DEBUG_PRINT_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vm/executor/executor.h"
#include "vm/executor/system_events.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// The most addresses one print_mem range may span (MAX_PRINT_MEM_RANGE of debug.rs); a wider
// range is an error.
inline constexpr uint64_t kMaxPrintMemRange = 1024;

// What a print reads of the VM at its event. Nothing is kept after WriteDebugPrint.
struct DebugPrintView {
  uint64_t clk = 0;  // the clk of the EMIT row
  uint64_t ctx = 0;  // the current context id (0: root)
  // The current context's operand stack, BOTTOM first: back() is the top (the event id).
  std::span<const Felt> stack;
  // The element at `addr` of the current context's memory, or nullopt if its word was never
  // written.
  absl::FunctionRef<std::optional<Felt>(uint32_t addr)> load;
  // Appends the current context's written elements (every element of a written word) in
  // address order to `out` until it holds `max`; returns how many there are in all.
  absl::FunctionRef<uint64_t(uint64_t max, std::vector<std::pair<uint32_t, Felt>>* out)> written;
  const AdviceProvider& advice;
  // At most this many items per list (ExecutionOptions::debug_print_max_items).
  uint64_t max_items = kDefaultDebugPrintMaxItems;
};

// Returns print_mem's inclusive address bounds for the range [start, end) (read_mem_print_range
// and the length check of debug.rs), or nullopt for an empty range. InvalidArgument with
// upstream's message for a start above 2^32 - 1 or an end above 2^32 ("memory address cannot
// exceed 2^32 but was N"), start > end ("memory range start address cannot exceed end address,
// but was (S, E)") and ranges over kMaxPrintMemRange addresses ("print_mem range length N
// exceeds maximum of 1024").
absl::StatusOr<std::optional<std::pair<uint32_t, uint32_t>>> PrintMemBounds(uint64_t start,
                                                                            uint64_t end);

// Writes the print of `handler` (one of the kDebugPrint* handlers) for `view` to `out` (not null;
// not kept). Errors (nothing is written then): print_mem's, see PrintMemBounds; InvalidArgument
// for a handler that is not a print.
absl::Status WriteDebugPrint(SystemEventHandler handler, const DebugPrintView& view,
                             std::ostream* out);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_EXECUTOR_DEBUG_PRINT_H_
