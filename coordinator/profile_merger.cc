#include "coordinator/profile_merger.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "profile/profile_proto.h"

namespace flamefleet::coordinator {

bool ProfileMerger::Add(absl::string_view key,
                        const profile::Profile& profile) {
  if (!keys_.insert(std::string(key)).second) return false;
  aggregate_.MergeFrom(profile);
  return true;
}

absl::Status ProfileMerger::AddSerialized(absl::string_view key,
                                          absl::string_view serialized) {
  if (keys_.contains(key)) return absl::OkStatus();
  absl::StatusOr<profile::Profile> profile = profile::ParseProfile(serialized);
  if (!profile.ok()) {
    return absl::Status(profile.status().code(),
                        absl::StrCat(key, ": ", profile.status().message()));
  }
  Add(key, *profile);
  return absl::OkStatus();
}

}  // namespace flamefleet::coordinator
