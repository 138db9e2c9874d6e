#include "profile/frame_totals.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "profile/profile.h"

namespace flamefleet::profile {

std::vector<FrameTotal> FrameTotals(const Profile& profile) {
  const size_t n = profile.num_nodes();
  const size_t frames = profile.num_frames();
  const std::vector<uint64_t> inclusive = profile.InclusiveCycles();
  std::vector<uint64_t> self(frames, 0), outer(frames, 0);
  std::vector<bool> used(frames, false);
  // Children in compressed rows (a child's id is greater than its parent's, but siblings'
  // subtrees interleave, so a depth-first walk needs the lists).
  std::vector<uint32_t> first(n + 1, 0);
  for (Profile::NodeId i = 1; i < n; ++i) ++first[profile.parent(i) + 1];
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<Profile::NodeId> children(n);  // n - 1 used (the root is no child)
  std::vector<uint32_t> fill = first;        // next free slot of each node's row
  for (Profile::NodeId i = 1; i < n; ++i) children[fill[profile.parent(i)]++] = i;
  // Depth-first walk keeping how many nodes of each frame are on the current path: a node
  // adds its inclusive cycles to its frame only when none of its ancestors has that frame.
  std::vector<uint32_t> on_path(frames, 0);
  std::vector<std::pair<Profile::NodeId, bool>> stack;  // (node, leaving)
  stack.emplace_back(Profile::kRoot, false);
  while (!stack.empty()) {
    auto [node, leaving] = stack.back();
    stack.pop_back();
    const Profile::FrameId f = profile.frame(node);
    const bool framed = node != Profile::kRoot && f != Profile::kNoFrame;
    if (leaving) {
      if (framed) --on_path[f];
      continue;
    }
    if (framed) {
      used[f] = true;
      self[f] += profile.self(node);
      if (on_path[f]++ == 0) outer[f] += inclusive[node];
    }
    stack.emplace_back(node, true);
    for (uint32_t c = first[node]; c < first[node + 1]; ++c) stack.emplace_back(children[c], false);
  }
  std::vector<FrameTotal> rows;
  for (Profile::FrameId f = 0; f < frames; ++f) {
    if (used[f]) rows.push_back(FrameTotal{f, self[f], outer[f]});
  }
  return rows;
}

}  // namespace flamefleet::profile
