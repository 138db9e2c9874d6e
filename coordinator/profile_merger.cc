#include "coordinator/profile_merger.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "profile/profile_proto.h"

namespace flamefleet::coordinator {

absl::StatusOr<bool> ProfileMerger::Add(absl::string_view key, const profile::Profile& profile) {
  if (keys_.contains(key)) return false;
  absl::Status merged = aggregate_.MergeFromChecked(profile);
  if (!merged.ok()) {
    return absl::Status(merged.code(), absl::StrCat(key, ": ", merged.message()));
  }
  keys_.insert(std::string(key));
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
