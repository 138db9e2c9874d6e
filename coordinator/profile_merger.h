// Builds a batch's aggregate profile: the exact (integer) sum of the profiles of its succeeded
// jobs, each job counted once even if a retry delivered its result twice.
//
//   ProfileMerger merger;
//   FLAMEFLEET_RETURN_IF_ERROR(merger.Add("7/0", profile_a).status());
//   merger.Add("7/0", profile_a);   // ignored (false): already counted
//   FLAMEFLEET_RETURN_IF_ERROR(merger.Add("7/1", profile_b).status());
//   profile::Profile total = std::move(merger).TakeAggregate();   // a + b
//
// Thread-safety: a plain value; needs external synchronisation if shared.
#ifndef FLAMEFLEET_COORDINATOR_PROFILE_MERGER_H_
#define FLAMEFLEET_COORDINATOR_PROFILE_MERGER_H_

#include <cstddef>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "profile/profile.h"

namespace flamefleet::coordinator {

class ProfileMerger {
 public:
  // Adds `profile` as the result of `key` (a task id) unless `key` was added before. Returns true
  // if it was added, false if `key` was already counted, and InvalidArgument (prefixed with `key`,
  // nothing added) if the sum would overflow 64 bits.
  absl::StatusOr<bool> Add(absl::string_view key, const profile::Profile& profile);

  // Parses `serialized` (flamefleet.v1.Profile bytes) and adds it as Add() does. Returns
  // InvalidArgument (prefixed with `key`) if the bytes are not a valid profile or the sum would
  // overflow; nothing is added then.
  absl::Status AddSerialized(absl::string_view key, absl::string_view serialized);

  // Returns the number of profiles added.
  size_t count() const { return keys_.size(); }
  // Returns the sum so far.
  const profile::Profile& aggregate() const { return aggregate_; }
  // Moves the sum out.
  profile::Profile TakeAggregate() && { return std::move(aggregate_); }

 private:
  absl::flat_hash_set<std::string> keys_;
  profile::Profile aggregate_;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_PROFILE_MERGER_H_
