#include "vm/executor/executor.h"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vm/crypto/hasher.h"
#include "vm/crypto/merkle_store.h"
#include "vm/crypto/poseidon2.h"
#include "vm/crypto/rpo.h"
#include "vm/dialect.h"
#include "vm/executor/debug_print.h"
#include "vm/executor/precompiles.h"
#include "vm/executor/system_events.h"
#include "vm/executor/verifier_ops.h"

namespace flamefleet::vm {
namespace {

constexpr uint64_t kU32Max = 0xFFFFFFFFULL;
constexpr uint64_t kFmpMin = uint64_t{1} << 30;
constexpr uint64_t kFmpMax = 3 * (uint64_t{1} << 30) - 1;
// The frame pointer in memory (CALL/DYNCALL rows of v0.25): FMP_ADDR = 2^32 - 2 and
// FMP_INIT_VALUE = 2^31 (core/src/lib.rs at v0.25.7).
constexpr uint32_t kMemFmpAddr = 0xFFFFFFFEu;
constexpr uint64_t kMemFmpInit = uint64_t{1} << 31;
constexpr ptrdiff_t kSlack = 256;  // max rows between two headroom checks is < 100
constexpr ptrdiff_t kGap = 2048;   // free zeroed room placed below the stack on a rebase
constexpr size_t kInitialBuffer = 1 << 14;
// What an advice-map entry costs besides its values (key, vector header, hash slot).
constexpr uint64_t kAdviceMapEntryBytes = 64;

// Renders a digest as the Miden VM prints MAST roots: 0x + each felt as 8 little-endian bytes in
// hex.
std::string DigestHex(const std::array<uint64_t, 4>& digest) {
  std::string out = "0x";
  for (uint64_t e : digest) {
    for (int b = 0; b < 8; ++b)
      absl::StrAppend(&out, absl::Hex((e >> (8 * b)) & 0xFF, absl::kZeroPad2));
  }
  return out;
}

std::array<uint64_t, 4> WordValues(const Word& w) {
  return {w[0].value(), w[1].value(), w[2].value(), w[3].value()};
}

std::string WordText(const Word& w) {
  return absl::StrCat("[", w[0].value(), ", ", w[1].value(), ", ", w[2].value(), ", ", w[3].value(),
                      "]");
}

// The word whose elements are at stack positions first..first+3; element 0 is the deepest
// (stack position first + 3), as `push.[a,b,c,d]` leaves d on top.
inline Word StackWord(const Felt* sp, int first) {
  return Word{sp[-(first + 3)], sp[-(first + 2)], sp[-(first + 1)], sp[-first]};
}

// The word at stack positions first..first+3 with element 0 on top (stack position first), the
// little-endian order of v0.21+.
inline Word StackWordLe(const Felt* sp, int first) {
  return Word{sp[-first], sp[-(first + 1)], sp[-(first + 2)], sp[-(first + 3)]};
}

// Loads the hasher state from the top 12 stack elements: state[i] = stack[11 - i] (the deepest
// of the twelve is state[0], the capacity word is the third word from the top).
inline void LoadState(const Felt* sp, HasherState& state) {
  for (int i = 0; i < kHasherStateWidth; ++i) state[i] = sp[-(11 - i)];
}

}  // namespace

// Element-addressable memory of one context: 4096-element pages allocated on first write,
// each charged to the executor's memory budget. Each page also records which of its words were
// ever written: the v0.25.7 precompile handlers fail on a never-written word (the processor's
// memory is a map of written words), while loads read it as 0. The record is kept apart from the
// elements so that the load path stays as it was.
class Executor::Memory {
 public:
  static constexpr uint32_t kPageBits = 12;
  static constexpr uint32_t kPageSize = 1u << kPageBits;
  static constexpr uint32_t kBitmapWords = kPageSize / 4 / 64;
  // What one page costs: its elements, its written-words bitmap and its hash-map slot.
  static constexpr uint64_t kPageBytes = kPageSize * sizeof(Felt) + kPageSize / 32 + 32;

  explicit Memory(Executor* owner) : owner_(owner) {}

  Felt Load(uint32_t addr) {
    uint32_t page = addr >> kPageBits;
    if (page == last_page_) return last_[addr & (kPageSize - 1)];
    auto it = pages_.find(page);
    if (it == pages_.end()) return Felt(0);
    Select(it);
    return last_[addr & (kPageSize - 1)];
  }
  // The element at `addr`, or nullopt if its word was never written. Off the hot path.
  std::optional<Felt> LoadWritten(uint32_t addr) const {
    auto it = pages_.find(addr >> kPageBits);
    if (it == pages_.end()) return std::nullopt;
    const uint32_t word = (addr & (kPageSize - 1)) >> 2;
    if (((it->second.written[word >> 6] >> (word & 63)) & 1) == 0) return std::nullopt;
    return it->second.cells[addr & (kPageSize - 1)];
  }
  // Appends the written elements (each element of a written word) in address order to `out`
  // until it holds `max`; returns how many there are in all. Off the hot path (debug prints).
  uint64_t WrittenCells(uint64_t max, std::vector<std::pair<uint32_t, Felt>>* out) const {
    std::vector<uint32_t> pages;
    pages.reserve(pages_.size());
    uint64_t words = 0;
    for (const auto& [page, p] : pages_) {
      pages.push_back(page);
      for (uint32_t k = 0; k < kBitmapWords; ++k) words += std::popcount(p.written[k]);
    }
    std::sort(pages.begin(), pages.end());
    for (uint32_t page : pages) {
      const Page& p = pages_.at(page);
      for (uint32_t w = 0; w < kPageSize / 4 && out->size() < max; ++w) {
        if (((p.written[w >> 6] >> (w & 63)) & 1) == 0) continue;
        for (uint32_t j = 0; j < 4 && out->size() < max; ++j) {
          out->emplace_back((page << kPageBits) + 4 * w + j, p.cells[4 * w + j]);
        }
      }
      if (out->size() >= max) break;
    }
    return 4 * words;
  }
  // Whether the page of `addr` is the selected one (always an allocated page): then At(addr)
  // may be written. The write path is `if (!Selected(a) && !Select(a)) trap; At(a) = v`.
  bool Selected(uint32_t addr) const { return (addr >> kPageBits) == last_page_; }
  // Selects the page of `addr`, allocating it (zeroed) on first use. Returns false, with
  // nothing allocated, when a new page would exceed the memory budget.
  bool Select(uint32_t addr) {
    uint32_t page = addr >> kPageBits;
    auto it = pages_.find(page);
    if (it == pages_.end()) {
      if (!owner_->ChargeMemory(kPageBytes)) return false;
      it = pages_
               .emplace(page, Page{std::make_unique<Felt[]>(kPageSize),  // zeroed
                                   std::make_unique<uint64_t[]>(kBitmapWords)})
               .first;
    }
    Select(it);
    return true;
  }
  // The element at `addr`, to be written (its word counts as written); requires Selected(addr).
  Felt& At(uint32_t addr) {
    const uint32_t i = addr & (kPageSize - 1);
    last_written_[i >> 8] |= uint64_t{1} << ((i >> 2) & 63);
    return last_[i];
  }
  void Clear() {
    owner_->memory_used_ -= pages_.size() * kPageBytes;
    pages_.clear();
    last_page_ = kNoPage;
    last_ = nullptr;
    last_written_ = nullptr;
  }

 private:
  struct Page {
    std::unique_ptr<Felt[]> cells;
    std::unique_ptr<uint64_t[]> written;  // bit w of the page: word w was written
  };
  using PageMap = absl::flat_hash_map<uint32_t, Page>;
  void Select(PageMap::iterator it) {
    last_page_ = it->first;
    last_ = it->second.cells.get();
    last_written_ = it->second.written.get();
  }
  static constexpr uint32_t kNoPage = ~uint32_t{0};
  Executor* owner_;
  PageMap pages_;
  uint32_t last_page_ = kNoPage;
  Felt* last_ = nullptr;
  uint64_t* last_written_ = nullptr;
};

struct Executor::Context {
  size_t sp, bot, floor;
  uint64_t fmp;
  Memory* memory;
  bool in_syscall;
  Word creator;  // see Executor::creator_
  uint64_t ctx;  // see Executor::ctx_
};

Executor::Executor(const Program& program, const std::vector<Felt>& stack, AdviceProvider advice,
                   const ExecutionOptions& options, Host* host, CallStackObserver* observer)
    : program_(program),
      events_(*program.dialect->events),
      hasher_(*program.dialect->hasher),
      dyn_miss_clk_offset_(program.dialect->mast->dyn_miss_after_row ? 1 : 0),
      options_(options),
      host_(host),
      observer_(observer),
      advice_(std::move(advice)) {
  // The store's paths are only meaningful under the hasher that verifies them.
  assert(&advice_.merkle_store.hasher() == &hasher_);
  buffer_.assign(kInitialBuffer, Felt(0));
  floor_ = 0;
  bot_ = kGap;
  sp_ = bot_ + 15;
  for (size_t i = 0; i < stack.size() && i < 16; ++i) buffer_[sp_ - i] = stack[i];
  fmp_ = kFmpMin;
  memories_.push_back(std::make_unique<Memory>(this));
  memory_ = memories_[0].get();
  frames_.reserve(program.procedures.size() + 8);
  returns_.reserve(program.procedures.size() + 64);
  for (const auto& [key, values] : program.advice_map) advice_.map.insert_or_assign(key, values);
  for (const auto& [key, values] : advice_.map) advice_map_values_ += values.size();
  pc_ = 0;
  // The fixed allocations; a budget too small for them traps before the first cycle.
  const uint64_t fixed = buffer_.size() * sizeof(Felt) + frames_.capacity() * sizeof(uint32_t) +
                         returns_.capacity() * sizeof(Return);
  if (!ChargeMemory(fixed)) {
    SetMemoryTrap("the operand stack and call stacks", fixed, 0, 0);
    state_ = State::kTrapped;
    return;
  }
  if (!ChargeAdvice(0, 0)) state_ = State::kTrapped;
}

Executor::~Executor() = default;

Executor::Memory* Executor::AcquireMemory() {
  if (!free_memories_.empty()) {
    Memory* m = free_memories_.back();
    free_memories_.pop_back();
    return m;
  }
  memories_.push_back(std::make_unique<Memory>(this));
  return memories_.back().get();
}

void Executor::SetMemoryTrap(const char* what, uint64_t bytes, uint32_t pc, uint64_t clk) {
  SetTrap(TrapKind::kMemoryLimit,
          absl::StrCat("memory budget of ", options_.max_memory_bytes, " bytes exceeded: ", what,
                       " needed ", bytes, " more bytes with ", memory_used_,
                       " in use (raise the budget with --max-memory)"),
          pc, clk);
}

template <typename T>
bool Executor::GrowCallStack(std::vector<T>& v, uint32_t pc, uint64_t clk) {
  const size_t more = std::max<size_t>(v.capacity(), 16);
  if (!ChargeMemory(more * sizeof(T))) {
    SetMemoryTrap("the call stack", more * sizeof(T), pc, clk);
    return false;
  }
  v.reserve(v.capacity() + more);
  return true;
}

uint64_t Executor::AdviceBytes() const {
  return advice_.stack.size() * sizeof(Felt) + advice_map_values_ * sizeof(Felt) +
         advice_.map.size() * kAdviceMapEntryBytes;
}

bool Executor::ChargeAdvice(uint32_t pc, uint64_t clk) {
  const uint64_t now = AdviceBytes();
  if (now <= advice_charged_) {
    memory_used_ -= advice_charged_ - now;
    advice_charged_ = now;
    return true;
  }
  if (!ChargeMemory(now - advice_charged_)) {
    SetMemoryTrap("the advice provider", now - advice_charged_, pc, clk);
    return false;
  }
  advice_charged_ = now;
  return true;
}

void Executor::ReleaseMemory(Memory* memory) {
  memory->Clear();
  free_memories_.push_back(memory);
}

std::vector<Felt> Executor::StackTop(size_t n) const {
  std::vector<Felt> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(sp_ >= i && sp_ - i >= floor_ ? buffer_[sp_ - i] : Felt(0));
  }
  return out;
}

uint64_t Executor::stack_depth() const { return sp_ - bot_ + 1; }

void Executor::SetTrap(TrapKind kind, std::string message, uint32_t pc, uint64_t clk,
                       uint64_t code) {
  trap_.kind = kind;
  trap_.message = std::move(message);
  trap_.pc = pc;
  trap_.clk = clk;
  trap_.error_code = code;
  trap_.frames = frames_;
}

PcCounters& PcCounters::operator=(PcCounters&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

void PcCounters::Release() {
  if (data_ != nullptr) {
    if (mapped_bytes_ != 0) {
      munmap(data_, mapped_bytes_);
    } else {
      std::free(data_);
    }
  }
  data_ = nullptr;
  size_ = 0;
  mapped_bytes_ = 0;
}

void PcCounters::Reset(size_t n) {
  Release();
  if (n == 0) return;
  const size_t bytes = n * sizeof(uint64_t);
  // Large arrays come straight from the kernel (zero pages until written); malloc would hand
  // back reused heap memory and clear all of it.
  constexpr size_t kMapAbove = size_t{64} << 10;
  if (bytes >= kMapAbove) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      // A huge page would be cleared whole on the first count in it.
      madvise(p, bytes, MADV_NOHUGEPAGE);
      data_ = static_cast<uint64_t*>(p);
      size_ = n;
      mapped_bytes_ = bytes;
      return;
    }
  }
  data_ = static_cast<uint64_t*>(std::calloc(n, sizeof(uint64_t)));
  if (data_ == nullptr) throw std::bad_alloc();
  size_ = n;
}

void Executor::CountStart(uint32_t pc) {
  // A resumption continues where the last slice paused: only the first start counts.
  if (!row_counts_->started) {
    row_counts_->started = true;
    row_counts_->start_pc = pc;
  }
  row_counts_->stopped = false;
}

void Executor::CountStop(uint32_t pc) {
  row_counts_->end_pc = pc;
  row_counts_->stopped = true;
}

void Executor::CountRows(RowCounts* counts) {
  row_counts_ = counts;
  if (counts == nullptr) return;
  counts->entries.Reset(program_.code.size());
  counts->loop_ends.Reset(program_.code.size());
  counts->started = false;
  counts->stopped = false;
}

std::vector<uint64_t> RowCounts::Executions(const Program& program) const {
  const size_t n = std::min(program.code.size(), entries.size());
  std::vector<uint64_t> runs(n, 0);
  uint64_t carried = 0;  // executions of pc - 1 that fell through to pc
  for (size_t pc = 0; pc < n; ++pc) {
    const uint64_t arrivals = entries[pc] + carried + (started && pc == start_pc ? 1 : 0);
    runs[pc] = arrivals - std::min<uint64_t>(arrivals, stopped && pc == end_pc ? 1 : 0);
    carried = FallsThrough(program.code[pc].opcode) ? runs[pc] : 0;
  }
  return runs;
}

InstructionTally RowCounts::Tally(const Program& program) const {
  RowTally built;
  const bool have = !program.row_tally.segments.empty() || program.code.empty();
  if (!have) built = BuildRowTally(program);  // a Program not made by the assembler
  const RowTally& rt = have ? program.row_tally : built;
  InstructionTally t;
  t.count.assign(rt.mnemonics.size(), 0);
  t.cycles.assign(rt.mnemonics.size(), 0);
  if (entries.size() < program.code.size()) return t;
  // Counts are added modulo 2^64, so a correction of -1 is an add of ~0.
  auto add = [&t](uint32_t key, uint64_t count, uint64_t cycles, uint64_t times) {
    if (key >= RowTally::kOpBase) {
      t.op_rows[key - RowTally::kOpBase] += cycles * times;
    } else if (key >= RowTally::kBlockBase) {
      t.block_rows[key - RowTally::kBlockBase] += cycles * times;
    } else {
      t.count[key] += count * times;
      t.cycles[key] += cycles * times;
    }
  };
  // The rows from `from` to the end of its segment ran `times` more (or fewer) times.
  auto add_suffix = [&](uint32_t from, uint32_t end, uint64_t times) {
    for (uint32_t pc = from; pc < end; ++pc) {
      ForEachRowKey(program, rt, pc, [&](uint32_t key, uint32_t count, uint32_t cycles) {
        add(key, count, cycles, times);
      });
    }
  };
  constexpr uint64_t kMinusOne = ~uint64_t{0};
  uint64_t carried = 0;
  for (size_t s = 0; s < rt.segments.size(); ++s) {
    const RowTally::Segment& seg = rt.segments[s];
    uint64_t runs = entries[seg.head] + carried + (started && start_pc == seg.head ? 1 : 0);
    if (stopped && end_pc == seg.head && runs > 0) --runs;
    if (runs != 0) {
      const uint32_t last = s + 1 < rt.segments.size() ? rt.segments[s + 1].first_entry
                                                       : static_cast<uint32_t>(rt.entries.size());
      for (uint32_t e = seg.first_entry; e < last; ++e) {
        add(rt.entries[e].key, rt.entries[e].count, rt.entries[e].cycles, runs);
      }
    }
    uint64_t last_runs = runs;  // of the segment's last row
    if (started && start_pc > seg.head && start_pc < seg.end) {
      add_suffix(start_pc, seg.end, 1);
      ++last_runs;
    }
    if (stopped && end_pc > seg.head && end_pc < seg.end) {
      add_suffix(end_pc, seg.end, kMinusOne);
      --last_runs;
    }
    carried = seg.falls_through ? last_runs : 0;
  }
  for (uint32_t pc : rt.repeats) {
    const uint64_t ends = loop_ends[pc];
    t.op_rows[OpcodeIndex(Opcode::kRepeat)] -= ends;
    t.op_rows[OpcodeIndex(Opcode::kEnd)] += ends;
  }
  return t;
}

void Executor::RecordTraceShape(TraceShapeRecorder* recorder) {
  trace_shape_ = recorder;
  if (recorder != nullptr) recorder->set_max_tracked_words(options_.max_memory_bytes / 32);
}

Executor::State Executor::Dispatch(uint64_t stop) {
  return row_counts_ != nullptr ? Execute<true>(stop) : Execute<false>(stop);
}

Executor::State Executor::Run(uint64_t max_cycles) {
  if (state_ != State::kPaused) return state_;
  uint64_t stop = max_cycles > ~uint64_t{0} - clk_ ? ~uint64_t{0} : clk_ + max_cycles;
  return Dispatch(stop);
}

Executor::State Executor::Step() {
  if (state_ != State::kPaused) return state_;
  return Dispatch(clk_ + 1);
}

// Moves the current context's window so that there is room to grow in both directions,
// growing the buffer when needed. Keeps every position below `bot` zero.
bool Executor::Rebase(StackWindow& w, uint32_t pc, uint64_t clk) {
  Felt* base = buffer_.data();
  size_t sp_i = static_cast<size_t>(w.sp - base);
  size_t bot_i = static_cast<size_t>(w.bot - base);
  size_t floor_i = static_cast<size_t>(w.floor - base);
  size_t depth = sp_i - bot_i + 1;
  if (sp_i - floor_i > options_.max_stack_depth + 2 * kGap) {
    SetTrap(TrapKind::kStackOverflow, "operand stack overflow", pc, clk);
    return false;
  }
  size_t needed = floor_i + kGap + depth + 2 * kGap;
  if (needed > buffer_.size()) {
    size_t size = std::max(buffer_.size() * 2, needed);
    if (!ChargeMemory((size - buffer_.size()) * sizeof(Felt))) {
      SetMemoryTrap("the operand stack", (size - buffer_.size()) * sizeof(Felt), pc, clk);
      return false;
    }
    buffer_.resize(size, Felt(0));
    base = buffer_.data();
  }
  size_t new_bot = floor_i + kGap;
  if (new_bot != bot_i) {
    std::memmove(base + new_bot, base + bot_i, depth * sizeof(Felt));
    std::fill(base + floor_i, base + new_bot, Felt(0));
  }
  w.bot = base + new_bot;
  w.sp = w.bot + (depth - 1);
  w.floor = base + floor_i;
  return true;
}

namespace {

// A u256 as four u64 limbs, limb 0 least significant.
using U256 = std::array<uint64_t, 4>;

bool U256Less(const U256& a, const U256& b) {
  for (int i = 3; i >= 0; --i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

// q = a / b, r = a % b by shift and subtract (b != 0); off the hot path.
void U256DivMod(const U256& a, const U256& b, U256& q, U256& r) {
  q = {};
  r = {};
  for (int bit = 255; bit >= 0; --bit) {
    for (int i = 3; i > 0; --i) r[i] = (r[i] << 1) | (r[i - 1] >> 63);
    r[0] = (r[0] << 1) | ((a[bit / 64] >> (bit % 64)) & 1);
    if (!U256Less(r, b)) {
      uint64_t borrow = 0;
      for (int i = 0; i < 4; ++i) {
        const uint64_t bi = b[i] + borrow;
        const uint64_t next = (bi < borrow) || (r[i] < bi) ? 1 : 0;
        r[i] -= bi;
        borrow = next;
      }
      q[bit / 64] |= uint64_t{1} << (bit % 64);
    }
  }
}

}  // namespace

bool Executor::HandleEvent(uint64_t id, Felt* sp, const Felt* bot, Memory* memory, uint32_t pc,
                           uint64_t clk) {
  // Operands as the dialect's table lays them out: scalars at s(offset + j); a multi-element
  // operand of n elements at `base` has element j at s(offset + base + j) (little-endian) or
  // s(offset + base + n - 1 - j) (classic, element 0 deepest).
  const SystemEventLayout& layout = events_.layout();
  const int off = layout.operand_offset;
  const bool le = layout.order == SystemEventLayout::Order::kElement0Top;
  auto s = [sp](int i) { return sp[-i]; };
  auto sc = [&](int j) { return s(off + j); };
  auto elem = [&](int base, int n, int j) {
    return le ? s(off + base + j) : s(off + base + n - 1 - j);
  };
  // Word k of the n-element operand at `base`.
  auto word = [&](int base, int n, int k) {
    return Word{elem(base, n, 4 * k), elem(base, n, 4 * k + 1), elem(base, n, 4 * k + 2),
                elem(base, n, 4 * k + 3)};
  };
  auto key = [&] { return word(0, 4, 0); };  // the operand word at `off`
  // Pushes `values` so that `adv_push` x n leaves them on the operand stack in the layout's
  // order (the last adv_push ends on top).
  auto push_for_adv_push = [&](std::initializer_list<Felt> values) {
    if (le) {
      advice_.stack.insert(advice_.stack.end(), values.begin(), values.end());
    } else {
      advice_.stack.insert(advice_.stack.end(), std::rbegin(values), std::rend(values));
    }
  };
  auto u32 = [&](Felt v, const char* what) -> bool {
    if (v.value() > kU32Max) {
      SetTrap(TrapKind::kNotU32, absl::StrCat(what, ": not a u32 value: ", v.value()), pc, clk);
      return false;
    }
    return true;
  };
  auto map_key_not_found = [&](const Word& k) {
    SetTrap(TrapKind::kAdviceMapKeyNotFound,
            absl::StrCat("advice map key [", k[0].value(), ", ", k[1].value(), ", ", k[2].value(),
                         ", ", k[3].value(), "] not found"),
            pc, clk);
    return false;
  };
  auto to_host = [&](const SystemEventRow* named) {
    if (host_ != nullptr) {
      // Let the host see the current stack: publish sp first.
      sp_ = static_cast<size_t>(sp - buffer_.data());
      absl::Status st = host_->OnEvent(id, clk, *this, advice_);
      if (!st.ok()) {
        SetTrap(TrapKind::kEventFailed, absl::StrCat("event ", id, " failed: ", st.message()), pc,
                clk);
        return false;
      }
      return true;
    }
    if (named != nullptr) {
      SetTrap(TrapKind::kEventFailed,
              absl::StrCat("no event handler registered for event ", std::string(named->name),
                           " (id ", id, ")"),
              pc, clk);
      return false;
    }
    if (layout.unknown_events_fail) {
      SetTrap(TrapKind::kEventFailed, absl::StrCat("no event handler registered for event id ", id),
              pc, clk);
      return false;
    }
    return true;
  };
  const SystemEventRow* event = events_.FindById(id);
  if (event == nullptr) event = events_.FindLibraryEventById(id);
  if (event == nullptr) return to_host(nullptr);  // not an event of the dialect: the host's
  using H = SystemEventHandler;
  switch (event->handler) {
    case H::kU64Div: {
      if (!u32(sc(0), "u64div divisor hi") || !u32(sc(1), "u64div divisor lo") ||
          !u32(sc(2), "u64div dividend hi") || !u32(sc(3), "u64div dividend lo")) {
        return false;
      }
      uint64_t divisor = (sc(0).value() << 32) | sc(1).value();
      uint64_t dividend = (sc(2).value() << 32) | sc(3).value();
      if (divisor == 0) {
        SetTrap(TrapKind::kDivideByZero, "division by zero (adv.push_u64div)", pc, clk);
        return false;
      }
      uint64_t q = dividend / divisor, r = dividend % divisor;
      advice_.stack.push_back(Felt(r >> 32));
      advice_.stack.push_back(Felt(r & kU32Max));
      advice_.stack.push_back(Felt(q >> 32));
      advice_.stack.push_back(Felt(q & kU32Max));
      return true;
    }
    case H::kCoreU64Div: {
      if (!u32(sc(0), "u64_div divisor_lo") || !u32(sc(1), "u64_div divisor_hi") ||
          !u32(sc(2), "u64_div dividend_lo") || !u32(sc(3), "u64_div dividend_hi")) {
        return false;
      }
      const uint64_t divisor = (sc(1).value() << 32) | sc(0).value();
      const uint64_t dividend = (sc(3).value() << 32) | sc(2).value();
      if (divisor == 0) {
        SetTrap(TrapKind::kDivideByZero, "division by zero (u64_div)", pc, clk);
        return false;
      }
      const uint64_t q = dividend / divisor, r = dividend % divisor;
      advice_.PushFront({Felt(q >> 32), Felt(q & kU32Max), Felt(r >> 32), Felt(r & kU32Max)});
      return true;
    }
    case H::kCoreU128Div:
    case H::kCoreU256Div: {
      // The divisor's limbs (least significant first) from s1, the dividend's after them.
      const int limbs = event->handler == H::kCoreU128Div ? 4 : 8;
      U256 b{}, a{};
      for (int i = 0; i < limbs; ++i) {
        if (!u32(sc(i), "division divisor limb") || !u32(sc(limbs + i), "division dividend limb")) {
          return false;
        }
        b[i / 2] |= sc(i).value() << (32 * (i % 2));
        a[i / 2] |= sc(limbs + i).value() << (32 * (i % 2));
      }
      if (b == U256{}) {
        SetTrap(TrapKind::kDivideByZero,
                limbs == 4 ? "division by zero (u128_div)" : "division by zero (u256_div)", pc,
                clk);
        return false;
      }
      U256 q, r;
      U256DivMod(a, b, q, r);
      auto limb = [](const U256& v, int i) { return Felt((v[i / 2] >> (32 * (i % 2))) & kU32Max); };
      std::vector<Felt> out;
      out.reserve(2 * limbs);
      for (const U256* v : {&r, &q}) {
        if (limbs == 4) {
          for (int i = 0; i < 4; ++i) out.push_back(limb(*v, i));
        } else {  // the upper half first, then the lower (u256_div.rs)
          for (int i = 4; i < 8; ++i) out.push_back(limb(*v, i));
          for (int i = 0; i < 4; ++i) out.push_back(limb(*v, i));
        }
      }
      advice_.PushFront(out);
      return true;
    }
    case H::kU32Clz:
    case H::kU32Ctz:
    case H::kU32Clo:
    case H::kU32Cto: {
      if (!u32(sc(0), "u32 bit count")) return false;
      uint32_t v = static_cast<uint32_t>(sc(0).value());
      const H h = event->handler;
      int r = h == H::kU32Clz   ? std::countl_zero(v)
              : h == H::kU32Ctz ? std::countr_zero(v)
              : h == H::kU32Clo ? std::countl_one(v)
                                : std::countr_one(v);
      advice_.stack.push_back(Felt(static_cast<uint64_t>(r)));
      return true;
    }
    case H::kIlog2: {
      if (sc(0).value() == 0) {
        SetTrap(TrapKind::kDivideByZero, "ilog2 of zero", pc, clk);
        return false;
      }
      advice_.stack.push_back(Felt(static_cast<uint64_t>(63 - std::countl_zero(sc(0).value()))));
      return true;
    }
    case H::kExt2Inv: {
      const Felt c0 = elem(0, 2, 0), c1 = elem(0, 2, 1);
      if (c0.value() == 0 && c1.value() == 0) {
        SetTrap(TrapKind::kDivideByZero, "ext2inv of zero", pc, clk);
        return false;
      }
      Felt r0, r1;
      if (layout.ext2 == SystemEventLayout::Ext2Field::kXSquaredMinus7) {
        // x^2 = 7: (c0 + c1 x)^-1 = (c0 - c1 x) / (c0^2 - 7 c1^2).
        const Felt inv = (c0 * c0 - Felt(7) * c1 * c1).Inverse();
        r0 = c0 * inv;
        r1 = -c1 * inv;
      } else {
        // x^2 = x - 2. Conjugate of a + b x is (a + b) - b x; norm = a^2 + a b + 2 b^2.
        const Felt inv = (c0 * c0 + c0 * c1 + Felt(2) * c1 * c1).Inverse();
        r0 = (c0 + c1) * inv;
        r1 = -c1 * inv;
      }
      push_for_adv_push({r0, r1});
      return true;
    }
    case H::kMapValueToStack:
    case H::kMapValueToStackN:
    case H::kMapValueToStackN4:
    case H::kMapValueToStackN8: {
      const Word k = key();
      auto it = advice_.map.find(k);
      if (it == advice_.map.end()) return map_key_not_found(k);
      const size_t len = it->second.size();
      const size_t pad_to = event->handler == H::kMapValueToStackN4   ? 4
                            : event->handler == H::kMapValueToStackN8 ? 8
                                                                      : 1;
      advice_.stack.insert(advice_.stack.end(), (pad_to - len % pad_to) % pad_to, Felt(0));
      advice_.PushFront(it->second);
      if (event->handler != H::kMapValueToStack) {
        advice_.stack.push_back(Felt(static_cast<uint64_t>(len)));
      }
      return true;
    }
    case H::kMapValueCountToStack: {
      const Word k = key();
      auto it = advice_.map.find(k);
      if (it == advice_.map.end()) return map_key_not_found(k);
      advice_.stack.push_back(Felt(static_cast<uint64_t>(it->second.size())));
      return true;
    }
    case H::kHasMapKey:
      advice_.stack.push_back(Felt(advice_.map.contains(key()) ? 1 : 0));
      return true;
    case H::kMemToMap: {
      uint64_t start = sc(4).value(), end = sc(5).value();
      if (start > kU32Max || end > kU32Max || start > end) {
        SetTrap(TrapKind::kMemoryAddress,
                absl::StrCat("invalid memory range [", start, ", ", end, ") for adv.insert_mem"),
                pc, clk);
        return false;
      }
      if (!ChargeMemory((end - start) * sizeof(Felt))) {
        SetMemoryTrap("adv.insert_mem", (end - start) * sizeof(Felt), pc, clk);
        return false;
      }
      memory_used_ -= (end - start) * sizeof(Felt);  // charged below with the advice map
      std::vector<Felt> values;
      values.reserve(end - start);
      for (uint64_t a = start; a < end; ++a)
        values.push_back(memory->Load(static_cast<uint32_t>(a)));
      advice_map_values_ += values.size();
      advice_.map.insert_or_assign(key(), std::move(values));
      return true;
    }
    case H::kFalconDiv: {
      // [a_hi, a_lo] (both layouts): advice top-first [q_hi, q_lo, r].
      if (!u32(sc(0), "falcon_div hi") || !u32(sc(1), "falcon_div lo")) return false;
      uint64_t n = (sc(0).value() << 32) | sc(1).value();
      uint64_t q = n / 12289, r = n % 12289;
      advice_.stack.push_back(Felt(r));
      advice_.stack.push_back(Felt(q & kU32Max));
      advice_.stack.push_back(Felt(q >> 32));
      return true;
    }
    case H::kMerkleNodeToStack: {
      // [d, i, R] -> pushes the node word so that its element 0 is popped first.
      absl::StatusOr<Word> node =
          advice_.merkle_store.GetNode(word(2, 4, 0), sc(0).value(), sc(1).value());
      if (!node.ok()) {
        SetTrap(TrapKind::kMerkleStoreLookup,
                absl::StrCat("merkle store lookup failed: ", node.status().message()), pc, clk);
        return false;
      }
      for (int i = 3; i >= 0; --i) advice_.stack.push_back((*node)[i]);
      return true;
    }
    case H::kMerkleNodeMerge:
      // Operand words L then R: adds the tree with root Merge(L, R).
      advice_.merkle_store.MergeRoots(word(0, 8, 0), word(0, 8, 1));
      return true;
    case H::kHdwordToMap:
    case H::kHdwordToMapWithDomain: {
      // Operand words A then B (and d after them): map[MergeInDomain(A, B, d)] <- A || B.
      Felt domain = event->handler == H::kHdwordToMapWithDomain ? sc(8) : Felt(0);
      Word a = word(0, 8, 0), b = word(0, 8, 1);
      std::vector<Felt> values(a.begin(), a.end());
      values.insert(values.end(), b.begin(), b.end());
      advice_map_values_ += values.size();
      advice_.map.insert_or_assign(hasher_.MergeInDomain(a, b, domain), std::move(values));
      return true;
    }
    case H::kHqwordToMap: {
      // Operand words A, B, C, D: map[HashElements(A || B || C || D)] <- A || B || C || D.
      std::vector<Felt> values;
      values.reserve(16);
      for (int j = 0; j < 16; ++j) values.push_back(elem(0, 16, j));
      const Word k = hasher_.HashElements(values);
      advice_map_values_ += values.size();
      advice_.map.insert_or_assign(k, std::move(values));
      return true;
    }
    case H::kHpermToMap: {
      // A 12-element hasher state: map[digest of the permuted state] <- the rate before it.
      HasherState state;
      for (int j = 0; j < kHasherStateWidth; ++j) state[j] = elem(0, kHasherStateWidth, j);
      const int rate = hasher_.rate_start(), digest = hasher_.digest_start();
      std::vector<Felt> values(state.begin() + rate, state.begin() + rate + 8);
      hasher_.Permute(state);
      advice_map_values_ += values.size();
      advice_.map.insert_or_assign(
          Word{state[digest], state[digest + 1], state[digest + 2], state[digest + 3]},
          std::move(values));
      return true;
    }
    case H::kSmtPeek: {
      // [K, R]: the leaf of key K is the depth-64 node at index K[3] of the tree with root R.
      // An empty leaf means no value; otherwise the advice map holds the leaf's (key, value)
      // pairs under the leaf's hash. Pushes the value of K, or the empty word, so that its
      // element 0 is popped first (as adv.push_mtnode).
      const Word k = key();
      absl::StatusOr<Word> leaf = advice_.merkle_store.GetNode(word(4, 4, 0), 64, k[3].value());
      if (!leaf.ok()) {
        SetTrap(TrapKind::kMerkleStoreLookup,
                absl::StrCat("merkle store lookup failed: ", leaf.status().message()), pc, clk);
        return false;
      }
      Word value{};
      if (*leaf != EmptySubtreeRoot(hasher_, 0)) {
        auto it = advice_.map.find(*leaf);
        if (it == advice_.map.end()) {
          SetTrap(TrapKind::kAdviceMapKeyNotFound,
                  absl::StrCat("SMT leaf ", DigestHex(WordValues(*leaf)),
                               " has no preimage in the advice map"),
                  pc, clk);
          return false;
        }
        const std::vector<Felt>& pairs = it->second;
        if (pairs.size() % 4 != 0) {
          SetTrap(TrapKind::kEventFailed,
                  absl::StrCat("SMT leaf preimage of ", pairs.size(),
                               " elements is not a list of (key, value) words"),
                  pc, clk);
          return false;
        }
        for (size_t i = 0; i + 8 <= pairs.size(); i += 8) {
          if (std::equal(k.begin(), k.end(), pairs.begin() + i)) {
            std::copy(pairs.begin() + i + 4, pairs.begin() + i + 8, value.begin());
            break;
          }
        }
      }
      for (int i = 3; i >= 0; --i) advice_.stack.push_back(value[i]);
      return true;
    }
    case H::kLowerboundArray:
    case H::kLowerboundKeyValue: {
      // [K, start, end (, use_full_key)]: the first word (or key of a pair) at start.. that is
      // >= K in miden's Word order, checking that they ascend; advice top-first [ptr, found].
      const bool pairs = event->handler == H::kLowerboundKeyValue;
      bool half = false;
      if (pairs) {
        const uint64_t full = sc(6).value();
        if (full > 1) {
          SetTrap(TrapKind::kEventFailed, absl::StrCat("use_full_key must be 0 or 1, was ", full),
                  pc, clk);
          return false;
        }
        half = full == 0;
      }
      const uint64_t stride = pairs ? 8 : 4;
      const uint64_t start = sc(4).value(), end = sc(5).value();
      if (start > kU32Max || end > kU32Max || start > end) {
        SetTrap(TrapKind::kMemoryAddress,
                absl::StrCat("invalid memory range [", start, ", ", end, ") for a sorted array"),
                pc, clk);
        return false;
      }
      if (start % 4 != 0) {
        SetTrap(TrapKind::kUnalignedWord,
                absl::StrCat("sorted array start address ", start, " is not word-aligned"), pc,
                clk);
        return false;
      }
      if ((end - start) % stride != 0) {
        SetTrap(TrapKind::kEventFailed,
                absl::StrCat(pairs ? "key-value array must have size divisible by 4 or 8"
                                   : "array size must be divisible by 4",
                             ", but was ", end - start),
                pc, clk);
        return false;
      }
      auto search_key = [half](Word w) {
        if (half) w[0] = w[1] = Felt(0);
        return w;
      };
      auto load = [&](uint64_t a) {
        const uint32_t x = static_cast<uint32_t>(a);
        return search_key(
            Word{memory->Load(x), memory->Load(x + 1), memory->Load(x + 2), memory->Load(x + 3)});
      };
      const Word k = search_key(key());
      uint64_t result = end;
      bool found = false, have = false;
      Word prev{};
      for (uint64_t a = start; a < end; a += stride) {
        const Word w = load(a);
        if (a != start && WordLess(w, prev)) {
          SetTrap(TrapKind::kEventFailed,
                  absl::StrCat("sorted array element at ", a, " is smaller than its predecessor"),
                  pc, clk);
          return false;
        }
        if (!have && !WordLess(w, k)) {
          have = true;
          result = a;
          found = w == k;
        }
        prev = w;
      }
      advice_.PushFront({Felt(result), Felt(found ? 1 : 0)});
      return true;
    }
    case H::kKeccak256HashBytes:
      return HandlePrecompile(Precompile::kKeccak256, id, event->name, sp, memory, pc, clk);
    case H::kSha512HashBytes:
      return HandlePrecompile(Precompile::kSha512, id, event->name, sp, memory, pc, clk);
    case H::kEcdsaK256Verify:
      return HandlePrecompile(Precompile::kEcdsaK256Keccak, id, event->name, sp, memory, pc, clk);
    case H::kEddsaEd25519Verify:
      return HandlePrecompile(Precompile::kEddsaEd25519, id, event->name, sp, memory, pc, clk);
    case H::kAeadDecrypt:
      return HandlePrecompile(Precompile::kAeadDecrypt, id, event->name, sp, memory, pc, clk);
    case H::kDebugPrintStack:
    case H::kDebugPrintMem:
    case H::kDebugPrintMemAll:
    case H::kDebugPrintAdvStack:
    case H::kDebugPrintAdvMap:
    case H::kDebugPrintAdvMapItem:
      // Without a sink the prints cost their cycles and do nothing (noop_debug_handlers).
      if (options_.debug_print == nullptr) return true;
      return DebugPrint(*event, sp, bot, memory, pc, clk);
    case H::kNoop:
      return true;
    case H::kUnhandled:
      return to_host(event);
  }
  return true;  // not reached: every handler returns
}

bool Executor::DebugPrint(const SystemEventRow& event, const Felt* sp, const Felt* bot,
                          Memory* memory, uint32_t pc, uint64_t clk) {
  // Named: the view refers to them (FunctionRef), so they must outlive it.
  auto load = [memory](uint32_t addr) { return memory->LoadWritten(addr); };
  auto written = [memory](uint64_t max, std::vector<std::pair<uint32_t, Felt>>* out) {
    return memory->WrittenCells(max, out);
  };
  const DebugPrintView view{
      .clk = clk,
      .ctx = ctx_,
      .stack = std::span<const Felt>(bot, static_cast<size_t>(sp - bot + 1)),
      .load = load,
      .written = written,
      .advice = advice_,
      .max_items = options_.debug_print_max_items,
  };
  absl::Status st = WriteDebugPrint(event.handler, view, options_.debug_print);
  if (!st.ok()) {
    SetTrap(TrapKind::kEventFailed,
            absl::StrCat("event ", absl::string_view(event.name.data(), event.name.size()),
                         " failed: ", st.message()),
            pc, clk);
    return false;
  }
  return true;
}

bool Executor::HandlePrecompile(Precompile which, uint64_t id, std::string_view name, Felt* sp,
                                Memory* memory, uint32_t pc, uint64_t clk) {
  const absl::string_view event_name(name.data(), name.size());
  if (host_ != nullptr && host_->AnswersPrecompile(id)) {
    sp_ = static_cast<size_t>(sp - buffer_.data());  // the host may read the stack
    absl::Status st = host_->OnEvent(id, clk, *this, advice_);
    if (!st.ok()) {
      SetTrap(TrapKind::kEventFailed, absl::StrCat("event ", event_name, " failed: ", st.message()),
              pc, clk);
      return false;
    }
    return true;
  }
  // Only the top of the current context's stack is read (at most 12 operands).
  absl::StatusOr<PrecompileAnswer> answer = RunPrecompile(
      which, id, [sp](int i) { return sp[-i]; },
      [memory](uint32_t addr) { return memory->LoadWritten(addr); }, hasher_);
  if (!answer.ok()) {
    SetTrap(TrapKind::kEventFailed,
            absl::StrCat("event ", event_name, " failed: ", answer.status().message()), pc, clk);
    return false;
  }
  const size_t before = advice_.stack.size();
  advice_.PushFront(answer->advice);
  const PrecompileRequest* request = nullptr;
  if (answer->request.has_value()) {
    const uint64_t bytes = answer->request->calldata.size() + sizeof(PrecompileRequest);
    if (!ChargeMemory(bytes)) {
      SetMemoryTrap("a precompile request", bytes, pc, clk);
      return false;
    }
    precompile_requests_.push_back(*std::move(answer->request));
    request = &precompile_requests_.back();
  }
  if (host_ != nullptr) {
    absl::Status st = host_->OnPrecompileAnswered(
        id, clk, std::span<const Felt>(advice_.stack).subspan(before), request);
    if (!st.ok()) {
      SetTrap(TrapKind::kEventFailed, absl::StrCat("event ", event_name, " failed: ", st.message()),
              pc, clk);
      return false;
    }
  }
  return true;
}

// MPVERIFY: [V, d, i, R, ...] unchanged; V must be the node at (d, i) of the tree R. The words
// have element 0 deepest, or on top when `little_endian` (MPVERIFY of v0.21+).
namespace {

// Reports the permutation requests of a Merkle path computation to `recorder`: per level the
// state [current, sibling] or [sibling, current] (by the index bit) with a zero capacity.
void RecordMerklePath(TraceShapeRecorder& recorder, const Hasher& hasher, const Word& node,
                      std::span<const Word> path, uint64_t index) {
  const int rate = hasher.rate_start();
  Word cur = node;
  for (const Word& sibling : path) {
    const bool right = (index & 1) != 0;
    const Word& a = right ? sibling : cur;
    const Word& b = right ? cur : sibling;
    HasherState state{};
    for (int i = 0; i < 4; ++i) {
      state[rate + i] = a[i];
      state[rate + 4 + i] = b[i];
    }
    recorder.DynamicRequest(state);
    cur = hasher.Merge(a, b);
    index >>= 1;
  }
}

}  // namespace

bool Executor::MerkleVerify(Felt* sp, uint32_t pc, uint64_t clk, uint64_t error_code,
                            bool little_endian) {
  const Word node = little_endian ? StackWordLe(sp, 0) : StackWord(sp, 0);
  const uint64_t depth = sp[-4].value(), index = sp[-5].value();
  const Word root = little_endian ? StackWordLe(sp, 6) : StackWord(sp, 6);
  absl::StatusOr<std::pair<Word, std::vector<Word>>> path =
      advice_.merkle_store.GetPath(root, depth, index);
  if (!path.ok()) {
    SetTrap(TrapKind::kMerkleStoreLookup,
            absl::StrCat("merkle store lookup failed: ", path.status().message()), pc, clk);
    return false;
  }
  if (ComputeMerkleRoot(hasher_, node, path->second, index) != root) {
    SetTrap(TrapKind::kMerklePathVerificationFailed,
            absl::StrCat("merkle path verification failed for value ", WordText(node), " at index ",
                         index, " in the Merkle tree with root ", WordText(root),
                         " (error code: ", error_code, ")"),
            pc, clk, error_code);
    return false;
  }
  if (trace_shape_ != nullptr) {
    RecordMerklePath(*trace_shape_, hasher_, node, path->second, index);
  }
  return true;
}

// MRUPDATE: [V, d, i, R, NV, ...] -> [R', d, i, R, NV, ...] where R' is the root of R's tree
// with the node at (d, i) (which must be V) replaced by NV; the store keeps both trees. Word
// order as in MerkleVerify.
bool Executor::MerkleUpdate(Felt* sp, uint32_t pc, uint64_t clk, bool little_endian) {
  const Word old_node = little_endian ? StackWordLe(sp, 0) : StackWord(sp, 0);
  const uint64_t depth = sp[-4].value(), index = sp[-5].value();
  const Word old_root = little_endian ? StackWordLe(sp, 6) : StackWord(sp, 6);
  const Word new_node = little_endian ? StackWordLe(sp, 10) : StackWord(sp, 10);
  absl::StatusOr<MerkleStore::Update> update =
      advice_.merkle_store.SetNode(old_root, depth, index, new_node);
  if (!update.ok()) {
    SetTrap(TrapKind::kMerkleStoreLookup,
            absl::StrCat("merkle store update failed: ", update.status().message()), pc, clk);
    return false;
  }
  if (ComputeMerkleRoot(hasher_, old_node, update->path, index) != old_root) {
    SetTrap(TrapKind::kMerklePathVerificationFailed,
            absl::StrCat("merkle path verification failed for value ", WordText(old_node),
                         " at index ", index, " in the Merkle tree with root ", WordText(old_root)),
            pc, clk);
    return false;
  }
  if (trace_shape_ != nullptr) {
    // The old path, then the new one.
    RecordMerklePath(*trace_shape_, hasher_, old_node, update->path, index);
    RecordMerklePath(*trace_shape_, hasher_, new_node, update->path, index);
  }
  for (int i = 0; i < 4; ++i) sp[-i] = update->new_root[little_endian ? i : 3 - i];
  return true;
}

// LOGPRECOMPILE: [_, STMNT, _, ...] -> [STATE_NEW, OUT_RATE1, OUT_CAP, ...]. Permutes
// [STATE_PREV, STMNT, 0-word] (state[i] = the i-th element of that list, words with element 0
// on top of the stack) with the program's hasher; STATE_NEW (output word 0) becomes the
// transcript state (processor/src/execution/operations/crypto_ops/mod.rs at v0.25.7).
void Executor::LogPrecompile(Felt* sp) {
  HasherState state{};
  for (int i = 0; i < 4; ++i) {
    state[i] = precompile_transcript_[i];
    state[4 + i] = sp[-(4 + i)];
  }
  if (trace_shape_ != nullptr) trace_shape_->DynamicRequest(state);
  hasher_.Permute(state);
  for (int i = 0; i < 4; ++i) precompile_transcript_[i] = state[i];
  for (int i = 0; i < kHasherStateWidth; ++i) sp[-i] = state[i];
}

template <bool kCount>
Executor::State Executor::Execute(uint64_t stop_clk) {
  const Instruction* const code = program_.code.data();
  Felt* base = buffer_.data();
  Felt* sp = base + sp_;
  Felt* bot = base + bot_;
  Felt* floor = base + floor_;
  Felt* limit_hi = base + buffer_.size() - kSlack;
  uint32_t pc = pc_;
  // The last row executed is `jump_row` while pc is `jump_to` (just after a jump, or after a
  // pseudo operation, which runs no row) and pc - 1 otherwise: plain rows store nothing.
  uint32_t jump_to = pc;
  uint32_t jump_row = last_row_;
#define FF_LAST_ROW() (pc == jump_to ? jump_row : pc - 1)
  // Moves pc without running a row (pseudo operations).
#define FF_MOVE_PC(target)    \
  do {                        \
    jump_row = FF_LAST_ROW(); \
    pc = (target);            \
    jump_to = pc;             \
  } while (false)
  uint64_t clk = clk_;
  uint64_t fmp = fmp_;
  Memory* memory = memory_;
  // Rows run while clk < limit; at the limit we either pause (stop_clk) or trap (cycle cap).
  const uint64_t cap =
      options_.max_cycles == ~uint64_t{0} ? options_.max_cycles : options_.max_cycles + 1;
  const uint64_t limit = std::min(stop_clk, cap);
  State result = State::kPaused;
  // Counts an arrival at pc by a jump (RowCounts; compiled out of the uncounted loop).
#define FF_COUNT_ARRIVAL()                  \
  do {                                      \
    if constexpr (kCount) CountArrival(pc); \
  } while (false)
  if constexpr (kCount) CountStart(pc);
    // Reports to the trace-shape recorder, if there is one. A run-time test, not a further
    // instance of the loop: the test sits only on rows that feed a chiplet or the range checker,
    // and with one instance for both, a run with the trace shape executes the very machine code
    // of the run without it (two instances differed by up to 20 % on fib-like programs by
    // register allocation alone; session 12).
#define FF_SHAPE(stmt)                        \
  do {                                        \
    if (trace_shape_ != nullptr) [[unlikely]] \
      stmt;                                   \
  } while (false)
    // A memory row at element address `a` (trace shape); traps when its bookkeeping is too large.
#define FF_MEM_ROW(a)                                                                              \
  do {                                                                                             \
    if (trace_shape_ != nullptr) [[unlikely]] {                                                    \
      if (!trace_shape_->MemoryAccess(static_cast<uint32_t>(a), clk)) {                            \
        SetMemoryTrap("the trace-shape record of distinct memory words (max-memory / 32)", 32, pc, \
                      clk);                                                                        \
        goto trapped;                                                                              \
      }                                                                                            \
    }                                                                                              \
  } while (false)

#define FF_S(i) sp[-(i)]
#define FF_PUSH(v) (*++sp = (v))
#define FF_POP()                      \
  do {                                \
    --sp;                             \
    if (sp - 15 < bot) bot = sp - 15; \
  } while (false)
#define FF_TRAP(kind, msg)       \
  do {                           \
    SetTrap(kind, msg, pc, clk); \
    goto trapped;                \
  } while (false)
#define FF_HEADROOM()                                             \
  do {                                                            \
    if (sp - floor < kSlack + 16 || sp > limit_hi) [[unlikely]] { \
      /* A copy: the hot locals' addresses never escape. */       \
      StackWindow w{sp, bot, floor};                              \
      if (!Rebase(w, pc, clk)) goto trapped;                      \
      sp = w.sp;                                                  \
      bot = w.bot;                                                \
      floor = w.floor;                                            \
      base = buffer_.data();                                      \
      limit_hi = base + buffer_.size() - kSlack;                  \
    }                                                             \
  } while (false)
#define FF_U32(v, code)                                                                          \
  do {                                                                                           \
    if ((v).value() > kU32Max) [[unlikely]] {                                                    \
      SetTrap(TrapKind::kNotU32, absl::StrCat("not a u32 value: ", (v).value()), pc, clk, code); \
      goto trapped;                                                                              \
    }                                                                                            \
  } while (false)
#define FF_BINARY(v)                                                                \
  do {                                                                              \
    if ((v).value() > 1) [[unlikely]] {                                             \
      FF_TRAP(TrapKind::kNotBinary,                                                 \
              absl::StrCat("expected a binary value (0 or 1), got ", (v).value())); \
    }                                                                               \
  } while (false)
#define FF_ADDR(v)                                                                          \
  do {                                                                                      \
    if ((v).value() > kU32Max) [[unlikely]] {                                               \
      FF_TRAP(TrapKind::kMemoryAddress,                                                     \
              absl::StrCat("memory address ", (v).value(), " is out of bounds (>= 2^32)")); \
    }                                                                                       \
  } while (false)
#define FF_WADDR(v)                                                       \
  do {                                                                    \
    FF_ADDR(v);                                                           \
    if (((v).value() & 3) != 0) [[unlikely]] {                            \
      FF_TRAP(TrapKind::kUnalignedWord,                                   \
              absl::StrCat("word memory access at address ", (v).value(), \
                           " is not aligned to a multiple of 4"));        \
    }                                                                     \
  } while (false)
    // Makes the page of address `a` writable (memory->At), allocating it under the budget.
#define FF_WRITABLE(a)                                               \
  do {                                                               \
    if (!memory->Selected(a)) [[unlikely]] {                         \
      if (!memory->Select(a)) {                                      \
        SetMemoryTrap("a memory page", Memory::kPageBytes, pc, clk); \
        goto trapped;                                                \
      }                                                              \
    }                                                                \
  } while (false)
    // Makes room for one more element in a call stack vector (frames_, returns_, contexts_).
#define FF_CALL_ROOM(v)                               \
  do {                                                \
    if ((v).size() == (v).capacity()) [[unlikely]] {  \
      if (!GrowCallStack((v), pc, clk)) goto trapped; \
    }                                                 \
  } while (false)
#define FF_ROW()                     \
  ++pc;                              \
  if (++clk >= limit) [[unlikely]] { \
    goto at_limit;                   \
  }                                  \
  continue
    // Like FF_ROW, for rows that also jump.
#define FF_ROW_TO(target)            \
  jump_row = pc;                     \
  pc = (target);                     \
  jump_to = pc;                      \
  FF_COUNT_ARRIVAL();                \
  if (++clk >= limit) [[unlikely]] { \
    goto at_limit;                   \
  }                                  \
  continue

  for (;;) {
    const Instruction& in = code[pc];
    switch (in.opcode) {
      // ---- system
      case Opcode::kNoop:
        FF_ROW();
      case Opcode::kAssert:
        if (FF_S(0).value() != 1) [[unlikely]] {
          SetTrap(TrapKind::kAssertionFailed,
                  absl::StrCat("assertion failed with error code ", in.imm), pc, clk, in.imm);
          goto trapped;
        }
        FF_POP();
        FF_ROW();
      case Opcode::kFmpAdd:
        FF_S(0) = FF_S(0) + Felt(fmp);
        FF_ROW();
      case Opcode::kFmpUpdate: {
        uint64_t next = (Felt(fmp) + FF_S(0)).value();
        if (next < kFmpMin || next > kFmpMax) [[unlikely]] {
          FF_TRAP(TrapKind::kFmpOutOfBounds,
                  absl::StrCat("frame pointer ", next, " is outside [2^30, 3*2^30)"));
        }
        fmp = next;
        FF_POP();
        FF_ROW();
      }
      case Opcode::kSDepth: {
        uint64_t depth = static_cast<uint64_t>(sp - bot + 1);
        FF_PUSH(Felt(depth));
        FF_ROW();
      }
      case Opcode::kClk:
        FF_PUSH(Felt(clk));
        FF_ROW();
      case Opcode::kEmit:
        if (!HandleEvent(in.imm, sp, bot, memory, pc, clk) || !ChargeAdvice(pc, clk)) {
          goto trapped;
        }
        FF_ROW();
      case Opcode::kEmitTop:
        // The event id is s0 (not popped).
        if (!HandleEvent(FF_S(0).value(), sp, bot, memory, pc, clk) || !ChargeAdvice(pc, clk)) {
          goto trapped;
        }
        FF_ROW();
      case Opcode::kCaller:
        if (!in_syscall_) [[unlikely]] {
          FF_TRAP(TrapKind::kSyscallContext, "caller instruction used outside of syscall");
        }
        for (int i = 0; i < 4; ++i) FF_S(i) = creator_[3 - i];
        FF_ROW();
      case Opcode::kCallerAny:
        // The caller-hash register, element 0 on top; zeros until a CALL/DYNCALL sets it.
        for (int i = 0; i < 4; ++i) FF_S(i) = creator_[i];
        FF_ROW();

      // ---- field
      case Opcode::kAdd:
        FF_S(1) = FF_S(1) + FF_S(0);
        FF_POP();
        FF_ROW();
      case Opcode::kNeg:
        FF_S(0) = -FF_S(0);
        FF_ROW();
      case Opcode::kMul:
        FF_S(1) = FF_S(1) * FF_S(0);
        FF_POP();
        FF_ROW();
      case Opcode::kInv:
        if (FF_S(0).value() == 0) [[unlikely]] {
          FF_TRAP(TrapKind::kDivideByZero, "division by zero (inverse of 0)");
        }
        FF_S(0) = FF_S(0).Inverse();
        FF_ROW();
      case Opcode::kIncr:
        FF_S(0) = FF_S(0) + Felt(1);
        FF_ROW();
      case Opcode::kAnd:
        FF_BINARY(FF_S(0));
        FF_BINARY(FF_S(1));
        FF_S(1) = Felt(FF_S(1).value() & FF_S(0).value());
        FF_POP();
        FF_ROW();
      case Opcode::kOr:
        FF_BINARY(FF_S(0));
        FF_BINARY(FF_S(1));
        FF_S(1) = Felt(FF_S(1).value() | FF_S(0).value());
        FF_POP();
        FF_ROW();
      case Opcode::kNot:
        FF_BINARY(FF_S(0));
        FF_S(0) = Felt(1 - FF_S(0).value());
        FF_ROW();
      case Opcode::kEq:
        FF_S(1) = Felt(FF_S(1) == FF_S(0) ? 1 : 0);
        FF_POP();
        FF_ROW();
      case Opcode::kEqz:
        FF_S(0) = Felt(FF_S(0).value() == 0 ? 1 : 0);
        FF_ROW();
      case Opcode::kExpAcc: {
        Felt base_v = FF_S(1), acc = FF_S(2);
        uint64_t e = FF_S(3).value();
        uint64_t bit = e & 1;
        if (bit) acc = acc * base_v;
        FF_S(0) = Felt(bit);
        FF_S(1) = base_v * base_v;
        FF_S(2) = acc;
        FF_S(3) = Felt(e >> 1);
        FF_ROW();
      }
      case Opcode::kExt2Mul: {
        Felt b1 = FF_S(0), b0 = FF_S(1), a1 = FF_S(2), a0 = FF_S(3);
        Felt b0a0 = b0 * a0;
        FF_S(2) = (b0 + b1) * (a1 + a0) - b0a0;
        FF_S(3) = b0a0 - Felt(2) * b1 * a1;
        FF_ROW();
      }
      case Opcode::kExt2MulX7: {
        // [b0, b1, a0, a1] -> [b0, b1, c0, c1], c = a * b in F_p[x]/(x^2 - 7).
        Felt b0 = FF_S(0), b1 = FF_S(1), a0 = FF_S(2), a1 = FF_S(3);
        Felt b0a0 = b0 * a0, b1a1 = b1 * a1;
        FF_S(2) = b0a0 + Felt(7) * b1a1;
        FF_S(3) = (b0 + b1) * (a0 + a1) - b0a0 - b1a1;
        FF_ROW();
      }

      // ---- u32
      case Opcode::kU32Split: {
        uint64_t v = FF_S(0).value();
        FF_SHAPE(trace_shape_->U32Checks(v & kU32Max, v >> 32));
        FF_S(0) = Felt(v & kU32Max);
        FF_PUSH(Felt(v >> 32));
        FF_ROW();
      }
      case Opcode::kU32Add: {
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        uint64_t sum = FF_S(0).value() + FF_S(1).value();
        FF_SHAPE(trace_shape_->U32Checks(sum & kU32Max, sum >> 32));
        FF_S(1) = Felt(sum & kU32Max);
        FF_S(0) = Felt(sum >> 32);
        FF_ROW();
      }
      case Opcode::kU32Add3: {
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        FF_U32(FF_S(2), 0);
        uint64_t sum = FF_S(0).value() + FF_S(1).value() + FF_S(2).value();
        FF_SHAPE(trace_shape_->U32Checks(sum & kU32Max, sum >> 32));
        FF_S(2) = Felt(sum & kU32Max);
        FF_S(1) = Felt(sum >> 32);
        FF_POP();
        FF_ROW();
      }
      case Opcode::kU32Sub: {
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        uint64_t b = FF_S(0).value(), a = FF_S(1).value();
        FF_SHAPE(trace_shape_->U32Checks((a - b) & kU32Max, 0));
        FF_S(1) = Felt((a - b) & kU32Max);
        FF_S(0) = Felt(a < b ? 1 : 0);
        FF_ROW();
      }
      case Opcode::kU32Mul: {
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        uint64_t prod = FF_S(0).value() * FF_S(1).value();
        FF_SHAPE(trace_shape_->U32Checks(prod & kU32Max, prod >> 32));
        FF_S(1) = Felt(prod & kU32Max);
        FF_S(0) = Felt(prod >> 32);
        FF_ROW();
      }
      case Opcode::kU32MAdd: {
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        FF_U32(FF_S(2), 0);
        uint64_t r = FF_S(0).value() * FF_S(1).value() + FF_S(2).value();
        FF_SHAPE(trace_shape_->U32Checks(r & kU32Max, r >> 32));
        FF_S(2) = Felt(r & kU32Max);
        FF_S(1) = Felt(r >> 32);
        FF_POP();
        FF_ROW();
      }
      case Opcode::kU32SplitLe: {
        // [a] -> [lo, hi]
        uint64_t v = FF_S(0).value();
        FF_SHAPE(trace_shape_->U32Checks(v & kU32Max, v >> 32));
        FF_S(0) = Felt(v >> 32);
        FF_PUSH(Felt(v & kU32Max));
        FF_ROW();
      }
      case Opcode::kU32AddLe: {
        // [b, a] -> [sum mod 2^32, carry]
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        uint64_t sum = FF_S(0).value() + FF_S(1).value();
        FF_SHAPE(trace_shape_->U32Checks(sum & kU32Max, sum >> 32));
        FF_S(0) = Felt(sum & kU32Max);
        FF_S(1) = Felt(sum >> 32);
        FF_ROW();
      }
      case Opcode::kU32Add3Le: {
        // [c, b, a] -> [sum mod 2^32, carry]
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        FF_U32(FF_S(2), 0);
        uint64_t sum = FF_S(0).value() + FF_S(1).value() + FF_S(2).value();
        FF_SHAPE(trace_shape_->U32Checks(sum & kU32Max, sum >> 32));
        FF_S(1) = Felt(sum & kU32Max);
        FF_S(2) = Felt(sum >> 32);
        FF_POP();
        FF_ROW();
      }
      case Opcode::kU32MulLe: {
        // [b, a] -> [lo, hi]
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        uint64_t prod = FF_S(0).value() * FF_S(1).value();
        FF_SHAPE(trace_shape_->U32Checks(prod & kU32Max, prod >> 32));
        FF_S(0) = Felt(prod & kU32Max);
        FF_S(1) = Felt(prod >> 32);
        FF_ROW();
      }
      case Opcode::kU32MAddLe: {
        // [b, a, c] -> [lo, hi] of a * b + c
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        FF_U32(FF_S(2), 0);
        uint64_t r = FF_S(0).value() * FF_S(1).value() + FF_S(2).value();
        FF_SHAPE(trace_shape_->U32Checks(r & kU32Max, r >> 32));
        FF_S(1) = Felt(r & kU32Max);
        FF_S(2) = Felt(r >> 32);
        FF_POP();
        FF_ROW();
      }
      case Opcode::kU32Div: {
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        uint64_t b = FF_S(0).value(), a = FF_S(1).value();
        if (b == 0) [[unlikely]] {
          FF_TRAP(TrapKind::kDivideByZero, "u32 division by zero");
        }
        FF_SHAPE(trace_shape_->U32Checks(a - a / b, b - a % b - 1));
        FF_S(1) = Felt(a / b);
        FF_S(0) = Felt(a % b);
        FF_ROW();
      }
      case Opcode::kU32And:
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        FF_SHAPE(trace_shape_->Bitwise());
        FF_S(1) = Felt(FF_S(1).value() & FF_S(0).value());
        FF_POP();
        FF_ROW();
      case Opcode::kU32Xor:
        FF_U32(FF_S(0), 0);
        FF_U32(FF_S(1), 0);
        FF_SHAPE(trace_shape_->Bitwise());
        FF_S(1) = Felt(FF_S(1).value() ^ FF_S(0).value());
        FF_POP();
        FF_ROW();
      case Opcode::kU32Assert2:
        FF_U32(FF_S(0), in.imm);
        FF_U32(FF_S(1), in.imm);
        FF_SHAPE(trace_shape_->U32Checks(FF_S(0).value(), FF_S(1).value()));
        FF_ROW();

      // ---- stack
      case Opcode::kPad:
        FF_PUSH(Felt(0));
        FF_ROW();
      case Opcode::kDrop:
        FF_POP();
        FF_ROW();
      case Opcode::kDup0: {
        Felt v = FF_S(0);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup1: {
        Felt v = FF_S(1);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup2: {
        Felt v = FF_S(2);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup3: {
        Felt v = FF_S(3);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup4: {
        Felt v = FF_S(4);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup5: {
        Felt v = FF_S(5);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup6: {
        Felt v = FF_S(6);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup7: {
        Felt v = FF_S(7);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup9: {
        Felt v = FF_S(9);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup11: {
        Felt v = FF_S(11);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup13: {
        Felt v = FF_S(13);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kDup15: {
        Felt v = FF_S(15);
        FF_PUSH(v);
        FF_ROW();
      }
      case Opcode::kSwap:
        std::swap(FF_S(0), FF_S(1));
        FF_ROW();
      case Opcode::kSwapW:
        for (int i = 0; i < 4; ++i) std::swap(FF_S(i), FF_S(i + 4));
        FF_ROW();
      case Opcode::kSwapW2:
        for (int i = 0; i < 4; ++i) std::swap(FF_S(i), FF_S(i + 8));
        FF_ROW();
      case Opcode::kSwapW3:
        for (int i = 0; i < 4; ++i) std::swap(FF_S(i), FF_S(i + 12));
        FF_ROW();
      case Opcode::kSwapDW:
        for (int i = 0; i < 8; ++i) std::swap(FF_S(i), FF_S(i + 8));
        FF_ROW();
#define FF_MOVUP(n)                                    \
  case Opcode::kMovUp##n: {                            \
    Felt t = FF_S(n);                                  \
    for (int i = n; i > 0; --i) FF_S(i) = FF_S(i - 1); \
    FF_S(0) = t;                                       \
    FF_ROW();                                          \
  }
#define FF_MOVDN(n)                                    \
  case Opcode::kMovDn##n: {                            \
    Felt t = FF_S(0);                                  \
    for (int i = 0; i < n; ++i) FF_S(i) = FF_S(i + 1); \
    FF_S(n) = t;                                       \
    FF_ROW();                                          \
  }
        FF_MOVUP(2);
        FF_MOVUP(3);
        FF_MOVUP(4);
        FF_MOVUP(5);
        FF_MOVUP(6);
        FF_MOVUP(7);
        FF_MOVUP(8);
        FF_MOVDN(2);
        FF_MOVDN(3);
        FF_MOVDN(4);
        FF_MOVDN(5);
        FF_MOVDN(6);
        FF_MOVDN(7);
        FF_MOVDN(8);
#undef FF_MOVUP
#undef FF_MOVDN
      case Opcode::kCSwap: {
        Felt c = FF_S(0);
        FF_BINARY(c);
        FF_POP();
        if (c.value() == 1) std::swap(FF_S(0), FF_S(1));
        FF_ROW();
      }
      case Opcode::kCSwapW: {
        Felt c = FF_S(0);
        FF_BINARY(c);
        FF_POP();
        if (c.value() == 1) {
          for (int i = 0; i < 4; ++i) std::swap(FF_S(i), FF_S(i + 4));
        }
        FF_ROW();
      }

      // ---- I/O
      case Opcode::kPush:
        FF_PUSH(Felt(in.imm));
        FF_ROW();
      case Opcode::kAdvPop:
        if (advice_.stack.empty()) [[unlikely]] {
          FF_TRAP(TrapKind::kAdviceStackEmpty, "advice stack is empty");
        }
        FF_PUSH(advice_.stack.back());
        advice_.stack.pop_back();
        FF_ROW();
      case Opcode::kAdvPopW: {
        if (advice_.stack.size() < 4) [[unlikely]] {
          FF_TRAP(TrapKind::kAdviceStackEmpty, "advice stack has fewer than 4 elements");
        }
        auto& a = advice_.stack;
        for (int i = 3; i >= 0; --i) {
          FF_S(i) = a.back();
          a.pop_back();
        }
        FF_ROW();
      }
      case Opcode::kAdvPopWLe: {
        // The first popped element goes to s0.
        if (advice_.stack.size() < 4) [[unlikely]] {
          FF_TRAP(TrapKind::kAdviceStackEmpty, "advice stack has fewer than 4 elements");
        }
        auto& a = advice_.stack;
        for (int i = 0; i < 4; ++i) {
          FF_S(i) = a.back();
          a.pop_back();
        }
        FF_ROW();
      }
      case Opcode::kMLoad:
        FF_ADDR(FF_S(0));
        FF_MEM_ROW(FF_S(0).value());
        FF_S(0) = memory->Load(static_cast<uint32_t>(FF_S(0).value()));
        FF_ROW();
      case Opcode::kMStore: {
        FF_ADDR(FF_S(0));
        uint32_t a = static_cast<uint32_t>(FF_S(0).value());
        FF_MEM_ROW(a);
        FF_POP();
        FF_WRITABLE(a);
        memory->At(a) = FF_S(0);
        FF_ROW();
      }
      case Opcode::kMLoadW: {
        FF_WADDR(FF_S(0));
        uint32_t a = static_cast<uint32_t>(FF_S(0).value());
        FF_MEM_ROW(a);
        FF_POP();
        for (int i = 0; i < 4; ++i) FF_S(3 - i) = memory->Load(a + i);
        FF_ROW();
      }
      case Opcode::kMStoreW: {
        FF_WADDR(FF_S(0));
        uint32_t a = static_cast<uint32_t>(FF_S(0).value());
        FF_MEM_ROW(a);
        FF_POP();
        FF_WRITABLE(a);  // a word never crosses a page
        for (int i = 0; i < 4; ++i) memory->At(a + i) = FF_S(3 - i);
        FF_ROW();
      }
      case Opcode::kMLoadWLe: {
        // [a, ...] -> [mem[a], mem[a+1], mem[a+2], mem[a+3], ...]
        FF_WADDR(FF_S(0));
        uint32_t a = static_cast<uint32_t>(FF_S(0).value());
        FF_MEM_ROW(a);
        FF_POP();
        for (int i = 0; i < 4; ++i) FF_S(i) = memory->Load(a + i);
        FF_ROW();
      }
      case Opcode::kMStoreWLe: {
        // [a, v0, v1, v2, v3, ...] -> [v0, v1, v2, v3, ...], mem[a + i] <- vi
        FF_WADDR(FF_S(0));
        uint32_t a = static_cast<uint32_t>(FF_S(0).value());
        FF_MEM_ROW(a);
        FF_POP();
        FF_WRITABLE(a);  // a word never crosses a page
        for (int i = 0; i < 4; ++i) memory->At(a + i) = FF_S(i);
        FF_ROW();
      }
      case Opcode::kMStreamLe: {
        // a = s12: s0..s3 <- mem[a..a+4), s4..s7 <- mem[a+4..a+8), element 0 on top; s12 += 8
        FF_WADDR(FF_S(12));
        uint64_t a = FF_S(12).value();
        if (a + 4 > kU32Max) [[unlikely]] {
          FF_TRAP(TrapKind::kMemoryAddress,
                  absl::StrCat("memory address ", a + 4, " is out of bounds (>= 2^32)"));
        }
        FF_MEM_ROW(a);
        FF_MEM_ROW(a + 4);
        for (int i = 0; i < 8; ++i) FF_S(i) = memory->Load(static_cast<uint32_t>(a + i));
        FF_S(12) = Felt(a) + Felt(8);
        FF_ROW();
      }
      case Opcode::kPipeLe: {
        // Pops 8 advice elements: the i-th popped goes to mem[a + i] and s_i; s12 += 8.
        FF_WADDR(FF_S(12));
        uint64_t a = FF_S(12).value();
        if (a + 4 > kU32Max) [[unlikely]] {
          FF_TRAP(TrapKind::kMemoryAddress,
                  absl::StrCat("memory address ", a + 4, " is out of bounds (>= 2^32)"));
        }
        FF_MEM_ROW(a);
        FF_MEM_ROW(a + 4);
        if (advice_.stack.size() < 8) [[unlikely]] {
          FF_TRAP(TrapKind::kAdviceStackEmpty, "advice stack has fewer than 8 elements");
        }
        for (int i = 0; i < 8; ++i) {
          const uint32_t ai = static_cast<uint32_t>(a + i);
          if ((i & 3) == 0) FF_WRITABLE(ai);  // each of the two words is on one page
          Felt v = advice_.stack.back();
          advice_.stack.pop_back();
          memory->At(ai) = v;
          FF_S(i) = v;
        }
        FF_S(12) = Felt(a) + Felt(8);
        FF_ROW();
      }
      case Opcode::kCryptoStream: {
        // [rate(8), cap(4), src, dst, ...] -> [ct(8), cap(4), src + 8, dst + 8, ...] with
        // ct = mem[src..src+8) + rate, written to mem[dst..dst+8).
        const uint64_t src = FF_S(12).value(), dst = FF_S(13).value();
        if (src > kU32Max - 8 || dst > kU32Max - 8) [[unlikely]] {
          FF_TRAP(TrapKind::kMemoryAddress,
                  absl::StrCat("memory address ", src > kU32Max - 8 ? src : dst,
                               " is out of bounds (a range of 8 must end below 2^32)"));
        }
        if (src < dst + 8 && dst < src + 8) [[unlikely]] {
          FF_TRAP(TrapKind::kMemoryAddress,
                  absl::StrCat("crypto_stream: destination [", dst, ", ", dst + 8,
                               ") overlaps source [", src, ", ", src + 8, ")"));
        }
        FF_WADDR(FF_S(12));
        FF_WADDR(FF_S(13));
        const uint32_t s32 = static_cast<uint32_t>(src), d32 = static_cast<uint32_t>(dst);
        FF_MEM_ROW(s32);
        FF_MEM_ROW(s32 + 4);
        FF_MEM_ROW(d32);
        FF_MEM_ROW(d32 + 4);
        for (int i = 0; i < 8; ++i) FF_S(i) = FF_S(i) + memory->Load(s32 + i);
        for (int w = 0; w < 8; w += 4) {
          FF_WRITABLE(d32 + w);  // a word never crosses a page
          for (int i = 0; i < 4; ++i) memory->At(d32 + w + i) = FF_S(w + i);
        }
        FF_S(12) = Felt(src + 8);
        FF_S(13) = Felt(dst + 8);
        FF_ROW();
      }
      case Opcode::kMStream: {
        FF_WADDR(FF_S(12));
        uint64_t a = FF_S(12).value();
        if (a + 4 > kU32Max) [[unlikely]] {
          FF_TRAP(TrapKind::kMemoryAddress,
                  absl::StrCat("memory address ", a + 4, " is out of bounds (>= 2^32)"));
        }
        FF_MEM_ROW(a);
        FF_MEM_ROW(a + 4);
        for (int i = 0; i < 8; ++i) FF_S(7 - i) = memory->Load(static_cast<uint32_t>(a + i));
        FF_S(12) = Felt(a) + Felt(8);
        FF_ROW();
      }
      case Opcode::kPipe: {
        FF_WADDR(FF_S(12));
        uint64_t a = FF_S(12).value();
        if (a + 4 > kU32Max) [[unlikely]] {
          FF_TRAP(TrapKind::kMemoryAddress,
                  absl::StrCat("memory address ", a + 4, " is out of bounds (>= 2^32)"));
        }
        FF_MEM_ROW(a);
        FF_MEM_ROW(a + 4);
        if (advice_.stack.size() < 8) [[unlikely]] {
          FF_TRAP(TrapKind::kAdviceStackEmpty, "advice stack has fewer than 8 elements");
        }
        for (int i = 0; i < 8; ++i) {
          const uint32_t ai = static_cast<uint32_t>(a + i);
          if ((i & 3) == 0) FF_WRITABLE(ai);  // each of the two words is on one page
          Felt v = advice_.stack.back();
          advice_.stack.pop_back();
          memory->At(ai) = v;
          FF_S(7 - i) = v;
        }
        FF_S(12) = Felt(a) + Felt(8);
        FF_ROW();
      }

      // ---- crypto and recursive-verifier ops
      case Opcode::kHPerm: {
        // RPO hperm: this opcode is RPO-specific and calls the RPO permutation directly (no
        // virtual call per cycle); a dialect with another hash gets its own hperm opcode.
        RpoState state;
        LoadState(sp, state);
        FF_SHAPE(trace_shape_->DynamicRequest(state));
        Permute(state);
        for (int i = 0; i < kRpoStateWidth; ++i) FF_S(11 - i) = state[i];
        FF_ROW();
      }
      case Opcode::kHPermP2: {
        // Poseidon2 hperm: state[i] = s_i (the top word is rate word 0, the third the capacity).
        HasherState state;
        for (int i = 0; i < kHasherStateWidth; ++i) state[i] = FF_S(i);
        FF_SHAPE(trace_shape_->DynamicRequest(state));
        Poseidon2Permute(state);
        for (int i = 0; i < kHasherStateWidth; ++i) FF_S(i) = state[i];
        FF_ROW();
      }
      case Opcode::kMpVerify:
        if (!MerkleVerify(sp, pc, clk, in.imm, /*little_endian=*/false)) goto trapped;
        FF_ROW();
      case Opcode::kMrUpdate:
        if (!MerkleUpdate(sp, pc, clk, /*little_endian=*/false)) goto trapped;
        FF_ROW();
      case Opcode::kMpVerifyLe:
        if (!MerkleVerify(sp, pc, clk, in.imm, /*little_endian=*/true)) goto trapped;
        FF_ROW();
      case Opcode::kMrUpdateLe:
        if (!MerkleUpdate(sp, pc, clk, /*little_endian=*/true)) goto trapped;
        FF_ROW();
      case Opcode::kLogPrecompile:
        LogPrecompile(sp);
        FF_ROW();
        // The recursive-verifier operations (vm/executor/verifier_ops.h), one row each.
#define FF_VERIFIER_OP(call)                 \
  do {                                       \
    verifier_ops::OpResult r = (call);       \
    if (!r.ok()) [[unlikely]] {              \
      FF_TRAP(r.kind, std::move(r.message)); \
    }                                        \
  } while (false)
        // The current context's memory, as the verifier operations read it (`memory` is copied, so
        // its address never escapes the hot loop), and what is left of the memory budget.
#define FF_LOAD [m = memory](uint32_t a) { return m->Load(a); }
#define FF_SCRATCH (options_.max_memory_bytes - std::min(memory_used_, options_.max_memory_bytes))
      case Opcode::kFriE2F4:
        FF_VERIFIER_OP(verifier_ops::FriExt2Fold4Classic(sp));
        FF_POP();
        FF_ROW();
      case Opcode::kFriE2F4Le:
        FF_VERIFIER_OP(verifier_ops::FriExt2Fold4Le(sp));
        FF_POP();
        FF_ROW();
      case Opcode::kHornerBase:
        FF_VERIFIER_OP(verifier_ops::HornerEvalBaseClassic(sp, FF_LOAD));
        FF_MEM_ROW(FF_S(13).value());
        FF_MEM_ROW(FF_S(13).value() + 1);
        FF_ROW();
      case Opcode::kHornerBaseLe:
        FF_VERIFIER_OP(verifier_ops::HornerEvalBaseLe(sp, FF_LOAD));
        FF_MEM_ROW(FF_S(13).value());
        FF_MEM_ROW(FF_S(13).value() + 1);
        FF_ROW();
      case Opcode::kHornerExt:
        FF_VERIFIER_OP(verifier_ops::HornerEvalExtClassic(sp, FF_LOAD));
        FF_MEM_ROW(FF_S(13).value());
        FF_ROW();
      case Opcode::kHornerExtLe:
        FF_VERIFIER_OP(verifier_ops::HornerEvalExtLe(sp, FF_LOAD));
        FF_MEM_ROW(FF_S(13).value());
        FF_ROW();
        // EVALCIRCUIT [ptr, num_read, num_eval]: num_read / 2 word reads from ptr, then num_eval
        // element reads after them, all in this row; as many ACE rows.
#define FF_ACE_ROWS()                                                       \
  do {                                                                      \
    if (trace_shape_ != nullptr) [[unlikely]] {                             \
      const uint64_t ptr = FF_S(0).value(), reads = FF_S(1).value() / 2;    \
      const uint64_t evals = FF_S(2).value();                               \
      for (uint64_t r = 0; r < reads; ++r) FF_MEM_ROW(ptr + 4 * r);         \
      for (uint64_t e = 0; e < evals; ++e) FF_MEM_ROW(ptr + 4 * reads + e); \
      trace_shape_->Ace(reads + evals);                                     \
    }                                                                       \
  } while (false)
      case Opcode::kEvalCircuit:
        FF_VERIFIER_OP(verifier_ops::EvalCircuitClassic(sp, FF_LOAD, FF_SCRATCH));
        FF_ACE_ROWS();
        FF_ROW();
      case Opcode::kEvalCircuitLe:
        FF_VERIFIER_OP(verifier_ops::EvalCircuitLe(sp, FF_LOAD, FF_SCRATCH));
        FF_ACE_ROWS();
        FF_ROW();
#undef FF_ACE_ROWS
#undef FF_VERIFIER_OP
#undef FF_LOAD
#undef FF_SCRATCH

      // ---- control rows
      case Opcode::kSpan:
      case Opcode::kRespan:
      case Opcode::kJoin:
        FF_SHAPE(trace_shape_->StaticRequests(pc));
        FF_HEADROOM();
        FF_ROW();
      case Opcode::kEnd:
        if (in.imm == kEndOfCall) {
          uint64_t depth = static_cast<uint64_t>(sp - bot + 1);
          if (depth != 16) [[unlikely]] {
            FF_TRAP(TrapKind::kCallDepth,
                    absl::StrCat("stack depth must be 16 when a call returns, but it is ", depth));
          }
          Context& c = contexts_.back();
          Felt* caller_sp = base + c.sp;
          std::memcpy(caller_sp - 15, bot, 16 * sizeof(Felt));
          sp = caller_sp;
          bot = base + c.bot;
          floor = base + c.floor;
          fmp = c.fmp;
          // The root memory (left by a SYSCALL) is never returned to the pool.
          if (memory != memories_[0].get()) ReleaseMemory(memory);
          memory = c.memory;
          in_syscall_ = c.in_syscall;
          creator_ = c.creator;
          ctx_ = c.ctx;
          contexts_.pop_back();
          FF_SHAPE(trace_shape_->LeaveContext());
        }
        FF_HEADROOM();
        FF_ROW();
      case Opcode::kSplit: {
        Felt c = FF_S(0);
        FF_BINARY(c);
        FF_SHAPE(trace_shape_->StaticRequests(pc));
        FF_POP();
        FF_HEADROOM();
        FF_ROW_TO(c.value() == 0 ? in.aux : pc + 1);
      }
      case Opcode::kLoop: {
        Felt c = FF_S(0);
        FF_BINARY(c);
        FF_SHAPE(trace_shape_->StaticRequests(pc));
        FF_POP();
        FF_HEADROOM();
        FF_ROW_TO(c.value() == 0 ? in.aux : pc + 1);
      }
      case Opcode::kLoopDo:
        // Enters the body without popping (the condition is popped by the REPEAT / END row).
        FF_SHAPE(trace_shape_->StaticRequests(pc));
        FF_HEADROOM();
        FF_ROW();
      case Opcode::kRepeat: {
        Felt c = FF_S(0);
        FF_BINARY(c);
        FF_POP();
        FF_HEADROOM();
        // The last REPEAT row of a loop is the loop's END row in the trace.
        if constexpr (kCount) {
          if (c.value() == 0) CountLoopEnd(pc);
        }
        FF_ROW_TO(c.value() == 1 ? in.aux : pc + 1);
      }
#define FF_NEW_CONTEXT(is_call)                                                               \
  do {                                                                                        \
    /* New context: the callee sees the top 16 elements; deeper ones are hidden. */           \
    size_t sp_i = static_cast<size_t>(sp - base);                                             \
    FF_CALL_ROOM(contexts_);                                                                  \
    contexts_.push_back(Context{sp_i, static_cast<size_t>(bot - base),                        \
                                static_cast<size_t>(floor - base), fmp, memory, in_syscall_,  \
                                creator_, ctx_});                                             \
    size_t need = sp_i + 1 + 2 * kGap + 16 + 2 * kSlack;                                      \
    if (need > buffer_.size()) {                                                              \
      const size_t grown = std::max(buffer_.size() * 2, need);                                \
      if (!ChargeMemory((grown - buffer_.size()) * sizeof(Felt))) {                           \
        SetMemoryTrap("the operand stack", (grown - buffer_.size()) * sizeof(Felt), pc, clk); \
        goto trapped;                                                                         \
      }                                                                                       \
      buffer_.resize(grown, Felt(0));                                                         \
      base = buffer_.data();                                                                  \
      limit_hi = base + buffer_.size() - kSlack;                                              \
    }                                                                                         \
    Felt* new_floor = base + sp_i + 1;                                                        \
    Felt* new_bot = new_floor + kGap;                                                         \
    std::fill(new_floor, new_bot, Felt(0));                                                   \
    std::memcpy(new_bot, base + sp_i - 15, 16 * sizeof(Felt));                                \
    floor = new_floor;                                                                        \
    bot = new_bot;                                                                            \
    sp = new_bot + 15;                                                                        \
    if (static_cast<uint64_t>(sp_i) > options_.max_stack_depth + 4 * kGap) [[unlikely]] {     \
      FF_TRAP(TrapKind::kStackOverflow, "operand stack overflow");                            \
    }                                                                                         \
    fmp = (is_call) ? kFmpMin : (uint64_t{1} << 31);                                          \
    ctx_ = (is_call) ? clk + 1 : 0;                                                           \
    memory = (is_call) ? AcquireMemory() : memories_[0].get();                                \
  } while (false)
      case Opcode::kCall:
      case Opcode::kSyscall: {
        if (in_syscall_) [[unlikely]] {
          FF_TRAP(TrapKind::kSyscallContext, "call/syscall is not allowed inside a syscall");
        }
        FF_NEW_CONTEXT(in.opcode == Opcode::kCall);
        FF_SHAPE(trace_shape_->StaticRequests(pc));
        FF_SHAPE(trace_shape_->EnterContext(in.opcode == Opcode::kCall ? clk + 1 : 0));
        if (in.opcode == Opcode::kSyscall) {
          in_syscall_ = true;  // the creator stays the caller's: `caller` reports it
        } else {
          creator_ = program_.procedures[in.aux].mast_root;
        }
        FF_ROW();
      }
      case Opcode::kCallMemFmp:
      case Opcode::kSyscallMemFmp:
        // Allowed inside a syscall. CALL: a new context whose mem[2^32 - 2] (the frame pointer)
        // is 2^31, written in this row; SYSCALL: the root context, its frame pointer as it is.
        FF_NEW_CONTEXT(in.opcode == Opcode::kCallMemFmp);
        FF_SHAPE(trace_shape_->StaticRequests(pc));
        FF_SHAPE(trace_shape_->EnterContext(in.opcode == Opcode::kCallMemFmp ? clk + 1 : 0));
        if (in.opcode == Opcode::kSyscallMemFmp) {
          in_syscall_ = true;  // the caller-hash register stays the caller's
        } else {
          in_syscall_ = false;
          creator_ = program_.procedures[in.aux].mast_root;
          FF_MEM_ROW(kMemFmpAddr);
          FF_WRITABLE(kMemFmpAddr);
          memory->At(kMemFmpAddr) = Felt(kMemFmpInit);
        }
        FF_ROW();
      case Opcode::kDyn:
      case Opcode::kDynCall:
      case Opcode::kDynCallMemFmp: {
        if (in.opcode == Opcode::kDynCall && in_syscall_) [[unlikely]] {
          FF_TRAP(TrapKind::kSyscallContext, "dyncall is not allowed inside a syscall");
        }
        FF_WADDR(FF_S(0));
        uint32_t a = static_cast<uint32_t>(FF_S(0).value());
        DynTarget key;
        for (int i = 0; i < 4; ++i) key.digest[i] = memory->Load(a + i).value();
        const auto& targets = program_.dyn_targets;
        auto it = std::lower_bound(targets.begin(), targets.end(), key);
        if (it == targets.end() || it->digest != key.digest) [[unlikely]] {
          // At the DYN row, or the row after it (MastRules::dyn_miss_after_row).
          SetTrap(TrapKind::kDynamicTargetNotFound,
                  absl::StrCat("dynamic call target ", DigestHex(key.digest),
                               " is not the MAST root of any procedure of the program"),
                  pc, clk + dyn_miss_clk_offset_);
          goto trapped;
        }
        FF_SHAPE(trace_shape_->StaticRequests(pc));
        FF_MEM_ROW(a);
        FF_POP();
        if (in.opcode != Opcode::kDyn) {
          FF_NEW_CONTEXT(true);
          FF_SHAPE(trace_shape_->EnterContext(clk + 1));
          for (int i = 0; i < 4; ++i) creator_[i] = Felt(key.digest[i]);
          if (in.opcode == Opcode::kDynCallMemFmp) {
            in_syscall_ = false;
            FF_MEM_ROW(kMemFmpAddr);
            FF_WRITABLE(kMemFmpAddr);
            memory->At(kMemFmpAddr) = Felt(kMemFmpInit);
          }
        } else {
          FF_HEADROOM();
        }
        dyn_procedure_ = it->procedure;  // entered by the DYNENTER that follows
        FF_ROW();
      }
#undef FF_NEW_CONTEXT
      case Opcode::kHalt:
        FF_ROW();

      // ---- pseudo operations (no cycle)
      case Opcode::kEnterProc:
        FF_CALL_ROOM(frames_);
        frames_.push_back(in.aux);
        if (observer_ != nullptr) {
          if (in.imm == kEnterResume) {
            observer_->OnResume(in.aux, clk);
          } else {
            observer_->OnEnter(in.aux, clk);
          }
        }
        FF_MOVE_PC(pc + 1);
        continue;
      case Opcode::kLeaveProc:
        frames_.pop_back();
        if (observer_ != nullptr) observer_->OnLeave(clk);
        FF_MOVE_PC(pc + 1);
        continue;
      case Opcode::kGosub: {
        bool frame = in.imm != kNoFrame;
        FF_CALL_ROOM(returns_);
        returns_.push_back(Return{pc + 1, frame});
        if (frame) {
          FF_CALL_ROOM(frames_);
          frames_.push_back(static_cast<uint32_t>(in.imm));
          if (observer_ != nullptr) observer_->OnEnter(static_cast<uint32_t>(in.imm), clk);
        }
        FF_MOVE_PC(in.aux);
        FF_COUNT_ARRIVAL();
        continue;
      }
      case Opcode::kReturn: {
        Return r = returns_.back();
        returns_.pop_back();
        if (r.had_frame) {
          frames_.pop_back();
          if (observer_ != nullptr) observer_->OnLeave(clk);
        }
        FF_MOVE_PC(r.pc);
        FF_COUNT_ARRIVAL();
        continue;
      }
      case Opcode::kDynEnter: {
        // Like GOSUB; the procedure's RETURN comes back to the DYN node's END.
        const uint32_t proc = dyn_procedure_;
        FF_CALL_ROOM(returns_);
        FF_CALL_ROOM(frames_);
        returns_.push_back(Return{pc + 1, true});
        frames_.push_back(proc);
        if (observer_ != nullptr) observer_->OnEnter(proc, clk);
        FF_MOVE_PC(program_.procedures[proc].entry_pc);
        FF_COUNT_ARRIVAL();
        continue;
      }
      case Opcode::kTrace:
        if (host_ != nullptr) host_->OnTrace(in.imm, clk);
        FF_MOVE_PC(pc + 1);
        continue;
      case Opcode::kJump:
        FF_MOVE_PC(in.aux);
        FF_COUNT_ARRIVAL();
        continue;
      case Opcode::kNoForest:
        SetTrap(TrapKind::kProcedureNotFound,
                absl::StrCat("no MAST forest contains the procedure with root ",
                             DigestHex(program_.unresolved_roots[in.imm])),
                pc, clk);
        goto trapped;
      case Opcode::kFinish:
        result = State::kFinished;
        goto done;
      default:
        FF_TRAP(TrapKind::kUnsupported,
                absl::StrCat("unknown operation ", static_cast<int>(in.opcode)));
    }
  }

at_limit:
  if (clk >= cap) {
    SetTrap(TrapKind::kCycleLimit,
            absl::StrCat("cycle limit of ", options_.max_cycles, " cycles exceeded"), FF_LAST_ROW(),
            clk - 1);
    goto trapped;
  }
  result = State::kPaused;
  goto done;

trapped:
  result = State::kTrapped;

done:
  if constexpr (kCount) CountStop(pc);
  base = buffer_.data();
  sp_ = static_cast<size_t>(sp - base);
  bot_ = static_cast<size_t>(bot - base);
  floor_ = static_cast<size_t>(floor - base);
  pc_ = pc;
  last_row_ = FF_LAST_ROW();
  clk_ = clk;
  fmp_ = fmp;
  memory_ = memory;
  state_ = result;
  return result;

#undef FF_S
#undef FF_PUSH
#undef FF_POP
#undef FF_TRAP
#undef FF_HEADROOM
#undef FF_U32
#undef FF_BINARY
#undef FF_ADDR
#undef FF_WADDR
#undef FF_ROW
#undef FF_ROW_TO
#undef FF_WRITABLE
#undef FF_CALL_ROOM
#undef FF_COUNT_ARRIVAL
#undef FF_LAST_ROW
#undef FF_MOVE_PC
#undef FF_SHAPE
#undef FF_MEM_ROW
}

}  // namespace flamefleet::vm
