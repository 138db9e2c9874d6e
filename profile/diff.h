// Differential profiles: two profiles compared node by node over the union of their trees.
//
//   ProfileDiff d = ProfileDiff::Compute(last_night, tonight);
//   for (Profile::NodeId n = 1; n < d.tree().num_nodes(); ++n)
//     if (d.after_inclusive(n) > d.before_inclusive(n)) { /* this call path grew */ }
//
// Thread-safety: immutable after Compute; const methods are safe to call concurrently.
#ifndef FLAMEFLEET_PROFILE_DIFF_H_
#define FLAMEFLEET_PROFILE_DIFF_H_

#include <cstdint>
#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "profile/profile.h"

namespace flamefleet::profile {

// A two-profile comparison: one tree holding the union of both trees' nodes, with before and
// after cycles per node. Thread-safety: see the file comment.
class ProfileDiff {
 public:
  using NodeId = Profile::NodeId;

  // Builds the union tree of `before` and `after` (matched by frame-name paths) with both
  // sides' self and inclusive cycles. Hidden cycles of pruned inputs count in inclusive only.
  // O(before.num_nodes() + after.num_nodes()).
  static ProfileDiff Compute(const Profile& before, const Profile& after);

  // Returns the union tree; its self() is before_self + after_self (useful only for shape).
  const Profile& tree() const { return tree_; }
  uint64_t before_self(NodeId n) const { return before_self_[n]; }
  uint64_t after_self(NodeId n) const { return after_self_[n]; }
  uint64_t before_inclusive(NodeId n) const { return before_incl_[n]; }
  uint64_t after_inclusive(NodeId n) const { return after_incl_[n]; }
  uint64_t before_total() const { return before_incl_[Profile::kRoot]; }
  uint64_t after_total() const { return after_incl_[Profile::kRoot]; }
  // Returns true if the node exists only in `after` (a new call path).
  bool is_new(NodeId n) const { return before_incl_[n] == 0 && after_incl_[n] != 0; }
  // Returns true if the node exists only in `before` (a call path that disappeared).
  bool is_vanished(NodeId n) const { return after_incl_[n] == 0 && before_incl_[n] != 0; }

 private:
  Profile tree_;
  std::vector<uint64_t> before_self_, after_self_, before_incl_, after_incl_;
};

// Writes `diff` as two-column folded text, the differential input of flamegraph.pl and
// difffolded.pl's output: one line `stack before after` per call path with self cycles on either
// side, sorted by stack; frame names sanitised as WriteFolded does, `[unknown]` for cycles on the
// root and a final `[hidden]` frame for pruned (hidden) cycles, so both columns add up to
// before_total() and after_total(). FoldedReader reads it back (with a `before` profile). Returns
// DataLoss if the stream fails.
absl::Status WriteFoldedDiff(const ProfileDiff& diff, std::ostream& out);

}  // namespace flamefleet::profile

#endif  // FLAMEFLEET_PROFILE_DIFF_H_
