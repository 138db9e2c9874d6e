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
};

// The number of SystemEventHandler enumerators.
inline constexpr size_t kNumSystemEventHandlers =
    static_cast<size_t>(SystemEventHandler::kHqwordToMap) + 1;

// One system event of a dialect.
struct SystemEventRow {
  uint64_t id;  // the event id (a felt): the EMIT immediate, or the value EMIT reads
  // The `adv.<name>` spelling; empty when no `adv.` instruction names the event (the hints
  // behind `u32clz`, `ilog2`, ... are emitted only by those instructions' lowering).
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
  static absl::StatusOr<SystemEventTable> Create(std::span<const SystemEventRow> rows);

  // Returns the row of event `id`, or null if the dialect has no such system event (the host
  // gets it). O(log n).
  const SystemEventRow* FindById(uint64_t id) const;
  // Returns the row whose `adv.<name>` spelling is `name` (without "adv."), or null; an empty
  // `name` never matches.
  const SystemEventRow* FindByName(absl::string_view name) const;
  // Returns the id of the event that `handler` runs, or nullopt if the dialect has none.
  std::optional<uint64_t> IdOf(SystemEventHandler handler) const;

  // Every row, by increasing id.
  std::span<const SystemEventRow> rows() const { return rows_; }

 private:
  explicit SystemEventTable(std::span<const SystemEventRow> rows) : rows_(rows) {}

  std::span<const SystemEventRow> rows_;
  // Row index + 1 per handler; 0: no row.
  std::array<uint32_t, kNumSystemEventHandlers> row_by_handler_{};
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_EXECUTOR_SYSTEM_EVENTS_H_
