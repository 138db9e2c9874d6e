// Artifacts: what the coordinator derives from stored job profiles and keeps in the JobStore.
//
// A batch's results are serialized profiles stored by digest (one per succeeded job). From
// them Artifacts derives, stores and indexes everything the API hands out: the batch aggregate
// as PROFILE and FOLDED artifacts when the batch ends (StoreAggregate) and its SVG through the
// RenderClient within a deadline (RenderAggregateSvg); per-job and not yet rendered aggregate
// artifacts on first fetch (Fetch: folded text or an SVG from the stored profile, then cached in
// the store); and the cross-batch aggregate of an Aggregate call (Aggregate), which is not
// stored. It holds no batch state: callers (BatchManager) say which profiles and names to use.
//
//   Artifacts artifacts(&store, &render_client, kDefaultAggregateRenderDeadline);
//   ProfileMerger merger;
//   FLAMEFLEET_RETURN_IF_ERROR(artifacts.MergeStoredProfiles({{"7/0", digest}}, &merger));
//   FLAMEFLEET_RETURN_IF_ERROR(artifacts.StoreAggregate("7", merger.aggregate()));
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string folded,
//       artifacts.Fetch("7", "", v1::ARTIFACT_FORMAT_FOLDED, "", {}));
//
// Thread-safety: every method may be called concurrently (the store and the render client are
// thread-safe); none takes a lock of its own, so callers must not hold theirs (store I/O and
// render calls happen inside).
#ifndef FLAMEFLEET_COORDINATOR_ARTIFACTS_H_
#define FLAMEFLEET_COORDINATOR_ARTIFACTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/job_store.h"
#include "coordinator/profile_merger.h"
#include "coordinator/render_client.h"
#include "flamefleet/v1/coordinator.pb.h"
#include "profile/profile.h"

namespace flamefleet::coordinator {

// Default of BatchManagerOptions::aggregate_render_deadline.
inline constexpr absl::Duration kDefaultAggregateRenderDeadline = absl::Seconds(5);

// What Aggregate merged, and the artifact in the requested format.
struct AggregateResult {
  std::vector<std::string> batch_ids;  // oldest first
  uint32_t jobs = 0;
  uint64_t cycles = 0;
  std::string data;
};

// The job name under which a batch's by-job aggregate is indexed in the store: never a real
// job's name (a job name is a relative path; SubmitBatch refuses a leading '/').
inline constexpr char kByJobArtifactKey[] = "/by-job";

// A succeeded job's stored profile, for the by-job aggregate.
struct StoredJobProfile {
  std::string task_id;
  std::string job_name;
  std::string digest;
};

// Returns the render options of batch `batch`'s aggregate SVG of `jobs` jobs and `cycles`
// cycles: titled with the batch's options.title (default "flamefleet batch <id>").
v1::RenderOptions BatchRenderOptions(const BatchRecord& batch, size_t jobs, uint64_t cycles);

// Returns the render options of the SVG of job `job_name` (titled with its name).
v1::RenderOptions JobRenderOptions(const std::string& job_name);

class Artifacts {
 public:
  // Neither pointer is owned; both must outlive the object. `aggregate_render_deadline`
  // bounds RenderAggregateSvg (retries included).
  Artifacts(JobStore* store, RenderClient* render, absl::Duration aggregate_render_deadline);
  Artifacts(const Artifacts&) = delete;
  Artifacts& operator=(const Artifacts&) = delete;

  // Adds each (task id, profile artifact digest) of `profiles` from the store to `merger`
  // (not null, not kept), each task once. The first unreadable or unmergeable profile is the
  // error, its message prefixed with its task id; the code is the store's (e.g. NotFound,
  // DataLoss) or the merger's (InvalidArgument).
  absl::Status MergeStoredProfiles(const std::vector<std::pair<std::string, std::string>>& profiles,
                                   ProfileMerger* merger) const;

  // Stores `aggregate` as the PROFILE and FOLDED artifacts of batch `batch_id` and indexes
  // both. Returns the first error of the store (or of writing the folded text).
  absl::Status StoreAggregate(const std::string& batch_id, const profile::Profile& aggregate);

  // Stores `by_job` (ProfileMerger::by_job) as the PROFILE artifact of batch `batch_id`'s by-job
  // aggregate and indexes it. Returns the first error of the store.
  absl::Status StoreByJobAggregate(const std::string& batch_id, const profile::Profile& by_job);

  // Returns the `format` artifact of batch `batch_id`'s by-job aggregate: the stored one, else
  // derived from its stored profile (SVGs drawn with `render_options`), else, if there is no
  // such profile, built from `jobs` (each task once), stored, and derived. Errors as Fetch and
  // MergeStoredProfiles.
  absl::StatusOr<std::string> FetchByJob(const std::string& batch_id, v1::ArtifactFormat format,
                                         const std::vector<StoredJobProfile>& jobs,
                                         const v1::RenderOptions& render_options);

  // Renders the aggregate SVG of the ended batch `batch` (its id and options are used) from
  // `aggregate` of `jobs` jobs, within the aggregate render deadline, and stores and indexes
  // it. A failure (renderer down or hung, store error) is logged, not returned: Fetch renders
  // it on demand.
  void RenderAggregateSvg(const BatchRecord& batch, const profile::Profile& aggregate, size_t jobs);

  // Returns the `format` artifact of job `job_name` of batch `batch_id` ("" = the aggregate):
  // the stored one if indexed, else derived from the profile `profile_digest` ("" = the
  // indexed PROFILE artifact) and then stored and indexed. SVGs are rendered with
  // `render_options`. Errors: the store's (NotFound if there is no profile), InvalidArgument
  // for an unknown format or an unreadable profile, FailedPrecondition for the SVG of a profile
  // with no cycles, the render client's.
  absl::StatusOr<std::string> Fetch(const std::string& batch_id, const std::string& job_name,
                                    v1::ArtifactFormat format, std::string profile_digest,
                                    const v1::RenderOptions& render_options);

  // Merges `profiles` (as MergeStoredProfiles) of the batches `batch_ids` into one profile
  // and returns it in request.format() (an SVG titled request.title(), default "flamefleet
  // aggregate"), with what it merged. Errors: those of MergeStoredProfiles, FailedPrecondition
  // for the SVG of no cycles, the render client's.
  absl::StatusOr<AggregateResult> Aggregate(
      const v1::AggregateRequest& request, std::vector<std::string> batch_ids,
      const std::vector<std::pair<std::string, std::string>>& profiles) const;

 private:
  // Derives the `format` artifact from the profile `profile_digest`, stores and indexes it.
  absl::StatusOr<std::string> Derive(const std::string& batch_id, const std::string& job_name,
                                     v1::ArtifactFormat format, const std::string& profile_digest,
                                     const v1::RenderOptions& render_options);

  JobStore* const store_;
  RenderClient* const render_;
  const absl::Duration aggregate_render_deadline_;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_ARTIFACTS_H_
