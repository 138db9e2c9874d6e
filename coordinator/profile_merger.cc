#include "coordinator/profile_merger.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "profile/profile_proto.h"

namespace flamefleet::coordinator {
namespace {

using profile::Profile;

// Adds every node of `from` into `into` below the node `at` (the root of `from` maps to `at`),
// matching nodes by frame name as Profile::MergeFrom does at the root. The caller has checked
// that the sum fits in 64 bits.
void MergeUnder(const Profile& from, Profile::NodeId at, Profile* into) {
  std::vector<Profile::FrameId> frames(from.num_frames());
  for (Profile::FrameId f = 0; f < from.num_frames(); ++f) {
    frames[f] = into->InternFrame(from.frame_name(f));
  }
  std::vector<Profile::NodeId> node_of(from.num_nodes());
  node_of[Profile::kRoot] = at;
  into->AddSelf(at, from.self(Profile::kRoot));
  for (Profile::NodeId n = 1; n < from.num_nodes(); ++n) {
    // Parents come before their children, so node_of[parent] is set.
    node_of[n] = into->Child(node_of[from.parent(n)], frames[from.frame(n)]);
    into->AddSelf(node_of[n], from.self(n));
  }
  if (from.has_hidden()) {
    for (Profile::NodeId n = 0; n < from.num_nodes(); ++n) {
      const Profile::Hidden hidden = from.hidden(n);
      if (hidden.nodes != 0 || hidden.cycles != 0) into->AddHidden(node_of[n], hidden);
    }
  }
}

}  // namespace

void ProfileMerger::KeepByJob(absl::flat_hash_map<std::string, std::string> job_names) {
  keep_by_job_ = true;
  job_names_ = std::move(job_names);
}

absl::StatusOr<bool> ProfileMerger::Add(absl::string_view key, const profile::Profile& profile) {
  if (keys_.contains(key)) return false;
  absl::Status merged = aggregate_.MergeFromChecked(profile);
  if (!merged.ok()) {
    return absl::Status(merged.code(), absl::StrCat(key, ": ", merged.message()));
  }
  keys_.insert(std::string(key));
  if (keep_by_job_) {
    // by_job_ holds the same sum as aggregate_, so the check above covers it too.
    auto name = job_names_.find(key);
    const Profile::NodeId job = by_job_.Child(
        Profile::kRoot,
        by_job_.InternFrame(name == job_names_.end() ? key : absl::string_view(name->second)));
    MergeUnder(profile, job, &by_job_);
  }
  return true;
}

absl::Status ProfileMerger::AddSerialized(absl::string_view key, absl::string_view serialized) {
  if (keys_.contains(key)) return absl::OkStatus();
  absl::StatusOr<profile::Profile> profile = profile::ParseProfile(serialized);
  if (!profile.ok()) {
    return absl::Status(profile.status().code(),
                        absl::StrCat(key, ": ", profile.status().message()));
  }
  return Add(key, *profile).status();
}

}  // namespace flamefleet::coordinator
