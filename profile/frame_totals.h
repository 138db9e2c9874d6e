// Per-procedure totals of a call-tree profile: for every frame name, the cycles in which it was
// the innermost frame (self) and the cycles in which it was on the stack at least once
// (inclusive: a recursive procedure's nested calls are not counted again). Works on any
// Profile: one run's, a merged aggregate, a profile read from folded text.
//
//   std::vector<profile::FrameTotal> rows = profile::FrameTotals(run.profile);
//   // rows[i].self sums to run.profile.total() minus the root's own cycles
#ifndef FLAMEFLEET_PROFILE_FRAME_TOTALS_H_
#define FLAMEFLEET_PROFILE_FRAME_TOTALS_H_

#include <cstdint>
#include <vector>

#include "profile/profile.h"

namespace flamefleet::profile {

struct FrameTotal {
  Profile::FrameId frame = Profile::kNoFrame;
  uint64_t self = 0;       // self cycles of every node with this frame
  uint64_t inclusive = 0;  // inclusive cycles of the outermost nodes with this frame
};

// Returns one row per frame that some node uses, by frame id. Hidden (pruned) cycles count as
// inclusive cycles of the node they are recorded on, and as nobody's self cycles. O(num_nodes);
// allocates O(num_nodes + num_frames). Thread-safe for a const profile.
std::vector<FrameTotal> FrameTotals(const Profile& profile);

}  // namespace flamefleet::profile

#endif  // FLAMEFLEET_PROFILE_FRAME_TOTALS_H_
