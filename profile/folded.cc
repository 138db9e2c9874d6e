#include "profile/folded.h"

#include <emmintrin.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace flamefleet::profile {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool IsCountChar(char c) { return (c >= '0' && c <= '9') || c == '.'; }

// Finds a trailing count token in [begin, end) (no trailing blanks). On success returns true
// and sets *token_begin; the token is preceded by at least one blank.
bool FindCount(const char* begin, const char* end, const char** token_begin) {
  const char* p = end;
  while (p > begin && IsCountChar(p[-1])) --p;
  if (p == end || p == begin || !IsSpace(p[-1])) return false;
  if (*p < '0' || *p > '9') return false;  // must start with a digit, like flamegraph.pl
  if (std::count(p, end, '.') > 1) return false;
  *token_begin = p;
  return true;
}

// Parses a count token; returns false if it does not fit.
bool ParseCount(const char* begin, const char* end, double scale, uint64_t* out, bool* fractional) {
  const bool has_dot = std::memchr(begin, '.', static_cast<size_t>(end - begin)) != nullptr;
  if (!has_dot && scale == 1.0) {
    uint64_t v = 0;
    if (end - begin <= 19) {  // cannot overflow
      for (const char* p = begin; p < end; ++p) v = v * 10 + static_cast<uint64_t>(*p - '0');
    } else {  // exact up to 2^64 - 1 (a double would round)
      for (const char* p = begin; p < end; ++p) {
        if (__builtin_mul_overflow(v, uint64_t{10}, &v) ||
            __builtin_add_overflow(v, static_cast<uint64_t>(*p - '0'), &v)) {
          return false;
        }
      }
    }
    *out = v;
    *fractional = false;
    return true;
  }
  double d = 0;
  if (!absl::SimpleAtod(absl::string_view(begin, static_cast<size_t>(end - begin)), &d)) {
    return false;
  }
  d *= scale;
  if (!(d >= 0) || d >= 1.8e19) return false;
  const double rounded = std::round(d);  // halves away from zero
  *fractional = rounded != d;
  *out = static_cast<uint64_t>(rounded);
  return true;
}

inline uint64_t Fold(uint64_t a, uint64_t b) {
  const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

// The low and high 8 bytes of a block as little-endian words.
inline uint64_t Low64(__m128i v) { return static_cast<uint64_t>(_mm_cvtsi128_si64(v)); }
inline uint64_t High64(__m128i v) {
  return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_srli_si128(v, 8)));
}

// 16 bytes of 0xff then 16 of 0: the 16 bytes at kKeep + 16 - r keep the low r bytes of a block.
alignas(16) constexpr uint8_t kKeep[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                           0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// Frame and prefix hash constants: lane 1 (the table key) and lane 2 (the check) are independent
// functions.
constexpr uint64_t kA0 = 0x9e3779b97f4a7c15ull, kA1 = 0xa0761d6478bd642full,
                   kA2 = 0xe7037ed1a0b428dbull, kA3 = 0x8ebc6af09c88c6e3ull;
constexpr uint64_t kB0 = 0xc2b2ae3d27d4eb4full, kB1 = 0x589965cc75374cc3ull,
                   kB2 = 0x1d8e4e27c47d124full, kB3 = 0xd6e8feb86659fd93ull;
constexpr uint64_t kPrefixSeed1 = 0x243f6a8885a308d3ull, kP1 = 0xa4093822299f31d1ull;
constexpr uint64_t kPrefixSeed2 = 0x13198a2e03707344ull, kP2 = 0x082efa98ec4e6c89ull;

// Lines are parsed and added to the profiles in batches of about this many input bytes (small
// enough that the parsed frames stay in cache).
constexpr size_t kBatchBytes = 64 << 10;

// Chains a prefix hash with the next frame's hash.
inline uint64_t ChainPrefix(uint64_t prefix, uint64_t frame, uint64_t k) {
  return Fold(prefix ^ frame, k);
}

// A read-only, private mapping of bytes [offset, offset + size) of a file, unmapped when destroyed.
// The pages are populated up front (one system call instead of a fault per page); they are page
// cache, shared and reclaimable, and leave the process's RSS when unmapped.
class MappedWindow {
 public:
  MappedWindow() = default;
  MappedWindow(const MappedWindow&) = delete;
  MappedWindow& operator=(const MappedWindow&) = delete;
  ~MappedWindow() { Unmap(); }

  // Maps the window; returns false (and maps nothing) if mmap fails.
  bool Map(int fd, uint64_t offset, size_t size) {
    Unmap();
    static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t start = offset / page * page;
    const size_t length = size + static_cast<size_t>(offset - start);
    void* base =
        mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, static_cast<off_t>(start));
    if (base == MAP_FAILED) return false;
    base_ = base;
    length_ = length;
    data_ = static_cast<const char*>(base) + (offset - start);
    size_ = size;
    return true;
  }
  void Unmap() {
    if (base_ != nullptr) munmap(base_, length_);
    base_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* base_ = nullptr;
  size_t length_ = 0;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// Returns whether a second thread would likely get a core of its own: this process may run on two
// or more CPUs and the 1-minute load average is below their number. On a busy machine the pipeline
// only adds hand-off waits.
bool SpareCoreLikely() {
  if (std::thread::hardware_concurrency() < 2) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus < 2) return false;
  double load = 0;
  if (getloadavg(&load, 1) != 1) return true;  // unknown: assume idle
  return load < static_cast<double>(cpus);
}

}  // namespace

namespace internal {

// Open-addressing map from a 96-bit hash (64-bit key + 32-bit check) to a 32-bit value (a node or a
// frame id): 16-byte slots, linear probing, load <= 0.7. Keys are hashes already, so no further
// hashing is done.
class HashIndex {
 public:
  static constexpr uint32_t kAbsent = 0xffffffffu;

  HashIndex() : slots_(AllocateSlots(kInitial)), mask_(kInitial - 1) {}

  // Starts loading the slot where a Find or Insert of `key` begins.
  void Prefetch(uint64_t key) const { __builtin_prefetch(&slots_[Fix(key) & mask_]); }

  // Returns the value stored for (key, check), or kAbsent.
  uint32_t Find(uint64_t key, uint32_t check) const {
    key = Fix(key);
    for (size_t i = key & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key && s.check == check) return s.value;
      if (s.key == 0) return kAbsent;
    }
  }

  // Adds (key, check) -> value; the pair must not be present yet.
  void Insert(uint64_t key, uint32_t check, uint32_t value) {
    if (10 * (size_ + 1) > 7 * (mask_ + 1)) Grow();
    Place(Slot{Fix(key), check, value});
    ++size_;
  }

 private:
  struct Slot {
    uint64_t key;  // 0 = empty
    uint32_t check;
    uint32_t value;
  };
  // Frees what AllocateSlots returned: `bytes` of them (a power of two), mapped if kHugePage or
  // more.
  struct FreeSlots {
    size_t bytes = 0;
    void operator()(Slot* slots) const {
      if (bytes >= kHugePage) {
        munmap(slots, bytes);
      } else {
        std::free(slots);
      }
    }
  };
  using Slots = std::unique_ptr<Slot[], FreeSlots>;
  // Small, so that reading a small input stays cheap (a fresh table is zeroed, and pages of a new
  // mapping fault in); tables double as they fill.
  static constexpr size_t kInitial = 1 << 10;
  static constexpr size_t kHugePage = 2 << 20;

  // Returns `n` zeroed slots. Large arrays are fresh anonymous mappings aligned to, and advised
  // onto, transparent huge pages: the table is probed at random, and with 4 KiB pages nearly every
  // probe would also miss the TLB. The kernel hands those pages out zeroed, so they are not cleared
  // a second time (a memset would touch every page of a table that is mostly written later).
  static Slots AllocateSlots(size_t n) {
    const size_t bytes = n * sizeof(Slot);  // a power of two
    if (bytes < kHugePage) {
      void* memory = std::calloc(n, sizeof(Slot));
      if (memory == nullptr) std::abort();  // out of memory, as operator new
      return Slots(static_cast<Slot*>(memory), FreeSlots{bytes});
    }
    // Map one huge page more than needed and unmap the unaligned head and tail.
    void* mapped = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) std::abort();  // out of memory, as operator new
    const auto base = reinterpret_cast<uintptr_t>(mapped);
    const uintptr_t aligned = (base + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
    if (aligned != base) munmap(mapped, aligned - base);
    const uintptr_t tail = base + bytes + kHugePage - (aligned + bytes);
    if (tail != 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
    // Advisory: if it fails, the table only gets slower.
    madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
    return Slots(reinterpret_cast<Slot*>(aligned), FreeSlots{bytes});
  }
  static uint64_t Fix(uint64_t key) { return key == 0 ? 1 : key; }

  void Place(const Slot& slot) {
    size_t i = slot.key & mask_;
    while (slots_[i].key != 0) i = (i + 1) & mask_;
    slots_[i] = slot;
  }
  void Grow() {
    const size_t old_size = mask_ + 1;
    Slots old = AllocateSlots(2 * old_size);
    old.swap(slots_);
    mask_ = 2 * old_size - 1;
    for (size_t i = 0; i < old_size; ++i) {
      if (old[i].key != 0) Place(old[i]);
    }
  }

  Slots slots_;
  size_t mask_;
  size_t size_ = 0;
};

}  // namespace internal

FoldedReader::Target::Target() = default;
FoldedReader::Target::~Target() = default;
FoldedReader::~FoldedReader() = default;

std::string FoldedReadStats::Summary() const {
  if (malformed_lines == 0) return "";
  std::string s = absl::StrCat("ignored ", malformed_lines, " malformed line",
                               malformed_lines == 1 ? "" : "s", "\n");
  for (const Error& e : errors)
    absl::StrAppend(&s, "  ", e.source, ":", e.line, ": ", e.message, "\n");
  if (malformed_lines > errors.size()) {
    absl::StrAppend(&s, "  ... and ", malformed_lines - errors.size(), " more\n");
  }
  return s;
}

FoldedReader::FoldedReader(Profile* after, Profile* before, FoldedReadOptions options)
    : options_(options) {
  after_.profile = after;
  before_.profile = before;
  before_.slot = 1;
  // The fast paths assume this reader alone adds to each profile; one profile given as both
  // targets gets neither.
  const bool distinct = after != before;
  for (Target* t : {&after_, &before_}) {
    if (t->profile == nullptr) continue;
    t->frames = std::make_unique<internal::HashIndex>();
    t->new_frames = distinct && t->profile->num_frames() == 0;
    if (distinct && t->profile->child_matching() == Profile::ChildMatching::kByName &&
        t->profile->num_nodes() == 1) {
      t->prefixes = std::make_unique<internal::HashIndex>();
      t->next_node = static_cast<Profile::NodeId>(t->profile->num_nodes());
      chain_prefixes_ = true;
    }
  }
  if (options_.chunk_size == 0) options_.chunk_size = 1;
  if (!(options_.scale > 0)) options_.scale = 1.0;
}

void FoldedReader::Malformed(absl::string_view message) {
  ++stats_.malformed_lines;
  if (stats_.errors.size() < options_.max_reported_errors) {
    stats_.errors.push_back({source_, line_number_, std::string(message)});
  }
}

uint32_t FoldedReader::ScanFrames(const char* begin, const char* end, const char* readable_end,
                                  Batch* batch) {
  // One pass, 16 bytes at a time: SSE2 finds the `;` separators, and each block is folded into both
  // hash lanes. Frames hash independently of each other, so the CPU overlaps consecutive frames'
  // multiplies.
  const __m128i semicolons = _mm_set1_epi8(';');
  const size_t first = batch->num_frames;
  size_t k = first;
  const char* p = begin;
  while (true) {
    const char* frame_begin = p;
    uint64_t h1 = kA0, h2 = kB0;
    while (true) {
      const auto avail = static_cast<size_t>(end - p);
      __m128i v;
      if (readable_end - p >= 16) [[likely]] {
        v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      } else {  // near the end of the buffer: never read past it
        char block[16] = {};
        std::memcpy(block, p, std::min<size_t>(avail, 16));
        v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
      }
      unsigned stop = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, semicolons)));
      if (avail < 16) stop |= 1u << avail;  // the stack ends inside the block
      if (stop == 0) {
        const uint64_t lo = Low64(v), hi = High64(v);
        h1 = Fold(lo ^ kA1 ^ h1, hi ^ kA2);
        h2 = Fold(lo ^ kB1 ^ h2, hi ^ kB2);
        p += 16;
        continue;
      }
      const auto r = static_cast<unsigned>(__builtin_ctz(stop));  // 0..16
      // Keep the frame's r bytes: a mask from a table rather than branches on r.
      v = _mm_and_si128(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kKeep + 16 - r)));
      const uint64_t lo = Low64(v), hi = High64(v);
      p += r;
      const auto n = static_cast<uint64_t>(p - frame_begin);
      h1 = Fold(lo ^ kA1 ^ h1, hi ^ kA2 ^ (n * kA3));
      h2 = Fold(lo ^ kB1 ^ h2, hi ^ kB2 ^ (n * kB3));
      break;
    }
    if (p != frame_begin) [[likely]] {  // empty frames (`;;`) are skipped
      if (k == batch->frames.size()) batch->frames.resize(2 * k + 1024);
      batch->frames[k++] = Frame{h1, 0,           static_cast<uint32_t>(h2),
                                 0,  frame_begin, static_cast<size_t>(p - frame_begin)};
    }
    if (p == end) break;
    ++p;  // the `;`
  }
  batch->num_frames = k;
  if (chain_prefixes_) {
    uint64_t p1 = kPrefixSeed1, p2 = kPrefixSeed2;
    for (size_t i = first; i < k; ++i) {
      Frame& f = batch->frames[i];
      p1 = ChainPrefix(p1, f.hash, kP1);
      p2 = ChainPrefix(p2, f.hash_check, kP2);
      f.prefix = p1;
      f.prefix_check = static_cast<uint32_t>(p2);
    }
  }
  return static_cast<uint32_t>(k - first);
}

void FoldedReader::ParseLine(const char* begin, const char* end, const char* readable_end,
                             Batch* batch) {
  while (end > begin && IsSpace(end[-1])) --end;
  if (end == begin) return;  // blank line
  ++stats_.lines;
  const char* count_begin;
  if (!FindCount(begin, end, &count_begin)) {
    Malformed("no trailing count");
    return;
  }
  uint64_t after_count = 0;
  bool fractional = false;
  if (!ParseCount(count_begin, end, options_.scale, &after_count, &fractional)) {
    Malformed("count out of range");
    return;
  }
  const char* stack_end = count_begin;
  while (stack_end > begin && IsSpace(stack_end[-1])) --stack_end;
  const char* before_begin;
  bool two_column = false;
  uint64_t before_count = 0;
  if (FindCount(begin, stack_end, &before_begin)) {
    bool before_fractional = false;
    if (ParseCount(before_begin, stack_end, options_.scale, &before_count, &before_fractional)) {
      two_column = true;
      fractional |= before_fractional;
      stack_end = before_begin;
      while (stack_end > begin && IsSpace(stack_end[-1])) --stack_end;
    }
  }
  if (fractional) ++stats_.fractional_lines;
  if (two_column) ++stats_.two_column_lines;
  const auto first = static_cast<uint32_t>(batch->num_frames);
  const uint32_t depth = begin == stack_end ? 0 : ScanFrames(begin, stack_end, readable_end, batch);
  batch->lines.push_back(
      Line{begin, stack_end, first, depth, after_count, before_count, line_number_, two_column});
}

size_t FoldedReader::ParseChunk(const char* data, size_t size, bool last, size_t max_bytes,
                                Batch* batch) {
  batch->lines.clear();
  batch->num_frames = 0;
  const char* readable_end = data + size;
  size_t pos = 0;
  while (pos < size && pos < max_bytes) {
    const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', size - pos));
    if (nl == nullptr) {
      if (!last) break;
      ++line_number_;
      ParseLine(data + pos, data + size, readable_end, batch);
      pos = size;
      break;
    }
    ++line_number_;
    ParseLine(data + pos, nl, readable_end, batch);
    pos = static_cast<size_t>(nl - data) + 1;
  }
  return pos;
}

Profile::FrameId FoldedReader::FrameOf(Target& target, const Frame& f) {
  uint32_t id = target.frames->Find(f.hash, f.hash_check);
  if (id == internal::HashIndex::kAbsent) {  // once per distinct name
    const absl::string_view name(f.name, f.name_size);
    id = target.new_frames ? target.profile->AddNewFrame(name) : target.profile->InternFrame(name);
    target.frames->Insert(f.hash, f.hash_check, id);
  }
  return id;
}

void FoldedReader::AddCount(Target& target, const Line& line, Profile::NodeId node,
                            uint64_t count) {
  if (target.profile->AddSelfChecked(node, count)) [[likely]]
    return;
  if (overflow_.ok()) {
    overflow_ = absl::InvalidArgumentError(
        absl::StrCat(source_, ":", line.number, ": the count ", count,
                     " would take the profile total ", target.profile->total(),
                     " past 2^64 - 1 (counts must sum to at most 18446744073709551615)"));
  }
}

void FoldedReader::ResolveStack(Target& target, Line& line, const Frame* frames) {
  internal::HashIndex& table = *target.prefixes;
  const size_t depth = line.depth;
  // Deepest existing prefix: `lo` frames long, ending at `node` (the root always exists).
  size_t lo = depth;
  Profile::NodeId node = Profile::kRoot;
  for (; lo > 0; --lo) {
    const Frame& f = frames[lo - 1];
    const uint32_t found = table.Find(f.prefix, f.prefix_check);
    if (found != internal::HashIndex::kAbsent) {
      node = found;
      break;
    }
  }
  line.known[target.slot] = static_cast<uint32_t>(lo);
  line.known_node[target.slot] = node;
  for (size_t k = lo; k < depth; ++k) {
    table.Insert(frames[k].prefix, frames[k].prefix_check, target.next_node++);
  }
}

void FoldedReader::ResolveBatch(Batch* batch) {
  if (!chain_prefixes_) return;
  // The prefix-table probes of a line are cache misses at random places; start those of the line
  // two ahead (its deepest prefixes, where the search begins) while this one is resolved.
  constexpr size_t kAhead = 4, kPrefetchDepth = 3;
  const internal::HashIndex* prefixes = after_.prefixes.get();
  const bool before = before_.prefixes != nullptr;
  const size_t num_lines = batch->lines.size();
  for (size_t i = 0; i < num_lines; ++i) {
    Line& line = batch->lines[i];
    if (prefixes != nullptr && i + kAhead < num_lines) {
      const Line& ahead = batch->lines[i + kAhead];
      const Frame* f = batch->frames.data() + ahead.first_frame;
      for (size_t k = ahead.depth; k > 0 && ahead.depth - k < kPrefetchDepth; --k) {
        prefixes->Prefetch(f[k - 1].prefix);
      }
    }
    if (line.depth == 0) continue;
    const Frame* frames = batch->frames.data() + line.first_frame;
    // The same targets, in the same order, as AddBatch.
    if (before && line.two_column) ResolveStack(before_, line, frames);
    if (prefixes != nullptr) ResolveStack(after_, line, frames);
  }
}

void FoldedReader::AddStackFast(Target& target, const Line& line, const Frame* frames) {
  // ResolveBatch found the deepest existing prefix; the rest is new.
  Profile& profile = *target.profile;
  Profile::NodeId node = line.known_node[target.slot];
  for (size_t k = line.known[target.slot]; k < line.depth; ++k) {
    node = profile.AddNewChild(node, FrameOf(target, frames[k]));
  }
  AddCount(target, line, node, line.after_count);
}

void FoldedReader::AddStackAdjacent(Target& target, const Line& line, const Frame* frames) {
  // The most recent path (each node the last child of its parent) is the previous line's, so the
  // frames this line shares with it map to the same nodes; Child() takes over from the first frame
  // that differs.
  Profile& profile = *target.profile;
  const size_t depth = line.depth;
  const size_t shared_limit = std::min(depth, target.path_nodes.size());
  size_t shared = 0;
  while (shared < shared_limit && frames[shared].hash == target.path_frames[shared].hash &&
         frames[shared].hash_check == target.path_frames[shared].hash_check) {
    ++shared;
  }
  Profile::NodeId node = shared == 0 ? Profile::kRoot : target.path_nodes[shared - 1];
  target.path_nodes.resize(depth);
  target.path_frames.resize(depth);
  for (size_t k = shared; k < depth; ++k) {
    node = profile.Child(node, FrameOf(target, frames[k]));
    target.path_nodes[k] = node;
    target.path_frames[k] = frames[k];
  }
  AddCount(target, line, node, line.after_count);
}

void FoldedReader::AddStack(Target& target, const Line& line, const Frame* frames) {
  Profile& profile = *target.profile;
  if (line.depth == 0) {
    AddCount(target, line, Profile::kRoot, line.after_count);
    return;
  }
  if (target.prefixes != nullptr) {
    AddStackFast(target, line, frames);
    return;
  }
  if (profile.child_matching() == Profile::ChildMatching::kAdjacent) {
    AddStackAdjacent(target, line, frames);
    return;
  }
  Profile::NodeId node = Profile::kRoot;
  for (size_t k = 0; k < line.depth; ++k) node = profile.Child(node, FrameOf(target, frames[k]));
  AddCount(target, line, node, line.after_count);
}

void FoldedReader::AddBatch(Batch* batch) {
  ResolveBatch(batch);
  const size_t num_lines = batch->lines.size();
  for (size_t i = 0; i < num_lines; ++i) {
    const Line& line = batch->lines[i];
    const Frame* frames = batch->frames.data() + line.first_frame;
    if (line.two_column && before_.profile != nullptr) {
      Line before = line;
      before.after_count = line.before_count;
      AddStack(before_, before, frames);
    }
    AddStack(after_, line, frames);
  }
}

void FoldedReader::MaybePrune() {
  Profile* after = after_.profile;
  if (options_.prune_fraction <= 0 ||
      after->child_matching() != Profile::ChildMatching::kAdjacent ||
      after->num_nodes() < next_prune_nodes_) {
    return;
  }
  const auto min =
      static_cast<uint64_t>(options_.prune_fraction * static_cast<double>(after->total()));
  *after = after->Pruned(min);
  // Node ids changed (frame ids did not: Pruned keeps the name order).
  after_.path_frames.clear();
  after_.path_nodes.clear();
  next_prune_nodes_ = std::max<uint64_t>(next_prune_nodes_, 2 * after->num_nodes());
  // The pruned copy is sized to fit; make room for growing to the next pruning point at once rather
  // than by repeated doubling (copies, and page faults on every new array). Unused capacity is
  // never touched, so it costs address space, not RSS.
  after->Reserve(static_cast<size_t>(next_prune_nodes_));
}

absl::Status FoldedReader::ReadString(absl::string_view text, absl::string_view source) {
  source_ = std::string(source);
  line_number_ = 0;
  stats_.bytes += text.size();
  // Small batches keep the parsed form in cache; pruning happens once at the end, as for one chunk.
  Batch batch;
  size_t pos = 0;
  while (pos < text.size()) {
    pos += ParseChunk(text.data() + pos, text.size() - pos, /*last=*/true, kBatchBytes, &batch);
    AddBatch(&batch);
  }
  MaybePrune();
  return TakeOverflow();
}

absl::Status FoldedReader::TakeOverflow() {
  absl::Status status = std::move(overflow_);
  overflow_ = absl::OkStatus();
  return status;
}

absl::Status FoldedReader::ReadChunks(ReadFn read) {
  // Lines are parsed and added in small batches; pruning still happens once per chunk, so flame
  // charts prune at the same points for any batch size.
  std::string buffer(options_.chunk_size, '\0');
  size_t filled = 0;
  Batch batch;
  while (true) {
    if (filled == buffer.size()) buffer.resize(buffer.size() * 2);  // one very long line
    size_t got = 0;
    bool eof = false;
    absl::Status status = read(buffer.data() + filled, buffer.size() - filled, &got, &eof);
    if (!status.ok()) {
      overflow_ = absl::OkStatus();  // the read error is reported instead
      return status;
    }
    stats_.bytes += got;
    filled += got;
    size_t used = 0;
    while (used < filled) {
      const size_t n = ParseChunk(buffer.data() + used, filled - used, eof, kBatchBytes, &batch);
      AddBatch(&batch);
      if (n == 0) break;
      used += n;
    }
    MaybePrune();
    std::memmove(buffer.data(), buffer.data() + used, filled - used);
    filled -= used;
    if (eof) break;
  }
  return TakeOverflow();
}

absl::Status FoldedReader::ReadStream(std::istream& in, absl::string_view source) {
  source_ = std::string(source);
  line_number_ = 0;
  return ReadChunks([&](char* data, size_t size, size_t* got, bool* eof) {
    in.read(data, static_cast<std::streamsize>(size));
    *got = static_cast<size_t>(in.gcount());
    *eof = in.eof();
    if (!*eof && in.fail()) return absl::DataLossError(absl::StrCat(source, ": read error"));
    return absl::OkStatus();
  });
}

bool FoldedReader::ReadMapped(int fd, uint64_t size, uint64_t* pos) {
  // Mirrors ReadChunks: each chunk ends chunk_size bytes after the first line not yet added, and
  // grows (for good) only when one line does not fit.
  size_t window = options_.chunk_size;
  MappedWindow mapped;
  Batch batch;
  while (*pos < size) {
    const uint64_t end = std::min<uint64_t>(size, *pos + window);
    const bool eof = end == size;
    if (!mapped.Map(fd, *pos, static_cast<size_t>(end - *pos))) return false;
    size_t used = 0;
    while (used < mapped.size()) {
      const size_t n =
          ParseChunk(mapped.data() + used, mapped.size() - used, eof, kBatchBytes, &batch);
      AddBatch(&batch);
      if (n == 0) break;
      used += n;
    }
    mapped.Unmap();
    MaybePrune();
    if (used == 0 && !eof) window *= 2;  // one very long line
    stats_.bytes += used;
    *pos += used;
  }
  return true;
}

bool FoldedReader::ReadMappedThreaded(int fd, uint64_t size, uint64_t* pos) {
  // A helper thread maps chunks and parses them into batches (touching only the parsing state:
  // stats_, line_number_, source_); this thread adds them to the profiles (the targets and pruning
  // state), in order. Batches go through a ring of kSlots; after a chunk's last batch comes an
  // entry that hands over its mapping, so this thread prunes at the same points as ReadMapped and
  // unmaps the chunk once its lines are added.
  constexpr size_t kSlots = 32;
  struct Slot {
    Batch batch;
    std::unique_ptr<MappedWindow> chunk_done;  // non-null: end of a chunk
  };
  struct Ring {
    absl::Mutex mu;
    uint64_t produced ABSL_GUARDED_BY(mu) = 0;
    uint64_t consumed ABSL_GUARDED_BY(mu) = 0;
    bool finished ABSL_GUARDED_BY(mu) = false;
    bool map_failed ABSL_GUARDED_BY(mu) = false;
  };
  Slot slots[kSlots];
  Ring ring;
  uint64_t parse_pos = *pos;  // the helper's; read here after join()

  std::thread parser([&] {
    size_t window = options_.chunk_size;
    uint64_t next = 0;  // slots produced so far (this thread's copy)
    // Waits for a free slot and returns it.
    auto acquire = [&]() -> Slot& {
      absl::MutexLock lock(&ring.mu);
      ring.mu.Await(absl::Condition(
          +[](Ring* r)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu) { return r->produced - r->consumed < kSlots; },
          &ring));
      return slots[next % kSlots];
    };
    auto publish = [&] {
      absl::MutexLock lock(&ring.mu);
      ring.produced = ++next;
    };
    bool map_failed = false;
    while (parse_pos < size) {
      const uint64_t end = std::min<uint64_t>(size, parse_pos + window);
      const bool eof = end == size;
      auto mapped = std::make_unique<MappedWindow>();
      if (!mapped->Map(fd, parse_pos, static_cast<size_t>(end - parse_pos))) {
        map_failed = true;
        break;
      }
      size_t used = 0;
      while (used < mapped->size()) {
        Slot& slot = acquire();
        const size_t n =
            ParseChunk(mapped->data() + used, mapped->size() - used, eof, kBatchBytes, &slot.batch);
        if (n == 0) break;  // no whole line left (nothing parsed)
        publish();
        used += n;
      }
      Slot& slot = acquire();
      slot.batch.lines.clear();
      slot.batch.num_frames = 0;
      slot.chunk_done = std::move(mapped);
      publish();
      if (used == 0 && !eof) window *= 2;  // one very long line
      parse_pos += used;
    }
    absl::MutexLock lock(&ring.mu);
    ring.finished = true;
    ring.map_failed = map_failed;
  });

  bool map_failed = false;
  for (uint64_t next = 0;; ++next) {
    {
      absl::MutexLock lock(&ring.mu);
      ring.mu.Await(absl::Condition(
          +[](Ring* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu) {
            return r->consumed < r->produced || r->finished;
          },
          &ring));
      if (ring.consumed == ring.produced) {  // finished, all added
        map_failed = ring.map_failed;
        break;
      }
    }
    Slot& slot = slots[next % kSlots];
    AddBatch(&slot.batch);
    if (slot.chunk_done != nullptr) {
      slot.chunk_done.reset();
      MaybePrune();
    }
    absl::MutexLock lock(&ring.mu);
    ++ring.consumed;
  }
  parser.join();
  stats_.bytes += parse_pos - *pos;
  *pos = parse_pos;
  return !map_failed;
}

absl::Status FoldedReader::ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string message = absl::StrCat(path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES) return absl::PermissionDeniedError(message);
    return absl::InvalidArgumentError(message);
  }
  const std::unique_ptr<const int, void (*)(const int*)> closer(&fd,
                                                                [](const int* f) { close(*f); });
  source_ = path;
  line_number_ = 0;
  uint64_t pos = 0;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<uint64_t>(st.st_size);
    int threads = options_.threads;
    if (threads <= 0) {
      threads = size >= 4 * static_cast<uint64_t>(options_.chunk_size) && SpareCoreLikely() ? 2 : 1;
    }
    const bool mapped =
        threads >= 2 ? ReadMappedThreaded(fd, size, &pos) : ReadMapped(fd, size, &pos);
    if (mapped) return TakeOverflow();
    // Mapping failed: read the rest, from the first line not yet added.
    if (lseek(fd, static_cast<off_t>(pos), SEEK_SET) < 0)
      return absl::DataLossError(absl::StrCat(path, ": seek failed"));
  }
  // Fills the whole buffer (as fread does), so chunks end at the same places for pipes as for
  // files.
  return ReadChunks([&](char* data, size_t size, size_t* got, bool* eof) {
    *got = 0;
    *eof = false;
    while (*got < size) {
      const ssize_t n = read(fd, data + *got, size - *got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return absl::DataLossError(absl::StrCat(path, ": read error"));
      if (n == 0) {
        *eof = true;
        break;
      }
      *got += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  });
}

std::string SanitizeFrameName(absl::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

absl::Status WriteFolded(const Profile& profile, std::ostream& out) {
  using NodeId = Profile::NodeId;
  const size_t n = profile.num_nodes();
  const bool by_name = profile.child_matching() == Profile::ChildMatching::kByName;
  // Children in CSR form (ids ascending = creation order), then sorted by name if merged.
  std::vector<uint32_t> first(n + 1, 0);
  for (size_t i = 1; i < n; ++i) ++first[profile.parent(static_cast<NodeId>(i)) + 1];
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<NodeId> kids(n > 0 ? n - 1 : 0);
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (size_t i = 1; i < n; ++i)
      kids[fill[profile.parent(static_cast<NodeId>(i))]++] = static_cast<NodeId>(i);
  }
  std::vector<std::string> clean(profile.num_frames());
  for (size_t f = 0; f < clean.size(); ++f) {
    clean[f] = SanitizeFrameName(profile.frame_name(static_cast<Profile::FrameId>(f)));
  }
  if (by_name) {
    std::vector<uint32_t> order(clean.size());
    for (size_t f = 0; f < order.size(); ++f) order[f] = static_cast<uint32_t>(f);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return clean[a] < clean[b] || (clean[a] == clean[b] && a < b);
    });
    std::vector<uint32_t> rank(clean.size());
    for (size_t r = 0; r < order.size(); ++r) rank[order[r]] = static_cast<uint32_t>(r);
    for (size_t i = 0; i < n; ++i) {
      std::sort(kids.begin() + first[i], kids.begin() + first[i + 1], [&](NodeId a, NodeId b) {
        return rank[profile.frame(a)] < rank[profile.frame(b)];
      });
    }
  }

  std::string buf;
  buf.reserve(1 << 16);
  std::string path;
  auto emit = [&](absl::string_view leaf, uint64_t count) {
    buf.append(path);
    if (!leaf.empty()) {
      if (!path.empty()) buf.push_back(';');
      buf.append(leaf.data(), leaf.size());
    }
    buf.push_back(' ');
    absl::StrAppend(&buf, count);
    buf.push_back('\n');
    if (buf.size() > (1 << 16) - 4096) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  };
  constexpr absl::string_view kHidden = "[hidden]";
  if (profile.self(Profile::kRoot) != 0) emit("[unknown]", profile.self(Profile::kRoot));

  // Iterative DFS. Each entry: node, next child index, path length before this node, and
  // whether its "[hidden]" line is still to come.
  struct Entry {
    NodeId node;
    uint32_t next;
    size_t path_len;
    bool hidden_pending;
  };
  std::vector<Entry> stack;
  stack.push_back({Profile::kRoot, first[0], 0, profile.hidden(Profile::kRoot).cycles != 0});
  while (!stack.empty()) {
    Entry& e = stack.back();
    const bool has_child = e.next < first[e.node + 1];
    if (e.hidden_pending &&
        (!has_child || !by_name || clean[profile.frame(kids[e.next])] > kHidden)) {
      e.hidden_pending = false;
      emit(kHidden, profile.hidden(e.node).cycles);
      continue;
    }
    if (!has_child) {
      path.resize(e.path_len);
      stack.pop_back();
      continue;
    }
    const NodeId child = kids[e.next++];
    const size_t len = path.size();
    if (!path.empty()) path.push_back(';');
    path.append(clean[profile.frame(child)]);
    if (profile.self(child) != 0) emit("", profile.self(child));
    stack.push_back({child, first[child], len, profile.hidden(child).cycles != 0});
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  out.flush();
  if (!out) return absl::DataLossError("writing folded output failed");
  return absl::OkStatus();
}

}  // namespace flamefleet::profile
