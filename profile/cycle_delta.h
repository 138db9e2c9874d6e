// Cycle deltas between two runs of a suite: the pure arithmetic behind `flamefleet diff` and the
// coordinator's web view of a diff, so that both report exactly the same rows. Jobs (or phases)
// are matched by name into rows on both sides, added (only after) and removed (only before);
// frames compare an aggregate's self cycles summed by frame name.
//
//   std::vector<CycleDelta> both, added, removed;
//   MatchCycles(before_jobs, after_jobs, &both, &added, &removed);
//   std::vector<CycleDelta> frames =
//       FrameDeltas(SelfCyclesByName(before_aggregate), SelfCyclesByName(after_aggregate));
//   for (const CycleDelta& d : both) if (d.delta() > 0) ... d.percent() ...
//
// Thread-safety: plain values and functions.
#ifndef FLAMEFLEET_PROFILE_CYCLE_DELTA_H_
#define FLAMEFLEET_PROFILE_CYCLE_DELTA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace flamefleet::profile {

// The change of one job's (or one frame's, phase's) cycles.
struct CycleDelta {
  std::string name;
  uint64_t before = 0;
  uint64_t after = 0;
  int64_t delta() const { return static_cast<int64_t>(after) - static_cast<int64_t>(before); }
  // Returns 100 * delta / before; +infinity if before is 0 and after is not; 0 if both are 0.
  double percent() const;
};

// The order of every delta table: delta descending, then name.
bool GrewMore(const CycleDelta& a, const CycleDelta& b);

// Splits two name -> cycles maps into rows on both sides (`both`, by GrewMore), only in `after`
// (`added`, before = 0) and only in `before` (`removed`, after = 0), the last two by name. Rows
// are appended; none of the pointers may be null.
void MatchCycles(const std::map<std::string, uint64_t>& before,
                 const std::map<std::string, uint64_t>& after, std::vector<CycleDelta>* both,
                 std::vector<CycleDelta>* added, std::vector<CycleDelta>* removed);

// Returns the self cycles of `p` summed by frame name ("[unknown]" for cycles of the root,
// "[hidden]" for pruned ones).
std::map<std::string, uint64_t> SelfCyclesByName(const Profile& p);

// Returns one row per name of either map (a missing side counts 0), by GrewMore.
std::vector<CycleDelta> FrameDeltas(const std::map<std::string, uint64_t>& before,
                                    const std::map<std::string, uint64_t>& after);

}  // namespace flamefleet::profile

#endif  // FLAMEFLEET_PROFILE_CYCLE_DELTA_H_
