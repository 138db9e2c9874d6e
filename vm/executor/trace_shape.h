// Trace shape: how many rows a run gives each trace the Miden prover commits to — the core trace
// (cycles plus the HALT row), the range checker, the hasher, bitwise, memory, ACE and kernel ROM
// chiplets — and the padded height of each AIR, counted exactly while the program runs, without
// building any trace. The rules are those of the dialect (DialectSpec::trace_shape, reference:
// docs/trace-shape.md); a dialect without them has no trace shape.
//
// The executor calls the recorder at the rows that feed a chiplet or the range checker
// (Executor::RecordTraceShape); the recorder charges each local row to the current *bucket*
// (set_bucket: the profiler uses its call-tree node ids), and the two global quantities — the
// distinct hasher input states and the range checker's set of 16-bit values — with exact-sum
// conventions: a new hasher state's permutation rows go to the bucket that requests it first,
// a new range value costs its bucket the rows it adds to the table when it is inserted
// (marginal first insertion). Memory rows' first-access address gaps are only known once the
// run ends; Finish inserts them in access order.
//
//   TraceShapeRecorder shape(program);            // requires program.dialect->trace_shape
//   Executor exec(program, stack, std::move(advice), options);
//   exec.RecordTraceShape(&shape);
//   exec.Run();
//   TraceShape totals = shape.Finish(exec.clk());  // totals.padded_len, totals.buckets, ...
//
// Not thread-safe; one recorder per run.
#ifndef FLAMEFLEET_VM_EXECUTOR_TRACE_SHAPE_H_
#define FLAMEFLEET_VM_EXECUTOR_TRACE_SHAPE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "vm/assembler/program.h"
#include "vm/crypto/hasher.h"
#include "vm/executor/trace_shape_rules.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// What one bucket (a call-tree node, or the whole run) adds to the traces.
struct TraceShapeCounts {
  uint64_t hasher_requests = 0;    // permutation requests (2 controller rows each)
  uint64_t hasher_new_states = 0;  // requests whose input state was new (a permutation cycle)
  uint64_t hasher_dedup_hits = 0;  // requests whose state an earlier request had
  uint64_t bitwise_rows = 0;
  uint64_t memory_rows = 0;
  uint64_t ace_rows = 0;
  uint64_t range_lookups = 0;  // 16-bit values sent to the range checker (4 per u32 op, 5 per
                               // memory row)
  uint64_t range_rows = 0;     // rows its new range values added (marginal first insertion)

  // Hasher rows charged here: controller rows plus the permutation cycles of new states.
  uint64_t HasherRows(const TraceShapeRules& rules) const {
    return rules.controller_rows_per_request * hasher_requests +
           uint64_t{rules.permutation_rows} * hasher_new_states;
  }
  // Chiplet rows charged here (hasher, bitwise, memory, ACE).
  uint64_t ChipletRows(const TraceShapeRules& rules) const {
    return HasherRows(rules) + bitwise_rows + memory_rows + ace_rows;
  }
  void Add(const TraceShapeCounts& o);
};

// Which trace decides the padded length.
enum class TraceBound : uint8_t {
  kCore,      // the core AIR, by its cycles
  kRange,     // the core AIR, by its range-checker table
  kChiplets,  // the chiplets AIR
};

// Returns "core", "range" or "chiplets".
absl::string_view TraceBoundName(TraceBound bound);

// A finished run's trace shape. Every total is exact; the buckets plus `overhead` add up to it
// (TraceShape::CheckSums).
struct TraceShape {
  uint64_t cycles = 0;
  uint64_t core_rows = 0;   // cycles + the HALT row
  uint64_t range_rows = 0;  // the range checker's table
  uint64_t hasher_requests = 0;
  uint64_t hasher_states = 0;              // distinct input states
  uint64_t hasher_controller_rows = 0;     // 2 per request
  uint64_t hasher_controller_padding = 0;  // up to the alignment (15 at most)
  uint64_t hasher_permutation_rows = 0;    // 16 per distinct state
  uint64_t hasher_rows = 0;                // the three above
  uint64_t bitwise_rows = 0;
  uint64_t memory_rows = 0;
  uint64_t ace_rows = 0;
  uint64_t kernel_rom_rows = 0;
  uint64_t chiplets_rows = 0;  // hasher + bitwise + memory + ACE + kernel ROM + 1
  uint64_t core_height = 0;    // max(64, next_pow2(max(core, range)))
  uint64_t chiplets_height = 0;
  uint64_t padded_len = 0;  // max of the two heights
  TraceBound bound = TraceBound::kCore;

  // By bucket id (set_bucket); ids never set are all zero.
  std::vector<TraceShapeCounts> buckets;
  // The rows no bucket is charged for: the range table of {0, 65535} (range_rows), the HALT row,
  // the hasher's controller padding, the chiplets' padding row and the kernel ROM (see
  // OverheadChipletRows).
  TraceShapeCounts overhead;

  // Returns the chiplet rows of the program itself: controller padding, kernel ROM, padding row.
  uint64_t OverheadChipletRows(const TraceShapeRules& rules) const {
    return hasher_controller_padding + kernel_rom_rows + rules.chiplets_extra_rows;
  }
};

class TraceShapeRecorder {
 public:
  // Prepares to record a run of `program` (kept by reference; must outlive the recorder), whose
  // dialect must have TraceShapeRules.
  explicit TraceShapeRecorder(const Program& program);
  TraceShapeRecorder(const TraceShapeRecorder&) = delete;
  TraceShapeRecorder& operator=(const TraceShapeRecorder&) = delete;
  // Gives the state table's memory to the thread's spare store.
  ~TraceShapeRecorder();

  // What the thread's spare store keeps at most: chunks of dynamic hasher states (96 KiB each)
  // and state-table slots (8 bytes each).
  static constexpr size_t kMaxSpareChunks = 64;              // 6 MiB
  static constexpr size_t kMaxSpareSlots = size_t{1} << 19;  // 4 MiB

  // Charges what follows to bucket `bucket` (initially 0).
  void set_bucket(uint32_t bucket) {
    if (bucket >= buckets_.size()) buckets_.resize(bucket + 1);
    bucket_ = bucket;
  }
  uint32_t bucket() const { return bucket_; }

  // ---- called by the executor (Executor::RecordTraceShape)
  // Row `pc` ran: its static permutation requests (Program::hash_states).
  [[gnu::noinline]] void StaticRequests(uint32_t pc);
  // A permutation request with input `state` (HPERM, LOGPRECOMPILE, Merkle levels).
  void DynamicRequest(const HasherState& state);
  // A U32AND / U32XOR.
  [[gnu::noinline]] void Bitwise() { buckets_[bucket_].bitwise_rows += rules_.bitwise_rows_per_op; }
  // A u32 operation that range-checks the 16-bit halves of the 32-bit values `a` and `b`.
  [[gnu::noinline]] void U32Checks(uint64_t a, uint64_t b);
  // One memory row: an element or word access at element address `addr` in the current
  // context at `clk`. Returns false when the memory bookkeeping would pass its limit
  // (max_tracked_words).
  [[gnu::noinline]] bool MemoryAccess(uint32_t addr, uint64_t clk);
  // EVALCIRCUIT: `rows` ACE rows (its memory rows are reported by MemoryAccess).
  void Ace(uint64_t rows) { buckets_[bucket_].ace_rows += rows; }
  // CALL / DYNCALL into a new context (its id is clk + 1 of the CALL row), SYSCALL into the root
  // context, and the END of either.
  [[gnu::noinline]] void EnterContext(uint64_t ctx);
  [[gnu::noinline]] void LeaveContext();

  // The most distinct memory words (by context) the recorder keeps track of: 32 bytes each.
  void set_max_tracked_words(uint64_t n) { max_tracked_words_ = n; }

  // Finishes the run of `cycles` cycles: the deferred range values, then the totals. Call once.
  TraceShape Finish(uint64_t cycles);

  // Returns the range-checker table length of a set of 16-bit values (0 and 65535 are always
  // in it): 2 + the sum of steps(gap) over consecutive values. For tests.
  static uint64_t RangeTableRowsForTest(std::vector<uint16_t> values);

 private:
  // Inserts `v` into the range table; returns the rows it adds.
  uint64_t InsertRange(uint16_t v);
  void CheckRange(uint16_t v) {
    TraceShapeCounts& b = buckets_[bucket_];
    ++b.range_lookups;
    if (!Present(v)) b.range_rows += InsertRange(v);
  }
  bool Present(uint16_t v) const { return (range_bits_[v >> 6] >> (v & 63)) & 1; }
  // The largest present value below `v` / the smallest above (0 and 65535 are present).
  uint32_t Below(uint32_t v) const;
  uint32_t Above(uint32_t v) const;
  // A request of state id `id` (static or dynamic).
  void Request(uint32_t id) {
    TraceShapeCounts& b = buckets_[bucket_];
    ++b.hasher_requests;
    uint64_t& w = seen_[id >> 6];
    const uint64_t bit = uint64_t{1} << (id & 63);
    if ((w & bit) == 0) {
      w |= bit;
      ++b.hasher_new_states;
    } else {
      ++b.hasher_dedup_hits;
    }
  }

  struct WordKey {
    uint64_t ctx;
    uint32_t word;
    friend bool operator==(const WordKey&, const WordKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const WordKey& k) {
      return H::combine(std::move(h), k.ctx, k.word);
    }
  };
  // The first access of a (context, word) pair: its range values depend on the sorted order of
  // all of them.
  struct FirstAccess {
    uint64_t ctx;
    uint32_t word;
    uint32_t bucket;
  };

  const Program& program_;
  const TraceShapeRules& rules_;
  std::vector<TraceShapeCounts> buckets_;
  uint32_t bucket_ = 0;
  // Hasher: the states seen (by id: Program::hash_states ids, then dynamic ones), and the rows
  // (by pc) whose static requests were made before (all their states are seen: a row that runs
  // again costs two additions, however many states it requests).
  std::vector<uint64_t> seen_;
  std::vector<uint64_t> rows_requested_;
  // Every state by value -> id: an open-addressing table (linear probing, at most half full) of
  // (low 32 bits of the state's hash, id + 1), filled with the static states at the first
  // dynamic request. A lookup compares the full state only when the stored hash bits match, and
  // growing never rehashes a state. The dynamic states sit in chunks that are never moved. The
  // chunks and the table come from, and go back to, a spare store of the thread (bounded:
  // kMaxSpareChunks, kMaxSpareSlots), so consecutive hash-heavy runs on one thread (a worker's
  // jobs) reuse memory instead of faulting fresh pages in (docs/trace-shape.md#cost).
  using State = std::array<uint64_t, 12>;
  const State& StateOf(uint32_t id) const;
  struct Slot {
    uint32_t hash;     // low 32 bits of absl::Hash<State>
    uint32_t id_plus;  // 0: empty
  };
  // Returns the slot of `key` (hash bits `h`): its id's slot, or the empty slot it would take.
  Slot& Find(const State& key, uint32_t h);
  void GrowTable();
  static constexpr size_t kStatesPerChunk = 1024;
  struct Spare;
  static Spare& ThreadSpare();
  std::vector<std::unique_ptr<State[]>> dynamic_states_;
  std::vector<Slot> table_;
  size_t table_used_ = 0;
  uint32_t first_dynamic_id_ = 0;
  uint32_t next_state_id_ = 0;
  // Range checker: the values present, and which 64-value words have any (two levels).
  std::array<uint64_t, 1024> range_bits_{};
  std::array<uint64_t, 16> range_summary_{};
  // Memory: the last access clk of each (ctx, word), and the first accesses in clk order.
  absl::flat_hash_map<WordKey, uint64_t> last_clk_;
  std::vector<FirstAccess> first_accesses_;
  uint64_t max_tracked_words_ = ~uint64_t{0};
  // Contexts: the current one is back() (0 = the root context).
  std::vector<uint64_t> contexts_{0};
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_EXECUTOR_TRACE_SHAPE_H_
