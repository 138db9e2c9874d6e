// The Profile invariants (profile/profile.h) that the profile fuzzers check on every profile a
// decoder accepts: parents before children, frame ids in range, self cycles that sum to the
// total without overflow (when nothing was pruned), inclusive root == total, and non-empty
// frame names (every decoder refuses or skips empty ones). A broken invariant aborts: a
// finding.
//
//   absl::StatusOr<Profile> p = ParseProfile(bytes);
//   if (p.ok()) flamefleet::fuzzing::CheckProfileInvariants(*p);
#ifndef FLAMEFLEET_TESTS_FUZZ_PROFILE_INVARIANTS_H_
#define FLAMEFLEET_TESTS_FUZZ_PROFILE_INVARIANTS_H_

#include <cstdint>
#include <cstdlib>

#include "profile/profile.h"

namespace flamefleet::fuzzing {

inline void CheckProfileInvariants(const profile::Profile& p) {
  using profile::Profile;
  uint64_t sum = 0;
  for (size_t i = 0; i < p.num_nodes(); ++i) {
    const auto node = static_cast<Profile::NodeId>(i);
    if (i > 0 && (p.parent(node) >= i || p.frame(node) >= p.num_frames())) std::abort();
    if (__builtin_add_overflow(sum, p.self(node), &sum)) std::abort();
  }
  if (!p.has_hidden() && sum != p.total()) std::abort();
  if (p.InclusiveCycles()[Profile::kRoot] != p.total()) std::abort();
  for (size_t f = 0; f < p.num_frames(); ++f) {
    if (p.frame_name(static_cast<Profile::FrameId>(f)).empty()) std::abort();
  }
}

}  // namespace flamefleet::fuzzing

#endif  // FLAMEFLEET_TESTS_FUZZ_PROFILE_INVARIANTS_H_
