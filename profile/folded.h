// Folded stacks ("a;b;c 123"): the import/export text format of profiles.
//
// One line per call path: frames root first, separated by `;`, then whitespace, then a count.
// Writing is deterministic: one line per node with self cycles, sorted frame by frame
// (byte-wise by name at each depth, a path before its extensions); inside names `;` becomes
// `:` and CR/LF become spaces; cycles on the root (an empty stack) print as `[unknown]`.
//
// Reading is tolerant in the way flamegraph.pl is: blank lines, CRLF, several inputs added into one
// profile, decimal counts, and two-column differential input (`stack before after`). Lines that do
// not parse are counted and the first few reported with their line numbers; they are not an error.
// Empty frames are skipped: `a;;b 5` is `a;b 5`, and a stack of nothing but `;` (`; 5`, `;;;; 5`)
// counts on the root like an empty stack, so every frame name a reader creates is non-empty
// (flamegraph.pl drops the same all-empty stacks but draws a middle empty frame as a blank box; a
// blank box says nothing, and skipping keeps read -> write -> read stable). Counts that would take
// a profile's total past 2^64 - 1 are an error (InvalidArgument naming source:line; that line is
// skipped, later lines are still added), so totals never wrap. Reading streams in large chunks:
// memory grows with distinct frames and tree nodes, never with input bytes. Regular files are
// memory-mapped one chunk at a time (no copy; each chunk is unmapped once its lines are added, so
// at most two chunks of file pages are mapped at once), and on a machine with two or more cores a
// large file is parsed on a second thread while the first adds the previous lines to the profiles.
// Pipes and streams are read with read().
//
// Decimal counts: a count `c` is multiplied by `FoldedReadOptions::scale` (default 1) and
// rounded to the nearest integer, halves away from zero (1.5 -> 2, 0.4 -> 0). Lines whose
// count was not an integer are counted in `FoldedReadStats::fractional_lines`. To keep
// precision, read with scale 1000 and render with factor 0.001.
//
//   Profile p;
//   FoldedReader reader(&p);
//   FLAMEFLEET_RETURN_IF_ERROR(reader.ReadFile("perf.folded"));
//   if (reader.stats().malformed_lines > 0) std::cerr << reader.stats().Summary();
//   FLAMEFLEET_RETURN_IF_ERROR(WriteFolded(p, std::cout));
#ifndef FLAMEFLEET_PROFILE_FOLDED_H_
#define FLAMEFLEET_PROFILE_FOLDED_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "profile/profile.h"

namespace flamefleet::profile {
namespace internal {
class HashIndex;
}  // namespace internal

// Options for FoldedReader. Defaults read folded stacks as flamegraph.pl does.
struct FoldedReadOptions {
  // Multiplier applied to every count before rounding (see the file comment). Must be > 0.
  double scale = 1.0;
  // Bytes read per chunk. Lines longer than this still work (the buffer grows to one line).
  size_t chunk_size = 4 << 20;
  // How many malformed lines are reported individually in FoldedReadStats::errors.
  size_t max_reported_errors = 5;
  // If > 0 and the target profile uses ChildMatching::kAdjacent (flame charts), subtrees that
  // can no longer grow and whose inclusive cycles are below `prune_fraction` × the running
  // total are pruned during reading (kept as hidden counts, so totals stay exact). Use the
  // fraction the renderer will prune at anyway (renderer MinVisibleFraction) to bound memory
  // without changing the picture. Ignored for kByName profiles.
  double prune_fraction = 0.0;
  // Threads ReadFile may use for a memory-mapped file: 1 parses and adds on the calling thread;
  // 2 parses on a helper thread while the caller adds; 0 picks 2 when the file spans several
  // chunks, the process may run on two or more CPUs and the 1-minute load average is below that
  // number (on a busy machine the hand-offs cost more than they save), else 1. The profiles and
  // stats are identical either way.
  int threads = 0;
};

// What a FoldedReader saw, accumulated over every input it read.
struct FoldedReadStats {
  struct Error {
    std::string source;   // file name or the label passed to Read*
    uint64_t line = 0;    // 1-based line number within that source
    std::string message;  // what was wrong
  };
  uint64_t lines = 0;             // non-blank lines seen
  uint64_t malformed_lines = 0;   // lines ignored because they did not parse
  uint64_t two_column_lines = 0;  // lines with a before and an after count
  uint64_t fractional_lines = 0;  // lines whose (scaled) count was rounded
  uint64_t bytes = 0;             // input bytes read
  std::vector<Error> errors;      // the first max_reported_errors malformed lines

  // Returns a human-readable multi-line report of malformed lines ("" if none).
  std::string Summary() const;
};

// Streams folded text into profiles. Not thread-safe; one reader per thread.
class FoldedReader {
 public:
  // Reads into `after` (required, not owned, must outlive the reader). Two-column lines add their
  // first count to `before` if it is non-null and their second to `after`; with a null `before` the
  // first column is ignored. One-column lines add to `after` only. While the reader is alive, only
  // the reader may add nodes to the profiles. Every frame is hashed once (two independent 64-bit
  // hashes); names are interned through a cache keyed by that hash, so InternFrame runs once per
  // distinct name. Reading into an empty kByName profile uses a fast path: a hash of every stack
  // prefix, chained from the frame hashes, finds the deepest existing node in a few probes from the
  // leaf end. kAdjacent profiles reuse the previous line's path for the frames it shares. Hash
  // tables match 96 bits (64-bit key and a 32-bit check), so a false match needs a 96-bit
  // collision; they are freed with the reader.
  explicit FoldedReader(Profile* after, Profile* before = nullptr, FoldedReadOptions options = {});
  ~FoldedReader();
  FoldedReader(const FoldedReader&) = delete;
  FoldedReader& operator=(const FoldedReader&) = delete;

  // Reads every line of the file at `path`. Returns NotFound/PermissionDenied-style errors (as the
  // OS reports) if it cannot be opened, DataLoss on a read error and InvalidArgument
  // ("path:line: ...") if the counts overflow 64 bits; malformed lines are not errors. Regular
  // files are mapped chunk by chunk (falling back to read() if mmap fails) and may be parsed on a
  // helper thread (FoldedReadOptions::threads); either way the profiles and stats are the same as
  // reading a stream.
  absl::Status ReadFile(const std::string& path);
  // Reads every line of `in` until EOF; `source` names it in error reports. Returns DataLoss if the
  // stream fails other than at EOF, InvalidArgument if the counts overflow 64 bits.
  absl::Status ReadStream(std::istream& in, absl::string_view source);
  // Reads folded text held in memory; `source` names it in error reports. Returns InvalidArgument
  // ("source:line: ...") if the counts overflow 64 bits, else OK.
  absl::Status ReadString(absl::string_view text, absl::string_view source = "<string>");

  // Returns the counters accumulated over every Read* call so far.
  const FoldedReadStats& stats() const { return stats_; }

 private:
  // One frame of a line: its hash (64-bit key and 32-bit check), when a target has a prefix
  // index the hash of the stack prefix ending with it, and where its name is in the line's text
  // (read only when a frame is new; kept so that finding it costs no second scan of the line).
  struct Frame {
    uint64_t hash;
    uint64_t prefix;
    uint32_t hash_check;
    uint32_t prefix_check;
    const char* name;
    size_t name_size;
  };
  // One parsed line: its stack [begin, end) has the frames [first_frame, first_frame + depth) of
  // the batch (depth 0: empty stack).
  struct Line {
    const char* begin;
    const char* end;
    uint32_t first_frame;
    uint32_t depth;
    uint64_t after_count;
    uint64_t before_count;
    uint64_t number;  // 1-based line number in source_
    bool two_column;
    // For each target with a prefix index (Target::slot): the stack's deepest prefix that exists
    // once the lines before it are added (`known` frames long, 0: the root), ending at node
    // `known_node`; set by ResolveBatch.
    uint32_t known[2] = {0, 0};
    Profile::NodeId known_node[2] = {Profile::kRoot, Profile::kRoot};
  };
  // Lines parsed from part of a chunk, ready to be added to the profiles. Points into the chunk's
  // bytes, which must outlive it.
  struct Batch {
    std::vector<Line> lines;
    std::vector<Frame> frames;  // [0, num_frames) in use
    size_t num_frames = 0;
  };
  // One profile being filled, with its hash indexes.
  struct Target {
    Target();
    ~Target();
    Profile* profile = nullptr;
    int slot = 0;  // 0: after_, 1: before_ (index into Line::known)
    // Frame hash -> FrameId of `profile` (a cache in front of InternFrame).
    std::unique_ptr<internal::HashIndex> frames;
    // `profile` had no frames when the reader was made: every name is new to it the first time
    // `frames` misses, so it is added with AddNewFrame (no second hashing of the name).
    bool new_frames = false;
    // kByName: stack-prefix hash -> node; null: no fast path. Used by ResolveBatch only, which
    // numbers the nodes to come from `next_node` (as AddNewChild will: ids are dense).
    std::unique_ptr<internal::HashIndex> prefixes;
    Profile::NodeId next_node = 0;
    // kAdjacent: the previous line's frames and nodes, root first. Cleared when pruning renumbers
    // the nodes.
    std::vector<Frame> path_frames;
    std::vector<Profile::NodeId> path_nodes;
  };

  using ReadFn = absl::FunctionRef<absl::Status(char* data, size_t size, size_t* got, bool* eof)>;
  // Reads chunks with `read` (fills up to `size` bytes at `data`, sets *got and *eof; returns
  // DataLoss on a read error) and adds their lines.
  absl::Status ReadChunks(ReadFn read);
  // Reads the regular file `fd` of `size` bytes from *pos through read-only mappings of one chunk
  // each, chunk boundaries and pruning points as in ReadChunks. Returns false if a mapping failed;
  // *pos is then the start of the first line not yet added (the caller reads the rest with read()).
  bool ReadMapped(int fd, uint64_t size, uint64_t* pos);
  // As ReadMapped, with parsing on a helper thread.
  bool ReadMappedThreaded(int fd, uint64_t size, uint64_t* pos);

  // Parsing: text -> Batch (touches only stats_, source_ and line_number_ of the reader's state).
  // Parses whole lines in [data, data+size) into `batch` (cleared first), stopping once
  // `max_bytes` are consumed; returns the bytes consumed (up to and including the last newline,
  // or everything if `last`).
  size_t ParseChunk(const char* data, size_t size, bool last, size_t max_bytes, Batch* batch);
  void ParseLine(const char* begin, const char* end, const char* readable_end, Batch* batch);
  // Appends the frames of the non-empty stack [begin, end) to `batch`, hashed; returns how many.
  // Reads ahead up to 16 bytes, never at or past `readable_end`.
  uint32_t ScanFrames(const char* begin, const char* end, const char* readable_end, Batch* batch);
  void Malformed(absl::string_view message);
  // For each target with a prefix index, finds every line's deepest existing prefix (Line::known)
  // and enters the prefixes its adding will create, numbered as they will be: the random-access
  // half of adding stacks to an empty kByName profile, done for a whole batch before its lines are
  // added so that the probes of lines ahead can be prefetched. (Done while parsing instead, on the
  // parsing thread, it made that thread the slower one on large inputs.)
  void ResolveBatch(Batch* batch);
  void ResolveStack(Target& target, Line& line, const Frame* frames);

  // Adding: Batch -> profiles (resolves it first).
  void AddBatch(Batch* batch);
  void AddStack(Target& target, const Line& line, const Frame* frames);
  void AddStackFast(Target& target, const Line& line, const Frame* frames);
  void AddStackAdjacent(Target& target, const Line& line, const Frame* frames);
  // Returns the FrameId in `target` of `frame`, interning its name on first sight.
  Profile::FrameId FrameOf(Target& target, const Frame& frame);
  // Adds `count` to `node` of `target` unless the total would overflow 64 bits; then the line is
  // skipped and the first such line is remembered in overflow_ (source:line).
  void AddCount(Target& target, const Line& line, Profile::NodeId node, uint64_t count);
  // Returns overflow_ and clears it (the result of one Read* call).
  absl::Status TakeOverflow();
  void MaybePrune();

  FoldedReadOptions options_;
  bool chain_prefixes_ = false;  // some target has a prefix index
  FoldedReadStats stats_;
  std::string source_;
  uint64_t line_number_ = 0;

  Target after_;
  Target before_;
  // The first count that would have overflowed a total in this Read* call.
  absl::Status overflow_;
  uint64_t next_prune_nodes_ = 1 << 20;
};

// Writes `profile` as folded text to `out` (format in the file comment). Hidden (pruned)
// cycles are written on their parent's path with a final frame "[hidden]". Returns DataLoss if
// the stream fails.
absl::Status WriteFolded(const Profile& profile, std::ostream& out);

// Returns `name` made safe for one folded frame: `;` -> `:`, CR and LF -> space.
std::string SanitizeFrameName(absl::string_view name);

}  // namespace flamefleet::profile

#endif  // FLAMEFLEET_PROFILE_FOLDED_H_
