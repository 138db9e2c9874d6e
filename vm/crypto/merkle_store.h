// MerkleStore: the advice provider's Merkle store of the Miden VM (the MerkleStore of
// miden-crypto v0.15), hashing with the dialect's Hasher: a set of binary Merkle trees kept as one
// map from an inner node's digest to its two children, so trees share subtrees and a root plus
// (depth, index) addresses any node. Every hash goes through the store's Hasher
// (vm/crypto/hasher.h: the dialect's, RPO-256 or Poseidon2; there is no default).
//
// The roots of empty subtrees of every height 1..64 (E[k] = Merge(E[k-1], E[k-1]), E[0] the zero
// word) are always present, as upstream, without being copied into each store. Trees come from
// the `.inputs` `merkle_store` sources (merkle_tree, depth-64 sparse_merkle_tree,
// partial_merkle_tree), from `mtree_set` (the new tree is added and the old one kept) and from
// `mtree_merge`.
//
//   MerkleStore store(*program.dialect->hasher);
//   FLAMEFLEET_ASSIGN_OR_RETURN(Word root, store.AddInput(input));
//   FLAMEFLEET_ASSIGN_OR_RETURN(Word leaf, store.GetNode(root, /*depth=*/2, /*index=*/1));
//   FLAMEFLEET_ASSIGN_OR_RETURN(MerkleStore::Update u, store.SetNode(root, 2, 1, new_leaf));
//
// Not thread-safe; a store belongs to one executor. Copyable and movable.
#ifndef FLAMEFLEET_VM_CRYPTO_MERKLE_STORE_H_
#define FLAMEFLEET_VM_CRYPTO_MERKLE_STORE_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "vm/crypto/hasher.h"
#include "vm/felt.h"
#include "vm/inputs.h"

namespace flamefleet::vm {

// The deepest tree the store addresses.
inline constexpr uint64_t kMaxMerkleDepth = 64;

namespace internal {
// The two children of an inner node.
struct MerkleChildren {
  Word left, right;
};
// The empty-subtree roots of one hasher (defined in merkle_store.cc).
struct EmptyMerkleRoots;
}  // namespace internal

// Returns the root of an empty subtree of height `height` (0 <= height <= 64; larger heights are
// clamped to 64) under `hasher`; height 0 is the zero word. Thread-safe (an immutable table per
// hasher, built on first use and kept for the process).
const Word& EmptySubtreeRoot(const Hasher& hasher, uint64_t height);

// Returns the root reached from `node` at `index` (of its level) through `path` under `hasher`,
// where path[0] is the sibling at the node's level and later entries are higher up. Thread-safe.
Word ComputeMerkleRoot(const Hasher& hasher, const Word& node, std::span<const Word> path,
                       uint64_t index);

class MerkleStore {
 public:
  // Creates an empty store that hashes with `hasher`, which must outlive the store (hashers live
  // for the process).
  explicit MerkleStore(const Hasher& hasher);

  // The result of SetNode: the authentication path of the replaced node (path[0] = sibling at its
  // level) and the new root.
  struct Update {
    std::vector<Word> path;
    Word new_root;
  };

  // Builds one `.inputs` merkle_store source into the store and returns its root. Returns
  // InvalidArgument when the source is malformed (a merkle_tree whose leaf count is not a power
  // of two >= 2, an index out of range for its depth, a partial tree in which a node's sibling is
  // missing).
  absl::StatusOr<Word> AddInput(const MerkleStoreInput& input);

  // Records that `parent` = Merge(left, right).
  void AddInner(const Word& parent, const Word& left, const Word& right) {
    nodes_.insert_or_assign(parent, Children{left, right});
  }

  // Returns the node at (`depth`, `index`) of the tree with root `root`. Returns InvalidArgument
  // for depth > 64 or index >= 2^depth, NotFound if the root or a node on the way is not in the
  // store.
  absl::StatusOr<Word> GetNode(const Word& root, uint64_t depth, uint64_t index) const;

  // Like GetNode, and also returns the authentication path (path[0] = sibling at `depth`).
  absl::StatusOr<std::pair<Word, std::vector<Word>>> GetPath(const Word& root, uint64_t depth,
                                                             uint64_t index) const;

  // Replaces the node at (`depth`, `index`) of tree `root` with `value`, adding the new tree's
  // inner nodes (the old tree stays). Errors as GetPath.
  absl::StatusOr<Update> SetNode(const Word& root, uint64_t depth, uint64_t index,
                                 const Word& value);

  // Adds the tree whose root is Merge(left, right) and returns that root.
  Word MergeRoots(const Word& left, const Word& right);

  // Number of inner nodes recorded (the implicit empty-subtree roots not included).
  size_t size() const { return nodes_.size(); }

  // Returns the hasher of this store.
  const Hasher& hasher() const { return *hasher_; }

 private:
  using Children = internal::MerkleChildren;
  // Returns the children of `node`, or null if it is not an inner node of the store.
  const Children* Find(const Word& node) const;

  const Hasher* hasher_;                     // never null
  const internal::EmptyMerkleRoots* empty_;  // the empty roots of *hasher_
  absl::flat_hash_map<Word, Children> nodes_;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_CRYPTO_MERKLE_STORE_H_
