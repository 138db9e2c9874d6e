// Builds a batch's aggregate profile: the exact (integer) sum of the profiles of its succeeded
// jobs, each job counted once even if a retry delivered its result twice. On request it also
// builds the by-job aggregate (aggregate-by-job.svg): the same sum with each job's stacks under a
// root frame named after the job, so the root's children are the jobs and their widths the jobs'
// cycles. Both come from the same Add calls, so both count each job exactly once.
//
//   ProfileMerger merger;
//   FLAMEFLEET_RETURN_IF_ERROR(merger.Add("7/0", profile_a).status());
//   merger.Add("7/0", profile_a);   // ignored (false): already counted
//   FLAMEFLEET_RETURN_IF_ERROR(merger.Add("7/1", profile_b).status());
//   profile::Profile total = std::move(merger).TakeAggregate();   // a + b
//
//   ProfileMerger by_job;
//   by_job.KeepByJob({{"7/0", "a.masm"}, {"7/1", "b.masm"}});
//   ... Add as above ...
//   by_job.by_job();   // a.masm;<a's stacks>, b.masm;<b's stacks>
//
// Thread-safety: a plain value; needs external synchronisation if shared.
#ifndef FLAMEFLEET_COORDINATOR_PROFILE_MERGER_H_
#define FLAMEFLEET_COORDINATOR_PROFILE_MERGER_H_

#include <cstddef>
#include <string>

#include "absl/container/flat_hash_map.h"
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

  // Makes every later Add also add the profile to by_job() under a root frame named
  // `job_names[key]` (the key itself if it has no entry). Call before the first Add.
  void KeepByJob(absl::flat_hash_map<std::string, std::string> job_names);

  // Returns the number of profiles added.
  size_t count() const { return keys_.size(); }
  // Returns the sum so far.
  const profile::Profile& aggregate() const { return aggregate_; }
  // Moves the sum out.
  profile::Profile TakeAggregate() && { return std::move(aggregate_); }
  // Returns the by-job sum so far (empty unless KeepByJob was called).
  const profile::Profile& by_job() const { return by_job_; }

 private:
  absl::flat_hash_set<std::string> keys_;
  profile::Profile aggregate_;
  bool keep_by_job_ = false;
  absl::flat_hash_map<std::string, std::string> job_names_;
  profile::Profile by_job_;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_PROFILE_MERGER_H_
