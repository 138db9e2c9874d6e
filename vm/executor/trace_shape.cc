#include "vm/executor/trace_shape.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "vm/dialect.h"

namespace flamefleet::vm {
namespace {

constexpr uint32_t kRangeMax = 65535;

// The range checker's rows for a gap of d between two consecutive values: the fewest powers of
// 3 (up to 3^7 = 2187) that sum to d; greedy is optimal for powers of 3.
// The base-3 digit sums of 0 .. 2186 (an immutable table; a new range value costs three
// lookups, not 21 divisions).
const std::array<uint8_t, 2187>& DigitSums3() {
  static const std::array<uint8_t, 2187> table = [] {
    std::array<uint8_t, 2187> t{};
    for (uint32_t r = 1; r < 2187; ++r) t[r] = static_cast<uint8_t>(t[r / 3] + r % 3);
    return t;
  }();
  return table;
}

uint64_t Steps(uint32_t d) { return d / 2187 + DigitSums3()[d % 2187]; }

uint64_t NextPow2(uint64_t n) { return n <= 1 ? 1 : std::bit_ceil(n); }

}  // namespace

void TraceShapeCounts::Add(const TraceShapeCounts& o) {
  hasher_requests += o.hasher_requests;
  hasher_new_states += o.hasher_new_states;
  hasher_dedup_hits += o.hasher_dedup_hits;
  bitwise_rows += o.bitwise_rows;
  memory_rows += o.memory_rows;
  ace_rows += o.ace_rows;
  range_lookups += o.range_lookups;
  range_rows += o.range_rows;
}

absl::string_view TraceBoundName(TraceBound bound) {
  switch (bound) {
    case TraceBound::kCore:
      return "core";
    case TraceBound::kRange:
      return "range";
    case TraceBound::kChiplets:
      return "chiplets";
  }
  return "core";
}

TraceShapeRecorder::TraceShapeRecorder(const Program& program)
    : program_(program), rules_(*program.dialect->trace_shape), buckets_(1) {
  const size_t n = program.hash_states.states.size();
  next_state_id_ = static_cast<uint32_t>(n);
  first_dynamic_id_ = next_state_id_;
  seen_.assign(n / 64 + 1, 0);
  rows_requested_.assign(program.code.size() / 64 + 1, 0);
  // The baseline table {0, 65535}.
  range_bits_[0] |= 1;
  range_bits_[kRangeMax >> 6] |= uint64_t{1} << (kRangeMax & 63);
  range_summary_[0] |= 1;
  range_summary_[15] |= uint64_t{1} << 63;
}

void TraceShapeRecorder::StaticRequests(uint32_t pc) {
  const StaticHashStates& hs = program_.hash_states;
  if (pc + 1 >= hs.first.size()) return;
  const uint32_t begin = hs.first[pc], end = hs.first[pc + 1];
  uint64_t& w = rows_requested_[pc >> 6];
  const uint64_t bit = uint64_t{1} << (pc & 63);
  if ((w & bit) != 0) {
    // Row pc ran before: each of its states is a de-duplicated request now.
    TraceShapeCounts& b = buckets_[bucket_];
    b.hasher_requests += end - begin;
    b.hasher_dedup_hits += end - begin;
    return;
  }
  w |= bit;
  for (uint32_t i = begin; i < end; ++i) Request(hs.ids[i]);
}

// A thread's spare memory for state tables (see kMaxSpareChunks).
struct TraceShapeRecorder::Spare {
  std::vector<std::unique_ptr<State[]>> chunks;
  std::vector<Slot> table;
};

TraceShapeRecorder::Spare& TraceShapeRecorder::ThreadSpare() {
  thread_local Spare spare;
  return spare;
}

TraceShapeRecorder::~TraceShapeRecorder() {
  Spare& spare = ThreadSpare();
  for (std::unique_ptr<State[]>& chunk : dynamic_states_) {
    if (spare.chunks.size() >= kMaxSpareChunks) break;
    spare.chunks.push_back(std::move(chunk));
  }
  if (table_.size() <= kMaxSpareSlots && table_.size() > spare.table.size()) {
    spare.table = std::move(table_);
  }
}

const TraceShapeRecorder::State& TraceShapeRecorder::StateOf(uint32_t id) const {
  if (id < first_dynamic_id_) return program_.hash_states.states[id];
  const uint32_t d = id - first_dynamic_id_;
  return dynamic_states_[d / kStatesPerChunk][d % kStatesPerChunk];
}

TraceShapeRecorder::Slot& TraceShapeRecorder::Find(const State& key, uint32_t h) {
  const size_t mask = table_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    Slot& slot = table_[i];
    if (slot.id_plus == 0 || (slot.hash == h && StateOf(slot.id_plus - 1) == key)) return slot;
  }
}

void TraceShapeRecorder::GrowTable() {
  std::vector<Slot> old = std::move(table_);
  Spare& spare = ThreadSpare();
  const size_t size = std::max<size_t>(64, old.size() * 2);
  if (spare.table.size() >= size) {
    table_ = std::move(spare.table);
    spare.table.clear();
  }
  // A spare table may be larger than needed: its size is kept (a power of two).
  table_.assign(std::max(size, table_.size()), Slot{0, 0});
  const size_t mask = table_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.id_plus == 0) continue;
    size_t i = slot.hash & mask;
    while (table_[i].id_plus != 0) i = (i + 1) & mask;
    table_[i] = slot;
  }
  if (old.capacity() > spare.table.capacity() && old.size() <= kMaxSpareSlots) {
    spare.table = std::move(old);
  }
}

void TraceShapeRecorder::DynamicRequest(const HasherState& state) {
  State key;
  for (int i = 0; i < kHasherStateWidth; ++i) key[i] = state[i].value();
  if (table_.empty()) {
    // Static states are distinct (interned by Linearize): one slot each.
    while (table_.size() < 2 * (size_t{first_dynamic_id_} + 1)) GrowTable();
    for (uint32_t id = 0; id < first_dynamic_id_; ++id) {
      const State& s = StateOf(id);
      const auto h = static_cast<uint32_t>(absl::Hash<State>{}(s));
      Find(s, h) = Slot{h, id + 1};
    }
    table_used_ = first_dynamic_id_;
  }
  const auto h = static_cast<uint32_t>(absl::Hash<State>{}(key));
  Slot* slot = &Find(key, h);
  if (slot->id_plus != 0) {
    Request(slot->id_plus - 1);
    return;
  }
  const uint32_t id = next_state_id_++;
  const uint32_t d = id - first_dynamic_id_;
  if (d % kStatesPerChunk == 0) {
    Spare& spare = ThreadSpare();
    if (!spare.chunks.empty()) {
      dynamic_states_.push_back(std::move(spare.chunks.back()));
      spare.chunks.pop_back();
    } else {
      dynamic_states_.push_back(std::make_unique_for_overwrite<State[]>(kStatesPerChunk));
    }
  }
  dynamic_states_.back()[d % kStatesPerChunk] = key;
  if (2 * (table_used_ + 1) > table_.size()) {
    GrowTable();
    slot = &Find(key, h);  // not in the table yet: the empty slot it takes
  }
  *slot = Slot{h, id + 1};
  ++table_used_;
  if (seen_.size() * 64 <= id) seen_.resize(seen_.size() * 2 + 1, 0);
  Request(id);
}

void TraceShapeRecorder::U32Checks(uint64_t a, uint64_t b) {
  CheckRange(static_cast<uint16_t>(a));
  CheckRange(static_cast<uint16_t>(a >> 16));
  CheckRange(static_cast<uint16_t>(b));
  CheckRange(static_cast<uint16_t>(b >> 16));
}

bool TraceShapeRecorder::MemoryAccess(uint32_t addr, uint64_t clk) {
  const uint32_t word = addr & ~uint32_t{3};
  const uint64_t ctx = contexts_.back();
  TraceShapeCounts& b = buckets_[bucket_];
  ++b.memory_rows;
  auto [it, inserted] = last_clk_.try_emplace(WordKey{ctx, word}, clk);
  if (inserted) {
    if (last_clk_.size() > max_tracked_words_) return false;
    first_accesses_.push_back(FirstAccess{ctx, word, bucket_});
    b.range_lookups += 2;  // its delta: inserted by Finish
  } else {
    // Accesses of one word arrive in clock order: the delta is the clock gap.
    const uint64_t delta = clk - it->second;
    it->second = clk;
    CheckRange(static_cast<uint16_t>(delta));
    CheckRange(static_cast<uint16_t>(delta >> 16));
  }
  const uint32_t index = word / 4;
  const uint16_t w1 = static_cast<uint16_t>(index >> 16);
  CheckRange(static_cast<uint16_t>(index));
  CheckRange(w1);
  CheckRange(static_cast<uint16_t>(w1 << 2));
  return true;
}

void TraceShapeRecorder::EnterContext(uint64_t ctx) { contexts_.push_back(ctx); }

void TraceShapeRecorder::LeaveContext() {
  if (contexts_.size() > 1) contexts_.pop_back();
}

uint32_t TraceShapeRecorder::Below(uint32_t v) const {
  uint32_t w = v >> 6;
  const uint64_t low = range_bits_[w] & ((uint64_t{1} << (v & 63)) - 1);
  if (low != 0) return (w << 6) + 63 - std::countl_zero(low);
  // The summary: the highest non-empty word below w.
  uint32_t s = w >> 6;
  uint64_t m = range_summary_[s] & ((uint64_t{1} << (w & 63)) - 1);
  while (m == 0) m = range_summary_[--s];  // word 0 holds the value 0
  w = (s << 6) + 63 - std::countl_zero(m);
  return (w << 6) + 63 - std::countl_zero(range_bits_[w]);
}

uint32_t TraceShapeRecorder::Above(uint32_t v) const {
  uint32_t w = v >> 6;
  const uint32_t b = v & 63;
  const uint64_t high = b == 63 ? 0 : range_bits_[w] & (~uint64_t{0} << (b + 1));
  if (high != 0) return (w << 6) + std::countr_zero(high);
  uint32_t s = w >> 6;
  const uint32_t sb = w & 63;
  uint64_t m = sb == 63 ? 0 : range_summary_[s] & (~uint64_t{0} << (sb + 1));
  while (m == 0) m = range_summary_[++s];  // the last word holds 65535
  w = (s << 6) + std::countr_zero(m);
  return (w << 6) + std::countr_zero(range_bits_[w]);
}

uint64_t TraceShapeRecorder::InsertRange(uint16_t v) {
  const uint32_t a = Below(v), b = Above(v);
  const uint64_t added = Steps(v - a) + Steps(b - v) - Steps(b - a);
  range_bits_[v >> 6] |= uint64_t{1} << (v & 63);
  range_summary_[v >> 12] |= uint64_t{1} << ((v >> 6) & 63);
  return added;
}

TraceShape TraceShapeRecorder::Finish(uint64_t cycles) {
  // First accesses: their delta is the gap to the previous (ctx, word) in sorted order (1 for the
  // very first row); inserted in access order, each charged to the bucket that made the access.
  std::vector<uint32_t> order(first_accesses_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [this](uint32_t x, uint32_t y) {
    const FirstAccess& a = first_accesses_[x];
    const FirstAccess& b = first_accesses_[y];
    return a.ctx != b.ctx ? a.ctx < b.ctx : a.word < b.word;
  });
  std::vector<uint64_t> delta(first_accesses_.size(), 1);
  for (size_t i = 1; i < order.size(); ++i) {
    const FirstAccess& prev = first_accesses_[order[i - 1]];
    const FirstAccess& cur = first_accesses_[order[i]];
    delta[order[i]] = cur.ctx != prev.ctx ? cur.ctx - prev.ctx : uint64_t{cur.word - prev.word};
  }
  for (size_t i = 0; i < first_accesses_.size(); ++i) {
    const uint32_t saved = bucket_;
    bucket_ = first_accesses_[i].bucket;
    TraceShapeCounts& b = buckets_[bucket_];
    const uint16_t lo = static_cast<uint16_t>(delta[i]);
    const uint16_t hi = static_cast<uint16_t>(delta[i] >> 16);
    if (!Present(lo)) b.range_rows += InsertRange(lo);
    if (!Present(hi)) b.range_rows += InsertRange(hi);
    bucket_ = saved;
  }

  TraceShape t;
  t.cycles = cycles;
  t.buckets = std::move(buckets_);
  buckets_.assign(1, TraceShapeCounts{});
  TraceShapeCounts sum;
  for (const TraceShapeCounts& b : t.buckets) sum.Add(b);
  t.overhead.range_rows = 2 + Steps(kRangeMax);  // the table of {0, 65535}

  t.core_rows = cycles + rules_.core_extra_rows;
  t.range_rows = t.overhead.range_rows + sum.range_rows;
  t.hasher_requests = sum.hasher_requests;
  t.hasher_states = sum.hasher_new_states;
  t.hasher_controller_rows = rules_.controller_rows_per_request * sum.hasher_requests;
  const uint64_t align = rules_.controller_alignment;
  t.hasher_controller_padding = (align - t.hasher_controller_rows % align) % align;
  t.hasher_permutation_rows = uint64_t{rules_.permutation_rows} * sum.hasher_new_states;
  t.hasher_rows =
      t.hasher_controller_rows + t.hasher_controller_padding + t.hasher_permutation_rows;
  t.bitwise_rows = sum.bitwise_rows;
  t.memory_rows = sum.memory_rows;
  t.ace_rows = sum.ace_rows;
  t.kernel_rom_rows = program_.kernel_procedures;
  t.chiplets_rows = t.hasher_rows + t.bitwise_rows + t.memory_rows + t.ace_rows +
                    t.kernel_rom_rows + rules_.chiplets_extra_rows;
  const uint64_t min = rules_.min_trace_len;
  t.core_height = std::max(min, NextPow2(std::max(t.core_rows, t.range_rows)));
  t.chiplets_height = std::max(min, NextPow2(t.chiplets_rows));
  t.padded_len = std::max(t.core_height, t.chiplets_height);
  if (t.chiplets_height > t.core_height) {
    t.bound = TraceBound::kChiplets;
  } else {
    t.bound = t.range_rows > t.core_rows ? TraceBound::kRange : TraceBound::kCore;
  }
  return t;
}

uint64_t TraceShapeRecorder::RangeTableRowsForTest(std::vector<uint16_t> values) {
  values.push_back(0);
  values.push_back(static_cast<uint16_t>(kRangeMax));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  uint64_t rows = 2;
  for (size_t i = 1; i < values.size(); ++i) rows += Steps(values[i] - values[i - 1]);
  return rows;
}

}  // namespace flamefleet::vm
