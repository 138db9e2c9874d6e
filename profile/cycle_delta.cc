#include "profile/cycle_delta.h"

#include <algorithm>
#include <limits>

namespace flamefleet::profile {

double CycleDelta::percent() const {
  if (before == 0) return after == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return 100.0 * static_cast<double>(delta()) / static_cast<double>(before);
}

bool GrewMore(const CycleDelta& a, const CycleDelta& b) {
  if (a.delta() != b.delta()) return a.delta() > b.delta();
  return a.name < b.name;
}

void MatchCycles(const std::map<std::string, uint64_t>& before,
                 const std::map<std::string, uint64_t>& after, std::vector<CycleDelta>* both,
                 std::vector<CycleDelta>* added, std::vector<CycleDelta>* removed) {
  for (const auto& [name, cycles] : before) {
    auto it = after.find(name);
    if (it == after.end()) {
      removed->push_back({name, cycles, 0});
    } else {
      both->push_back({name, cycles, it->second});
    }
  }
  for (const auto& [name, cycles] : after) {
    if (!before.contains(name)) added->push_back({name, 0, cycles});
  }
  std::sort(both->begin(), both->end(), GrewMore);
}

std::map<std::string, uint64_t> SelfCyclesByName(const Profile& p) {
  std::map<std::string, uint64_t> out;
  if (p.num_nodes() == 0) return out;
  if (p.self(Profile::kRoot) != 0) out["[unknown]"] += p.self(Profile::kRoot);
  uint64_t hidden = p.hidden(Profile::kRoot).cycles;
  std::vector<uint64_t> by_frame(p.num_frames(), 0);
  for (Profile::NodeId n = 1; n < p.num_nodes(); ++n) {
    by_frame[p.frame(n)] += p.self(n);
    hidden += p.hidden(n).cycles;
  }
  for (size_t f = 0; f < by_frame.size(); ++f) {
    if (by_frame[f] != 0) {
      out[std::string(p.frame_name(static_cast<Profile::FrameId>(f)))] += by_frame[f];
    }
  }
  if (hidden != 0) out["[hidden]"] += hidden;
  return out;
}

std::vector<CycleDelta> FrameDeltas(const std::map<std::string, uint64_t>& before,
                                    const std::map<std::string, uint64_t>& after) {
  std::vector<CycleDelta> rows;
  for (const auto& [name, cycles] : before) {
    auto it = after.find(name);
    rows.push_back({name, cycles, it == after.end() ? 0 : it->second});
  }
  for (const auto& [name, cycles] : after) {
    if (!before.contains(name)) rows.push_back({name, 0, cycles});
  }
  std::sort(rows.begin(), rows.end(), GrewMore);
  return rows;
}

}  // namespace flamefleet::profile
