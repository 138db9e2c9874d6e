#include "profile/profile.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "profile/diff.h"

namespace flamefleet::profile {
namespace {

constexpr size_t kMinBlockSize = 64 * 1024;

}  // namespace

Profile::Profile(ChildMatching matching) : matching_(matching) {
  parent_.push_back(kNoNode);
  frame_.push_back(kNoFrame);
  self_.push_back(0);
  if (matching_ == ChildMatching::kAdjacent) last_child_.push_back(kNoNode);
}

Profile::Profile(const Profile& other) : Profile(other.matching_) { *this = other; }

Profile& Profile::operator=(const Profile& other) {
  if (this == &other) return *this;
  matching_ = other.matching_;
  parent_ = other.parent_;
  frame_ = other.frame_;
  self_ = other.self_;
  children_ = other.children_;
  indexed_ = other.indexed_;
  last_child_ = other.last_child_;
  hidden_ = other.hidden_;
  total_ = other.total_;
  // Re-intern names into our own arena so our views never point into `other`.
  blocks_.clear();
  block_used_ = 0;
  block_size_ = 0;
  names_.clear();
  frame_ids_.clear();
  frames_indexed_ = 0;
  names_.reserve(other.names_.size());
  for (absl::string_view name : other.names_) InternFrame(name);
  return *this;
}

Profile::Profile(Profile&&) noexcept = default;
Profile& Profile::operator=(Profile&&) noexcept = default;
Profile::~Profile() = default;

Profile::FrameId Profile::InternFrame(absl::string_view name) {
  if (frames_indexed_ != names_.size()) SyncFrameIndex();
  auto it = frame_ids_.find(name);
  if (it != frame_ids_.end()) return it->second;
  const FrameId id = StoreName(name);
  frame_ids_.emplace(names_[id], id);
  frames_indexed_ = names_.size();
  return id;
}

Profile::FrameId Profile::AddNewFrame(absl::string_view name) { return StoreName(name); }

Profile::FrameId Profile::StoreName(absl::string_view name) {
  const FrameId id = static_cast<FrameId>(names_.size());
  if (name.empty()) {  // needs no arena bytes (and there may be no block yet to point into)
    names_.push_back(absl::string_view());
    return id;
  }
  if (block_used_ + name.size() > block_size_) {
    block_size_ = std::max(kMinBlockSize, name.size());
    // Not zeroed: every byte is written before a view can see it.
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, name.data(), name.size());
  block_used_ += name.size();
  names_.push_back(absl::string_view(dst, name.size()));
  return id;
}

void Profile::SyncFrameIndex() {
  if (frame_ids_.empty()) frame_ids_.reserve(names_.size());
  for (size_t f = frames_indexed_; f < names_.size(); ++f) {
    [[maybe_unused]] const bool inserted =
        frame_ids_.emplace(names_[f], static_cast<FrameId>(f)).second;
    assert(inserted);
  }
  frames_indexed_ = names_.size();
}

Profile::NodeId Profile::NewNode(NodeId parent, FrameId frame) {
  const NodeId id = static_cast<NodeId>(parent_.size());
  assert(id != kNoNode);
  parent_.push_back(parent);
  frame_.push_back(frame);
  self_.push_back(0);
  return id;
}

Profile::NodeId Profile::Child(NodeId parent, FrameId frame) {
  assert(parent < parent_.size());
  assert(frame < names_.size());
  if (matching_ == ChildMatching::kAdjacent) {
    const NodeId last = last_child_[parent];
    if (last != kNoNode && frame_[last] == frame) return last;
    const NodeId id = NewNode(parent, frame);
    last_child_.push_back(kNoNode);
    last_child_[parent] = id;
    return id;
  }
  if (indexed_ != parent_.size()) SyncIndex();
  auto [it, inserted] = children_.try_emplace(Key(parent, frame), 0);
  if (inserted) {
    it->second = NewNode(parent, frame);
    indexed_ = parent_.size();
  }
  return it->second;
}

Profile::NodeId Profile::AddNewChild(NodeId parent, FrameId frame) {
  assert(parent < parent_.size());
  assert(frame < names_.size());
  if (matching_ == ChildMatching::kAdjacent) {
    const NodeId id = NewNode(parent, frame);
    last_child_.push_back(kNoNode);
    last_child_[parent] = id;
    return id;
  }
  return NewNode(parent, frame);
}

void Profile::SyncIndex() {
  if (children_.empty()) children_.reserve(parent_.size());
  for (size_t i = indexed_; i < parent_.size(); ++i) {
    [[maybe_unused]] const bool inserted =
        children_.emplace(Key(parent_[i], frame_[i]), static_cast<NodeId>(i)).second;
    assert(inserted);
  }
  indexed_ = parent_.size();
}

void Profile::AddHidden(NodeId node, Hidden hidden) {
  assert(node < parent_.size());
  if (hidden.nodes == 0 && hidden.cycles == 0) return;
  Hidden& h = hidden_[node];
  h.nodes += hidden.nodes;
  h.cycles += hidden.cycles;
  total_ += hidden.cycles;
}

Profile::Hidden Profile::hidden(NodeId node) const {
  auto it = hidden_.find(node);
  return it == hidden_.end() ? Hidden{} : it->second;
}

int Profile::Depth(NodeId node) const {
  int depth = 0;
  while (node != kRoot) {
    node = parent_[node];
    ++depth;
  }
  return depth;
}

std::vector<uint64_t> Profile::InclusiveCycles() const {
  std::vector<uint64_t> incl(self_);
  for (const auto& [node, h] : hidden_) incl[node] += h.cycles;
  for (size_t n = incl.size() - 1; n > 0; --n) incl[parent_[n]] += incl[n];
  return incl;
}

void Profile::MergeFrom(const Profile& other) {
  assert(&other != this);
  std::vector<FrameId> frame_map(other.names_.size());
  for (size_t f = 0; f < other.names_.size(); ++f) {
    frame_map[f] = InternFrame(other.names_[f]);
  }
  std::vector<NodeId> node_map(other.num_nodes());
  node_map[kRoot] = kRoot;
  if (other.num_nodes() > num_nodes()) Reserve(other.num_nodes());
  for (size_t n = 1; n < other.num_nodes(); ++n) {
    node_map[n] = Child(node_map[other.parent_[n]], frame_map[other.frame_[n]]);
  }
  for (size_t n = 0; n < other.num_nodes(); ++n) {
    if (other.self_[n] != 0) AddSelf(node_map[n], other.self_[n]);
  }
  // Sorted so the merged hash map is filled in a deterministic order.
  std::vector<std::pair<NodeId, Hidden>> hidden(other.hidden_.begin(), other.hidden_.end());
  std::sort(hidden.begin(), hidden.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [node, h] : hidden) AddHidden(node_map[node], h);
}

absl::Status Profile::MergeFromChecked(const Profile& other) {
  uint64_t total;
  if (__builtin_add_overflow(total_, other.total_, &total)) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile totals overflow 64 bits when merged: ", total_, " + ", other.total_));
  }
  MergeFrom(other);
  return absl::OkStatus();
}

Profile Profile::Pruned(uint64_t min_inclusive) const {
  const size_t n = num_nodes();
  std::vector<uint64_t> incl = InclusiveCycles();
  // Subtree sizes (excluding the node itself), counting already hidden nodes.
  std::vector<uint64_t> below(n, 0);
  for (const auto& [node, h] : hidden_) below[node] += h.nodes;
  for (size_t i = n - 1; i > 0; --i) below[parent_[i]] += below[i] + 1;

  std::vector<bool> pinned;
  if (matching_ == ChildMatching::kAdjacent) {
    pinned.assign(n, false);
    for (NodeId c = last_child_[kRoot]; c != kNoNode; c = last_child_[c]) pinned[c] = true;
  }

  Profile out(matching_);
  out.names_.reserve(names_.size());
  for (absl::string_view name : names_) out.InternFrame(name);
  std::vector<NodeId> map(n, kNoNode);
  map[kRoot] = kRoot;
  std::vector<std::pair<NodeId, Hidden>> hidden_out;
  for (size_t i = 1; i < n; ++i) {
    const NodeId p = map[parent_[i]];
    if (p == kNoNode) continue;  // inside a removed subtree
    const bool keep = incl[i] >= min_inclusive || (!pinned.empty() && pinned[i]);
    if (!keep) {
      hidden_out.push_back({p, Hidden{below[i] + 1, incl[i]}});
      continue;
    }
    const NodeId id = out.NewNode(p, frame_[i]);
    map[i] = id;
    if (matching_ == ChildMatching::kAdjacent) out.last_child_.push_back(kNoNode);
    if (self_[i] != 0) out.AddSelf(id, self_[i]);
  }
  if (self_[kRoot] != 0) out.AddSelf(kRoot, self_[kRoot]);
  if (matching_ == ChildMatching::kAdjacent) {
    for (size_t i = 0; i < n; ++i) {
      if (map[i] != kNoNode && last_child_[i] != kNoNode && map[last_child_[i]] != kNoNode) {
        out.last_child_[map[i]] = map[last_child_[i]];
      }
    }
  }
  std::vector<std::pair<NodeId, Hidden>> old_hidden(hidden_.begin(), hidden_.end());
  std::sort(old_hidden.begin(), old_hidden.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [node, h] : old_hidden) {
    if (map[node] != kNoNode) hidden_out.push_back({map[node], h});
  }
  for (const auto& [node, h] : hidden_out) out.AddHidden(node, h);
  assert(out.total() == total());
  return out;
}

Profile Profile::Reversed(uint64_t min_inclusive) const {
  Profile out;
  std::vector<FrameId> frame_map(names_.size());
  for (size_t f = 0; f < names_.size(); ++f) frame_map[f] = out.InternFrame(names_[f]);
  if (self_[kRoot] != 0) out.AddSelf(kRoot, self_[kRoot]);
  {
    Hidden all;
    std::vector<std::pair<NodeId, Hidden>> old_hidden(hidden_.begin(), hidden_.end());
    for (const auto& [node, h] : old_hidden) {
      all.nodes += h.nodes;
      all.cycles += h.cycles;
    }
    out.AddHidden(kRoot, all);
  }

  // A member is one forward stack (a node with self cycles) being walked from leaf to root;
  // `at` is the reversed node it hangs below, `cursor` the forward node to place next.
  struct Member {
    NodeId cursor;
    NodeId at;
    uint64_t weight;
  };
  std::vector<Member> members;
  for (size_t i = 1; i < num_nodes(); ++i) {
    if (self_[i] != 0) members.push_back({static_cast<NodeId>(i), kRoot, self_[i]});
  }
  absl::flat_hash_map<uint64_t, uint64_t> weights;
  absl::flat_hash_map<uint64_t, bool> dropped_keys;
  while (!members.empty()) {
    weights.clear();
    for (const Member& m : members) weights[Key(m.at, frame_map[frame_[m.cursor]])] += m.weight;
    dropped_keys.clear();
    size_t kept = 0;
    for (const Member& m : members) {
      const FrameId f = frame_map[frame_[m.cursor]];
      const uint64_t key = Key(m.at, f);
      if (weights[key] < min_inclusive) {
        const bool first = dropped_keys.emplace(key, true).second;
        out.AddHidden(m.at, Hidden{first ? 1u : 0u, m.weight});
        continue;
      }
      const NodeId node = out.Child(m.at, f);
      const NodeId next = parent_[m.cursor];
      if (next == kRoot) {
        out.AddSelf(node, m.weight);
        continue;
      }
      members[kept++] = Member{next, node, m.weight};
    }
    members.resize(kept);
  }
  return out;
}

void Profile::Reserve(size_t nodes) {
  parent_.reserve(nodes);
  frame_.reserve(nodes);
  self_.reserve(nodes);
  if (matching_ == ChildMatching::kAdjacent) {
    last_child_.reserve(nodes);
  } else {
    SyncIndex();
    children_.reserve(nodes);
  }
}

size_t Profile::MemoryUsage() const {
  size_t bytes = parent_.capacity() * sizeof(NodeId) + frame_.capacity() * sizeof(FrameId) +
                 self_.capacity() * sizeof(uint64_t) + last_child_.capacity() * sizeof(NodeId);
  bytes += children_.bucket_count() * (sizeof(std::pair<uint64_t, NodeId>) + 1);
  bytes += frame_ids_.bucket_count() * (sizeof(std::pair<absl::string_view, FrameId>) + 1);
  bytes += names_.capacity() * sizeof(absl::string_view) + blocks_.size() * block_size_;
  bytes += hidden_.bucket_count() * (sizeof(std::pair<NodeId, Hidden>) + 1);
  return bytes;
}

ProfileDiff ProfileDiff::Compute(const Profile& before, const Profile& after) {
  ProfileDiff d;
  // `after` first so the union tree's ids match `after`'s for its nodes.
  d.tree_.MergeFrom(after);
  d.tree_.MergeFrom(before);
  const size_t n = d.tree_.num_nodes();
  d.before_self_.assign(n, 0);
  d.after_self_.assign(n, 0);
  d.before_incl_.assign(n, 0);
  d.after_incl_.assign(n, 0);
  auto fill = [&d](const Profile& p, std::vector<uint64_t>& self, std::vector<uint64_t>& incl) {
    std::vector<Profile::FrameId> frame_map(p.num_frames());
    for (size_t f = 0; f < p.num_frames(); ++f) {
      frame_map[f] = d.tree_.InternFrame(p.frame_name(static_cast<Profile::FrameId>(f)));
    }
    std::vector<NodeId> map(p.num_nodes());
    map[Profile::kRoot] = Profile::kRoot;
    for (size_t i = 1; i < p.num_nodes(); ++i) {
      map[i] = d.tree_.Child(map[p.parent(static_cast<NodeId>(i))],
                             frame_map[p.frame(static_cast<NodeId>(i))]);
    }
    std::vector<uint64_t> p_incl = p.InclusiveCycles();
    for (size_t i = 0; i < p.num_nodes(); ++i) {
      self[map[i]] += p.self(static_cast<NodeId>(i));
      incl[map[i]] += p_incl[i];
    }
  };
  fill(before, d.before_self_, d.before_incl_);
  fill(after, d.after_self_, d.after_incl_);
  assert(d.tree_.num_nodes() == n);
  return d;
}

}  // namespace flamefleet::profile
