// The call-tree profile: the one profile type flamefleet carries from the VM to the renderer.
//
// A Profile is a tree of nodes. Node 0 (`kRoot`) is a synthetic root with no frame; every other
// node has a parent and a frame (an interned procedure name such as `std::math::u64::add`) and
// carries `self` cycles: the cycles charged while exactly that call path was live. Inclusive
// cycles of a node are its self cycles plus those of its descendants (plus any pruned,
// "hidden" cycles, see `Pruned`). Node ids are dense, and a child's id is always greater than
// its parent's, so a forward scan visits parents first and a backward scan children first.
//
// Storage is struct-of-arrays (parent, frame, self: 16 bytes per node) plus one hash table
// keyed by (parent, frame) for find-or-create, so millions of nodes stay compact.
//
//   Profile p;
//   Profile::NodeId main = p.Child(Profile::kRoot, p.InternFrame("$exec::$main"));
//   Profile::NodeId add = p.Child(main, p.InternFrame("std::math::u64::wrapping_add"));
//   p.AddSelf(add, 12);            // 12 cycles with stack $exec::$main;std::...::wrapping_add
//   uint64_t all = p.total();      // 12
//
// Thread-safety: a Profile is a plain value. Const methods may be called concurrently;
// anything else needs external synchronisation.
#ifndef FLAMEFLEET_PROFILE_PROFILE_H_
#define FLAMEFLEET_PROFILE_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace flamefleet::profile {

class Profile {
 public:
  using NodeId = uint32_t;
  using FrameId = uint32_t;
  static constexpr NodeId kRoot = 0;
  static constexpr NodeId kNoNode = 0xffffffffu;

  // How `Child` matches an existing child.
  enum class ChildMatching : uint8_t {
    // A child with the same frame anywhere under the parent is reused (a merged call tree: a
    // flame graph).
    kByName,
    // Only the most recently created child of the parent is reused, and only if its frame
    // matches (flamegraph.pl's `--flamechart`: input order, merging adjacent identical
    // prefixes only). Children then keep creation order, which the renderer follows.
    kAdjacent,
  };

  // Cycles and node count pruned away below one node (see `Pruned`).
  struct Hidden {
    uint64_t nodes = 0;   // descendants removed, counting whole removed subtrees
    uint64_t cycles = 0;  // their inclusive cycles, still included in the parent's inclusive
  };

  // Creates an empty profile holding only the root.
  explicit Profile(ChildMatching matching = ChildMatching::kByName);
  // Copies are deep (names are re-interned into the copy's own arena).
  Profile(const Profile& other);
  Profile& operator=(const Profile& other);
  Profile(Profile&&) noexcept;
  Profile& operator=(Profile&&) noexcept;
  ~Profile();

  // Returns the id of `name`, interning it on first use. Amortised O(1). Names are stored verbatim
  // (no sanitising; folded output sanitises). Any name is accepted, the empty one included
  // (decoders decide whether it is valid).
  FrameId InternFrame(absl::string_view name);

  // Appends `name` as a new frame that the caller KNOWS is not interned yet (bulk loaders that
  // keep their own index, such as FoldedReader). Cheaper than InternFrame(): the name -> id index
  // is brought up to date lazily, by the next InternFrame() call. Adding a name twice this way is
  // a caller bug (asserted when the index catches up).
  FrameId AddNewFrame(absl::string_view name);

  // Returns the child of `parent` with `frame`, creating it if needed (see ChildMatching).
  // Amortised O(1); does not allocate when the child exists. `parent` must be a valid node and
  // `frame` a valid frame id (checked with assert).
  NodeId Child(NodeId parent, FrameId frame);

  // Appends a new child of `parent` with `frame` that the caller KNOWS does not exist yet
  // (bulk loaders that keep their own index, such as FoldedReader). Cheaper than Child(): the
  // (parent, frame) index is brought up to date lazily, by the next Child() call. Creating a
  // duplicate this way is a caller bug (asserted when the index catches up). In kAdjacent
  // mode it behaves like Child() without the reuse check.
  NodeId AddNewChild(NodeId parent, FrameId frame);

  // Adds `cycles` self cycles to `node` (and to total()). O(1). The caller guarantees that
  // total() + cycles fits in 64 bits (the VM profiler does: it charges at most the run's cycles);
  // numbers from outside go through AddSelfChecked.
  void AddSelf(NodeId node, uint64_t cycles) {
    self_[node] += cycles;
    total_ += cycles;
  }

  // As AddSelf, but returns false and changes nothing if total() + cycles would overflow 64 bits.
  // Every self count is at most total(), so checking the total checks the node too. O(1).
  [[nodiscard]] bool AddSelfChecked(NodeId node, uint64_t cycles) {
    uint64_t total;
    if (__builtin_add_overflow(total_, cycles, &total)) return false;
    self_[node] += cycles;
    total_ = total;
    return true;
  }

  // Records that `hidden.nodes` descendants with `hidden.cycles` inclusive cycles were pruned
  // below `node`; the cycles count towards total(). Used by pruning and by readers of pruned
  // data.
  void AddHidden(NodeId node, Hidden hidden);

  // Accessors. Node and frame ids must be valid (asserted). `frame(kRoot)` is kNoFrame.
  size_t num_nodes() const { return parent_.size(); }
  NodeId parent(NodeId node) const { return parent_[node]; }
  FrameId frame(NodeId node) const { return frame_[node]; }
  uint64_t self(NodeId node) const { return self_[node]; }
  // Returns the hidden (pruned) descendants recorded below `node`; zeros if none.
  Hidden hidden(NodeId node) const;
  // Returns true if any node has hidden descendants.
  bool has_hidden() const { return !hidden_.empty(); }
  // Returns the interned name; the view stays valid for the life of this Profile (moves keep it).
  absl::string_view frame_name(FrameId frame) const { return names_[frame]; }
  size_t num_frames() const { return names_.size(); }
  // Returns the sum of all self and hidden cycles.
  uint64_t total() const { return total_; }
  ChildMatching child_matching() const { return matching_; }

  static constexpr FrameId kNoFrame = 0xffffffffu;

  // Returns the depth of `node` (root is 0). O(depth).
  int Depth(NodeId node) const;

  // Returns inclusive cycles for every node, indexed by NodeId: self + descendants + hidden.
  // O(num_nodes).
  std::vector<uint64_t> InclusiveCycles() const;

  // Adds every node of `other` into this profile, matching nodes by their path of frame *names*
  // (frame ids of the two profiles are unrelated). Sums are exact (integer). Hidden records are
  // merged too. O(other.num_nodes()). `other` may not alias `*this`. The caller guarantees that
  // total() + other.total() fits in 64 bits; for profiles from outside (workers, files) use
  // MergeFromChecked.
  void MergeFrom(const Profile& other);

  // As MergeFrom, but first checks that the merged total fits in 64 bits (then so does every merged
  // node, whose self and hidden cycles are at most the total). Returns InvalidArgument naming both
  // totals, with nothing merged, if it does not. O(other.num_nodes()).
  absl::Status MergeFromChecked(const Profile& other);

  // Returns a copy without the subtrees whose inclusive cycles are below `min_inclusive`.
  // Each removed subtree's size and cycles are recorded on its surviving parent as
  // `hidden()`, so total() and every surviving node's inclusive cycles are unchanged.
  // The root always survives, and in kAdjacent mode so does the most recent path (it may
  // still grow), which lets a streaming reader prune closed subtrees early. O(num_nodes).
  Profile Pruned(uint64_t min_inclusive) const;

  // Returns a profile where every stack is reversed (leaf first, "merged at the leaf"),
  // pruning as it builds: nodes whose inclusive cycles would be below `min_inclusive` are
  // recorded as hidden on their parent instead of being created, so a huge reversed tree is
  // never materialised. Here `hidden().nodes` counts pruned child *subtrees* (their inner
  // size is never computed). Hidden cycles of this profile (already pruned, leaf unknown)
  // become hidden cycles of the reversed root. With min_inclusive = 0 the result is the full
  // reversed tree. Memory is O(num_nodes + result nodes); kByName result.
  Profile Reversed(uint64_t min_inclusive) const;

  // Reserves room for `nodes` nodes (optional; avoids rehashing).
  void Reserve(size_t nodes);

  // Returns an estimate of heap bytes used (arrays, tables, name arena).
  size_t MemoryUsage() const;

 private:
  static uint64_t Key(NodeId parent, FrameId frame) {
    return (static_cast<uint64_t>(parent) << 32) | frame;
  }
  NodeId NewNode(NodeId parent, FrameId frame);
  // Adds nodes [indexed_, num_nodes()) to children_ (kByName).
  void SyncIndex();
  // Stores `name` in the arena as frame num_frames() (not indexed); returns its id.
  FrameId StoreName(absl::string_view name);
  // Adds frames [frames_indexed_, num_frames()) to frame_ids_.
  void SyncFrameIndex();

  ChildMatching matching_;
  std::vector<NodeId> parent_;
  std::vector<FrameId> frame_;
  std::vector<uint64_t> self_;
  // kByName: (parent, frame) -> child, for nodes [0, indexed_) (see AddNewChild).
  absl::flat_hash_map<uint64_t, NodeId> children_;
  size_t indexed_ = 1;
  // kAdjacent: most recently created child of each node (kNoNode if none).
  std::vector<NodeId> last_child_;
  absl::flat_hash_map<NodeId, Hidden> hidden_;
  uint64_t total_ = 0;

  // Name arena: names live in fixed blocks that never move, so views stay valid.
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  std::vector<absl::string_view> names_;
  // Name -> id for frames [0, frames_indexed_) (see AddNewFrame).
  absl::flat_hash_map<absl::string_view, FrameId> frame_ids_;
  size_t frames_indexed_ = 0;
};

}  // namespace flamefleet::profile

#endif  // FLAMEFLEET_PROFILE_PROFILE_H_
