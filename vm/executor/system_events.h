// System events: the `emit` ids a Miden dialect answers inside the VM instead of asking the
// host. A dialect lists them as rows of data (id, the `adv.<name>` spelling, which built-in
// handler runs it); the parser checks `adv.<event>` against the names, the lowering of
// `adv.<event>` and of instructions that ask the advice provider for a hint (`u32clz`,
// `ilog2`, ...) takes the EMIT immediate from the ids, and the executor maps an EMIT's id to
// its handler and runs it from one switch (no virtual call). Ids no row names go to the host.
//
//   const SystemEventTable& events = *program.dialect->events;  // vm/dialect.h
//   if (const SystemEventRow* row = events.FindById(id)) {
//     switch (row->handler) { case SystemEventHandler::kU64Div: ...; }
//   }
//   std::optional<uint64_t> clz = events.IdOf(SystemEventHandler::kU32Clz);
//
// A table is immutable after Create and safe to read from any number of threads.
#ifndef FLAMEFLEET_VM_EXECUTOR_SYSTEM_EVENTS_H_
#define FLAMEFLEET_VM_EXECUTOR_SYSTEM_EVENTS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flamefleet::vm {

// The built-in handlers the executor has. Each reads the operand stack (never changes it) and
// pushes a hint onto the advice stack or adds entries to the advice map or Merkle store.
enum class SystemEventHandler : uint8_t {
  kMerkleNodeMerge,        // [R, L]: adds the tree with root Merge(L, R) to the Merkle store
  kMerkleNodeToStack,      // [d, i, R]: pushes the node at depth d, index i of tree R
  kMapValueToStack,        // [K]: pushes map[K]
  kMapValueToStackN,       // [K]: pushes map[K], then its length
  kHasMapKey,              // [K]: pushes 1 if map has K, else 0
  kU64Div,                 // [b_hi, b_lo, a_hi, a_lo]: pushes the u64 remainder and quotient
  kExt2Inv,                // [c1, c0]: pushes the inverse in the quadratic extension
  kSmtPeek,                // [K, R]: pushes the value of key K in the sparse Merkle tree R
  kU32Clz,                 // [a]: pushes the count of leading zeros of the u32 a
  kU32Ctz,                 // [a]: trailing zeros
  kU32Clo,                 // [a]: leading ones
  kU32Cto,                 // [a]: trailing ones
  kIlog2,                  // [a]: pushes floor(log2(a)), a != 0
  kMemToMap,               // [K, start, end]: map[K] <- memory[start..end)
  kHdwordToMap,            // [B, A]: map[Merge(A, B)] <- A || B
  kHdwordToMapWithDomain,  // [B, A, d]: map[MergeInDomain(A, B, d)] <- A || B
  kHpermToMap,             // [B, A, C]: map[digest of permuted state] <- A || B
  kFalconDiv,              // [a_hi, a_lo]: pushes the remainder and quotient of a / 12289
  // Added by v0.25 (their operand layouts are the v0.25 handlers').
  kMapValueCountToStack,  // [K]: pushes len(map[K])
  kMapValueToStackN4,     // [K]: pushes map[K] zero-padded to a multiple of 4, then its length
  kMapValueToStackN8,     // [K]: the same, padded to a multiple of 8
  kHqwordToMap,           // [A, B, C, D]: map[HashElements(A || B || C || D)] <- A || B || C || D
  // Library events: the events of a dialect's core library that the VM answers itself, as
  // `miden run` answers them through the library's registered handlers (library_rows()).
  kCoreU64Div,          // [b_lo, b_hi, a_lo, a_hi]: advice top-first [q_hi, q_lo, r_hi, r_lo]
  kCoreU128Div,         // [b0..b3, a0..a3]: advice top-first [r0..r3, q0..q3]
  kCoreU256Div,         // [b0..b7, a0..a7]: advice top-first [r4..r7, r0..r3, q4..q7, q0..q3]
  kLowerboundArray,     // [K, start, end]: advice top-first [ptr, found] over words at start..
  kLowerboundKeyValue,  // [K, start, end, use_full_key]: the same over (key, value) pairs
  // Host-computed precompiles (vm/executor/precompiles.h): memory bytes in, advice out.
  kKeccak256HashBytes,  // [ptr, len_bytes]: advice top-first the 8 digest limbs
  kSha512HashBytes,     // [ptr, len_bytes]: advice top-first the 16 digest limbs
  kEcdsaK256Verify,     // [ptr_pk, ptr_digest, ptr_sig]: advice 1 (valid) or 0
  kEddsaEd25519Verify,  // [ptr_pk, ptr_msg, ptr_sig]: advice 1 (valid) or 0
  kAeadDecrypt,         // [KEY, NONCE, src, dst, num_blocks]: advice the plaintext blocks
  // The print debugging of the core library (vm/executor/debug_print.h): nothing, unless
  // ExecutionOptions::debug_print is set; then what the v0.25.7 DebugPrinter prints.
  kDebugPrintStack,       // []: the operand stack below the id
  kDebugPrintMem,         // [start, end]: memory cells [start, end) (at most 1024)
  kDebugPrintMemAll,      // []: every written memory cell of the current context
  kDebugPrintAdvStack,    // [start, end]: the advice stack's elements [start, end), clamped
  kDebugPrintAdvMap,      // []: the advice map
  kDebugPrintAdvMapItem,  // [K]: the values of key K in the advice map
  kNoop,                  // a debugger event: nothing (any number of library rows)
  kUnhandled,             // a known event flamefleet does not answer: an error naming it
};

// The number of SystemEventHandler enumerators.
inline constexpr size_t kNumSystemEventHandlers =
    static_cast<size_t>(SystemEventHandler::kUnhandled) + 1;

// Where a dialect's handlers find their operands and how they lay out multi-element values:
// table data, read by the one set of handlers (the executor never asks which dialect runs).
struct SystemEventLayout {
  // How the elements of a multi-element operand (a word, two words, a hasher state, an ext2
  // element) lie on the stack, and so in which order a result meant for `adv_push` x n goes
  // onto the advice stack.
  enum class Order : uint8_t {
    kElement0Deepest,  // classic: element 0 is the deepest of the operand's elements
    kElement0Top,      // little-endian: element 0 is the shallowest
  };
  // The quadratic extension field of `ext2inv`.
  enum class Ext2Field : uint8_t {
    kXSquaredMinusXPlus2,  // F_p[x]/(x^2 - x + 2)
    kXSquaredMinus7,       // F_p[x]/(x^2 - 7)
  };
  // Stack position of the first operand: 0 when EMIT carries the id as an immediate, 1 when
  // the id is on top of the stack while the handler runs.
  uint8_t operand_offset = 0;
  Order order = Order::kElement0Deepest;
  Ext2Field ext2 = Ext2Field::kXSquaredMinusXPlus2;
  // Whether an event id that no row names and no Host takes traps ("no event handler
  // registered for event id N", as the default host of miden-vm >= 0.17); false: ignored.
  bool unknown_events_fail = false;
};

// One system event of a dialect.
struct SystemEventRow {
  uint64_t id;  // the event id (a felt): the EMIT immediate, or the value EMIT reads
  // The `adv.<name>` spelling; empty when no `adv.` instruction names the event (the hints
  // behind `u32clz`, `ilog2`, ... are emitted only by those instructions' lowering). In a
  // library row: the event's full name, e.g. "miden::core::math::u64::u64_div".
  std::string_view name;
  SystemEventHandler handler;
};

// A dialect's system events, looked up by id (executor), by name (parser, lowering) and by
// handler (lowering).
class SystemEventTable {
 public:
  // Builds a table over `rows`, which are kept by reference (they must outlive the table; a
  // dialect passes a static array). Returns InvalidArgument if the ids are not strictly
  // increasing, a handler appears twice, or a non-empty name appears twice.
  // `library_rows` (also kept by reference; strictly increasing ids, none shared with `rows`)
  // are the dialect's library events: looked up by FindLibraryEventById only, never by name
  // or handler, and any number of them may share kNoop or kUnhandled.
  static absl::StatusOr<SystemEventTable> Create(std::span<const SystemEventRow> rows,
                                                 const SystemEventLayout& layout = {},
                                                 std::span<const SystemEventRow> library_rows = {});

  // Returns the row of event `id`, or null if the dialect has no such system event (the host
  // gets it). O(log n).
  const SystemEventRow* FindById(uint64_t id) const;
  // Returns the row whose `adv.<name>` spelling is `name` (without "adv."), or null; an empty
  // `name` never matches.
  const SystemEventRow* FindByName(absl::string_view name) const;
  // Returns the id of the event that `handler` runs, or nullopt if the dialect has none.
  std::optional<uint64_t> IdOf(SystemEventHandler handler) const;

  // Returns the library row of event `id`, or null. O(log n).
  const SystemEventRow* FindLibraryEventById(uint64_t id) const;

  // Every row, by increasing id.
  std::span<const SystemEventRow> rows() const { return rows_; }
  // Every library row, by increasing id.
  std::span<const SystemEventRow> library_rows() const { return library_rows_; }
  // The operand layout of the handlers.
  const SystemEventLayout& layout() const { return layout_; }

 private:
  SystemEventTable(std::span<const SystemEventRow> rows, const SystemEventLayout& layout,
                   std::span<const SystemEventRow> library_rows)
      : rows_(rows), library_rows_(library_rows), layout_(layout) {}

  std::span<const SystemEventRow> rows_;
  std::span<const SystemEventRow> library_rows_;
  SystemEventLayout layout_;
  // Row index + 1 per handler; 0: no row.
  std::array<uint32_t, kNumSystemEventHandlers> row_by_handler_{};
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_EXECUTOR_SYSTEM_EVENTS_H_
