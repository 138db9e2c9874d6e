#include "vm/crypto/merkle_store.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flamefleet::vm {
namespace internal {

// Empty-subtree roots by height, the reverse map root -> height (heights 1..64) and the children of
// each empty root.
struct EmptyMerkleRoots {
  std::array<Word, kMaxMerkleDepth + 1> by_height;
  absl::flat_hash_map<Word, uint64_t> height_of;
  std::array<MerkleChildren, kMaxMerkleDepth + 1> children;
};

}  // namespace internal
namespace {

using internal::EmptyMerkleRoots;
using internal::MerkleChildren;

constexpr Word kEmptyWord{};

EmptyMerkleRoots* BuildEmptyRoots(const Hasher& hasher) {
  auto* roots = new EmptyMerkleRoots;
  roots->by_height[0] = kEmptyWord;
  for (uint64_t h = 1; h <= kMaxMerkleDepth; ++h) {
    roots->by_height[h] = hasher.Merge(roots->by_height[h - 1], roots->by_height[h - 1]);
    roots->height_of.emplace(roots->by_height[h], h);
    roots->children[h] = MerkleChildren{roots->by_height[h - 1], roots->by_height[h - 1]};
  }
  return roots;
}

// Returns the table of `hasher`, building it on first use. Tables are immutable after construction
// and intentionally never destroyed (no exit-time destructor); there is one per hasher (a dialect
// has one), so the registry stays tiny.
const EmptyMerkleRoots& GetEmptyRoots(const Hasher& hasher) {
  static std::mutex* const mu = new std::mutex;
  static auto* const others = new absl::flat_hash_map<const Hasher*, const EmptyMerkleRoots*>;
  std::lock_guard<std::mutex> lock(*mu);
  const EmptyMerkleRoots*& roots = (*others)[&hasher];
  if (roots == nullptr) roots = BuildEmptyRoots(hasher);
  return *roots;
}

absl::Status CheckIndex(uint64_t depth, uint64_t index) {
  if (depth > kMaxMerkleDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid Merkle depth ", depth, " (at most ", kMaxMerkleDepth, ")"));
  }
  if (depth < 64 && index >> depth != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid Merkle index ", index, " at depth ", depth));
  }
  return absl::OkStatus();
}

std::string WordText(const Word& w) {
  return absl::StrCat("[", w[0].value(), ", ", w[1].value(), ", ", w[2].value(), ", ", w[3].value(),
                      "]");
}

}  // namespace

const Word& EmptySubtreeRoot(const Hasher& hasher, uint64_t height) {
  return GetEmptyRoots(hasher).by_height[std::min(height, kMaxMerkleDepth)];
}

Word ComputeMerkleRoot(const Hasher& hasher, const Word& node, std::span<const Word> path,
                       uint64_t index) {
  Word cur = node;
  for (const Word& sibling : path) {
    cur = (index & 1) == 0 ? hasher.Merge(cur, sibling) : hasher.Merge(sibling, cur);
    index >>= 1;
  }
  return cur;
}

MerkleStore::MerkleStore(const Hasher& hasher) : hasher_(&hasher), empty_(&GetEmptyRoots(hasher)) {}

const MerkleStore::Children* MerkleStore::Find(const Word& node) const {
  auto it = nodes_.find(node);
  if (it != nodes_.end()) return &it->second;
  // The empty subtrees are part of every store without being stored: their children are the empty
  // root one level down, from the hasher's immutable table.
  auto e = empty_->height_of.find(node);
  return e == empty_->height_of.end() ? nullptr : &empty_->children[e->second];
}

absl::StatusOr<std::pair<Word, std::vector<Word>>> MerkleStore::GetPath(const Word& root,
                                                                        uint64_t depth,
                                                                        uint64_t index) const {
  FLAMEFLEET_RETURN_IF_ERROR(CheckIndex(depth, index));
  std::vector<Word> path(depth);
  Word cur = root;
  if (Find(root) == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("Merkle root ", WordText(root), " is not in the store"));
  }
  for (uint64_t level = depth; level-- > 0;) {
    const Children* c = Find(cur);
    if (c == nullptr) {
      return absl::NotFoundError(absl::StrCat("Merkle node ", WordText(cur),
                                              " of the tree with root ", WordText(root),
                                              " is not in the store"));
    }
    bool right = ((index >> level) & 1) != 0;
    path[level] = right ? c->left : c->right;
    cur = right ? c->right : c->left;
  }
  return std::make_pair(cur, std::move(path));
}

absl::StatusOr<Word> MerkleStore::GetNode(const Word& root, uint64_t depth, uint64_t index) const {
  FLAMEFLEET_RETURN_IF_ERROR(CheckIndex(depth, index));
  if (Find(root) == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("Merkle root ", WordText(root), " is not in the store"));
  }
  Word cur = root;
  for (uint64_t level = depth; level-- > 0;) {
    const Children* c = Find(cur);
    if (c == nullptr) {
      return absl::NotFoundError(absl::StrCat("Merkle node ", WordText(cur),
                                              " of the tree with root ", WordText(root),
                                              " is not in the store"));
    }
    cur = ((index >> level) & 1) != 0 ? c->right : c->left;
  }
  return cur;
}

absl::StatusOr<MerkleStore::Update> MerkleStore::SetNode(const Word& root, uint64_t depth,
                                                         uint64_t index, const Word& value) {
  FLAMEFLEET_ASSIGN_OR_RETURN(auto old, GetPath(root, depth, index));
  Update update;
  update.path = std::move(old.second);
  Word cur = value;
  uint64_t i = index;
  for (const Word& sibling : update.path) {
    const bool right = (i & 1) != 0;
    const Word& left = right ? sibling : cur;
    const Word& rhs = right ? cur : sibling;
    Word parent = hasher_->Merge(left, rhs);
    AddInner(parent, left, rhs);
    cur = parent;
    i >>= 1;
  }
  update.new_root = cur;
  return update;
}

Word MerkleStore::MergeRoots(const Word& left, const Word& right) {
  Word parent = hasher_->Merge(left, right);
  AddInner(parent, left, right);
  return parent;
}

absl::StatusOr<Word> MerkleStore::AddInput(const MerkleStoreInput& input) {
  switch (input.kind) {
    case MerkleStoreInput::Kind::kMerkleTree: {
      // Heap layout: nodes[1] is the root, nodes[n + i] is leaf i.
      const size_t n = input.leaves.size();
      if (n < 2 || (n & (n - 1)) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("merkle_tree: the number of leaves must be a power of "
                         "two >= 2, got ",
                         n));
      }
      std::vector<Word> nodes(2 * n);
      std::copy(input.leaves.begin(), input.leaves.end(), nodes.begin() + n);
      for (size_t i = n - 1; i >= 1; --i) {
        nodes[i] = hasher_->Merge(nodes[2 * i], nodes[2 * i + 1]);
        AddInner(nodes[i], nodes[2 * i], nodes[2 * i + 1]);
      }
      return nodes[1];
    }
    case MerkleStoreInput::Kind::kSparseMerkleTree: {
      // A depth-64 simple SMT: absent leaves are the empty word, so an absent child at height h is
      // the empty subtree root E[h].
      if (input.indices.size() != input.leaves.size()) {
        return absl::InvalidArgumentError("sparse_merkle_tree: indices and leaves differ in size");
      }
      std::map<uint64_t, Word> level;
      for (size_t k = 0; k < input.leaves.size(); ++k) level[input.indices[k]] = input.leaves[k];
      for (uint64_t height = 0; height < kMaxMerkleDepth; ++height) {
        const Word& empty_child = empty_->by_height[height];
        std::map<uint64_t, Word> parents;
        for (const auto& [index, node] : level) {
          uint64_t p = index >> 1;
          if (parents.contains(p)) continue;
          auto l = level.find(p << 1);
          auto r = level.find((p << 1) | 1);
          const Word& left = l == level.end() ? empty_child : l->second;
          const Word& right = r == level.end() ? empty_child : r->second;
          Word parent = hasher_->Merge(left, right);
          AddInner(parent, left, right);
          parents.emplace(p, parent);
        }
        level = std::move(parents);
      }
      return level.empty() ? empty_->by_height[kMaxMerkleDepth] : level.begin()->second;
    }
    case MerkleStoreInput::Kind::kPartialMerkleTree: {
      // indices = (depth, index) pairs. Going up from the deepest layer, every node needs its
      // sibling (given, or computed from deeper nodes) to produce its parent; a parent that is
      // itself given is kept as given.
      if (input.indices.size() != 2 * input.leaves.size()) {
        return absl::InvalidArgumentError(
            "partial_merkle_tree: expected one (depth, index) pair per leaf");
      }
      if (input.leaves.empty()) return kEmptyWord;
      std::map<std::pair<uint64_t, uint64_t>, Word> nodes;
      std::map<uint64_t, std::set<uint64_t>> layers;
      uint64_t max_depth = 0;
      for (size_t k = 0; k < input.leaves.size(); ++k) {
        uint64_t depth = input.indices[2 * k], index = input.indices[2 * k + 1];
        FLAMEFLEET_RETURN_IF_ERROR(CheckIndex(depth, index));
        nodes[{depth, index}] = input.leaves[k];
        layers[depth].insert(index);
        max_depth = std::max(max_depth, depth);
      }
      for (uint64_t depth = max_depth; depth >= 1; --depth) {
        const std::set<uint64_t> current = layers[depth];
        std::set<uint64_t>& parent_layer = layers[depth - 1];
        for (uint64_t index : current) {
          uint64_t p = index >> 1;
          if (parent_layer.contains(p)) continue;
          auto node = nodes.find({depth, index});
          auto sibling = nodes.find({depth, index ^ 1});
          if (node == nodes.end() || sibling == nodes.end()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "partial_merkle_tree: node (depth ", depth, ", index ", index ^ 1, ") is missing"));
          }
          const bool right = (index & 1) != 0;
          const Word& left = right ? sibling->second : node->second;
          const Word& rhs = right ? node->second : sibling->second;
          Word parent = hasher_->Merge(left, rhs);
          AddInner(parent, left, rhs);
          nodes[{depth - 1, p}] = parent;
          parent_layer.insert(p);
        }
      }
      auto root = nodes.find({0, 0});
      return root == nodes.end() ? kEmptyWord : root->second;
    }
  }
  return absl::InternalError("unknown merkle_store source kind");
}

}  // namespace flamefleet::vm
