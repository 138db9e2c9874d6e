// The batch lifecycle: what CoordinatorServiceImpl delegates every RPC to.
//
// A BatchManager keeps the live view of every batch (job states, counts, a
// version counter that WatchBatch waits on) and writes each change through to
// the JobStore before it becomes visible. It hands runnable jobs to the
// JobScheduler and turns the scheduler's lease events into job states. When the
// last job of a batch ends it builds the aggregate (ProfileMerger over the
// succeeded jobs' stored profiles, each once), stores it as PROFILE and FOLDED
// artifacts (and the by-job aggregate, from the same merge, as PROFILE), renders the aggregate SVG
// through the RenderClient, and only then marks the batch SUCCEEDED (every job succeeded) or
// FAILED.
//
// It composes three parts, each with its own header: RunHistory
// (coordinator/run_history.h: the batches held, ListBatches, the selection an
// Aggregate merges, retention's candidates, the cycle history), ResultCache
// (coordinator/result_cache.h: jobs answered from an identical earlier run) and
// Artifacts (coordinator/artifacts.h: storing, deriving and rendering
// artifacts). The first two live under the manager's mutex; Artifacts is
// called without it.
//
// Rendering policy: the aggregate SVG is rendered eagerly when the batch ends;
// per-job SVG and folded artifacts are derived lazily from the stored job
// profile on the first FetchArtifact and cached in the store (so a batch of
// 10,000 jobs does not render 10,000 SVGs nobody fetches). A render that fails
// at batch end (renderer down) is retried by the first fetch.
//
//   BatchManager manager(&store, &scheduler, &render_client, &clock, {});
//   FLAMEFLEET_RETURN_IF_ERROR(manager.Recover());  // re-queue, finalize
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string id, manager.SubmitBatch(request));
//   ... workers: LeaseTask / RenewLease / CompleteTask ...
//   FLAMEFLEET_ASSIGN_OR_RETURN(
//       std::string svg,
//       manager.FetchArtifact(id, "", v1::ARTIFACT_FORMAT_SVG));
//
// Thread-safety: every method may be called concurrently. Store writes happen
// under the manager's mutex (so the store always sees changes in order);
// merging and rendering do not.
#ifndef FLAMEFLEET_COORDINATOR_BATCH_MANAGER_H_
#define FLAMEFLEET_COORDINATOR_BATCH_MANAGER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/artifacts.h"
#include "coordinator/clock.h"
#include "coordinator/job_store.h"
#include "coordinator/render_client.h"
#include "coordinator/result_cache.h"
#include "coordinator/run_history.h"
#include "coordinator/scheduler.h"
#include "flamefleet/v1/coordinator.pb.h"

namespace flamefleet::coordinator {

struct BatchManagerOptions {
  // How often a background thread re-queues expired leases (and applies
  // retention). Zero: no thread (tests call SweepExpiredLeases and
  // PruneExpiredBatches themselves).
  absl::Duration sweep_interval = absl::Seconds(1);
  // Retention: ended batches whose end is older than this are removed with
  // their artifacts. Zero: keep everything.
  absl::Duration keep_for = absl::ZeroDuration();
  // Stored artifacts younger than this are never collected (one may be written
  // but not indexed yet).
  absl::Duration garbage_min_age = absl::Hours(1);
  // Deadline of the aggregate SVG render when a batch ends (retries included;
  // coordinator flag --aggregate-render-deadline-ms). The batch has already
  // ended when it starts; on failure (a hung or stopped renderer) the failure
  // is logged and the first FetchArtifact of the aggregate SVG renders it.
  absl::Duration aggregate_render_deadline = kDefaultAggregateRenderDeadline;
};

// A snapshot of a batch for WatchBatch, with the version it was taken at.
struct BatchSnapshot {
  v1::Batch batch;
  uint64_t version = 0;
};

// The largest batch summary FetchArtifact builds (SUMMARY with no job name): 256 MiB.
inline constexpr size_t kMaxBatchSummaryBytes = size_t{256} << 20;

class BatchManager {
 public:
  // None of the pointers is owned; all must outlive the manager.
  BatchManager(JobStore* store, JobScheduler* scheduler, RenderClient* render, Clock* clock,
               BatchManagerOptions options);
  ~BatchManager();
  BatchManager(const BatchManager&) = delete;
  BatchManager& operator=(const BatchManager&) = delete;

  // Loads every batch from the store, re-queues the unfinished jobs of running
  // batches (with their attempt counts) and finalizes running batches whose
  // jobs have all ended. Call once, before serving. Returns the store's error
  // if it cannot be read.
  absl::Status Recover();

  // Creates a batch from a validated request (see ValidateSubmitBatchRequest):
  // computes the library set digest, persists the batch and queues its jobs. A
  // request_id seen before with the same content (internal::SubmitRequestDigest)
  // returns the existing batch's id without creating anything; with different
  // content it is AlreadyExists naming the batch. Returns the batch id, or the
  // store's error.
  absl::StatusOr<std::string> SubmitBatch(const v1::SubmitBatchRequest& request);

  // Returns the batch with its counts, and with per-job statuses if
  // `with_jobs`. NotFound if unknown.
  absl::StatusOr<v1::Batch> GetBatch(absl::string_view batch_id, bool with_jobs);

  // Returns batches matching every label of `request`, its state (UNSPECIFIED =
  // any) and created at or after since_unix_ms, newest first, at most `limit`
  // (0 = 100; above kMaxListedBatches it is clamped); no job lists.
  std::vector<v1::Batch> ListBatches(const v1::ListBatchesRequest& request);

  // Returns the id of the batch's predecessor with the same labels (RunHistory::Previous), ""
  // if it has none. NotFound if `batch_id` is unknown.
  absl::StatusOr<std::string> PreviousBatch(absl::string_view batch_id);

  // Waits up to `timeout` for the batch's version to exceed `after_version`,
  // then returns its current snapshot (the same version if nothing changed in
  // time). Per-job statuses are included when the batch has ended. NotFound if
  // unknown; Unavailable after Shutdown().
  absl::StatusOr<BatchSnapshot> WaitForChange(absl::string_view batch_id, uint64_t after_version,
                                              absl::Duration timeout);

  // Cancels every unfinished job (their leases become invalid) and marks the
  // batch CANCELLED. A batch that already ended is returned unchanged. NotFound
  // if unknown.
  absl::StatusOr<v1::Batch> CancelBatch(absl::string_view batch_id);

  // Returns the bytes of an artifact: the batch aggregate (empty `job_name`) or
  // one job's, as SVG, folded text or a serialized Profile. NotFound for an
  // unknown batch or job; FailedPrecondition while the batch (for the
  // aggregate) or the job is unfinished, for a cancelled batch's aggregate, a
  // job without a profile, or an empty profile's SVG.
  // With `view` BY_JOB it returns the by-job aggregate (each job under a root frame named after
  // it; `job_name` must be empty, else InvalidArgument), with the aggregate's preconditions.
  // Format SUMMARY: a job's serialized JobSummary (FailedPrecondition while it is unfinished or
  // when it has none), or for the batch a serialized BatchSummary of every job, also while the
  // batch runs (ResourceExhausted past kMaxBatchSummaryBytes); a summary's `job` is the name
  // of the job it is served for (a cached result's summary names the job that reused it).
  absl::StatusOr<std::string> FetchArtifact(absl::string_view batch_id, absl::string_view job_name,
                                            v1::ArtifactFormat format,
                                            v1::AggregateView view = v1::AGGREGATE_VIEW_MERGED);

  // Merges the profiles of the succeeded jobs of every ended (SUCCEEDED or
  // FAILED) batch whose labels include request.labels() and that was created
  // in [since_unix_ms, until_unix_ms) into one profile, each job once, and
  // returns it as SVG (through the RenderClient), folded text or a serialized
  // Profile. NotFound if no batch matches; InvalidArgument for a bad format.
  absl::StatusOr<AggregateResult> Aggregate(const v1::AggregateRequest& request);

  // Applies retention (options.keep_for): removes ended batches that ended
  // before now - keep_for from memory and the store, then collects their
  // unreferenced artifacts. Returns the number of batches removed. Called by
  // the background thread.
  size_t PruneExpiredBatches();

  // Long-polls (up to `wait`) for a runnable task and leases it to `worker_id`.
  // The task's libraries are left out if `cached_library_digests` holds their
  // digest. Returns nullopt if nothing was runnable in time.
  // If `gone` is set, the poll ends (nullopt) as soon as it returns true (the
  // client went away); see JobScheduler::LeaseTask.
  absl::StatusOr<std::optional<v1::Task>> LeaseTask(
      absl::string_view worker_id, absl::Duration wait,
      const std::vector<std::string>& cached_library_digests,
      const std::function<bool()>& gone = nullptr);

  // Gives back a task that LeaseTask handed out but that could not be delivered
  // (the worker went away during the long-poll): the job is queued again at
  // once at the front, without counting a lost lease or the attempt. Does
  // nothing if `lease_id` is no longer the live lease.
  void ReleaseTask(const std::string& task_id, const std::string& lease_id);

  // Extends a lease. Returns the lease length, or nullopt if the lease is gone.
  std::optional<absl::Duration> RenewLease(const std::string& task_id, const std::string& lease_id);

  // Records the result of a task: `profile_bytes` is the serialized Profile
  // (may be empty for a failed program). Returns true if accepted, false for a
  // duplicate or stale lease (ignored). Returns InvalidArgument for a malformed
  // task id or an unreadable profile (the lease stays live), or the store's
  // error: then the lease counts as lost (the job is queued again, or FAILED
  // once it lost SchedulerOptions::max_lost_leases leases), so a failing disk
  // never leaves a job RUNNING.
  // `summary_bytes` is the job's serialized JobSummary ("" if none); it must pass
  // runner::DecodeJobSummary, name the job and agree with header.cycles (else InvalidArgument,
  // the lease stays live), and is stored with the job.
  absl::StatusOr<bool> CompleteTask(const v1::TaskHeader& header, const std::string& profile_bytes,
                                    const std::string& summary_bytes = "");

  // Re-queues tasks whose lease expired, and fails those that lost too many.
  // Called by the background thread; tests with a FakeClock call it directly.
  void SweepExpiredLeases();

  // Stops the background thread, wakes long-polls and watchers (they return at
  // once). Idempotent.
  void Shutdown();

 private:
  using Batch = BatchEntry;

  Batch* FindLocked(absl::string_view batch_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The job `job_name` of `batch` once it has ended: NotFound for no such job,
  // FailedPrecondition while it is queued or running.
  absl::StatusOr<const JobRecord*> EndedJobLocked(const Batch& batch, absl::string_view batch_id,
                                                  absl::string_view job_name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FetchArtifact's SUMMARY format.
  absl::StatusOr<std::string> FetchSummary(absl::string_view batch_id, absl::string_view job_name)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::pair<Batch*, JobRecord*>> FindTaskLocked(absl::string_view task_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves `job` to `state` in the counts (the caller persists it).
  void SetJobStateLocked(Batch* batch, JobRecord* job, v1::JobState state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns true if the caller must now call FinalizeBatch (all jobs ended;
  // marked finalizing).
  bool StartFinalizeLocked(Batch* batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds the batch to the history and its succeeded jobs to the result cache
  // and the cycle history; returns its entry.
  Batch* AddBatchLocked(BatchRecord record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Merges and stores the aggregate, marks the batch ended, then renders the
  // aggregate SVG (Artifacts::RenderAggregateSvg).
  // Without the lock.
  void FinalizeBatch(const std::string& batch_id) ABSL_LOCKS_EXCLUDED(mu_);
  void SweeperLoop();
  // The store could not record the result of `header`'s lease (PutArtifact
  // failed): ends the lease as lost (LoseLeaseLocked) and returns the error.
  absl::Status ResultNotStored(const v1::TaskHeader& header, const absl::Status& status)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the job's live lease `lease_id` as lost because the store failed with
  // `status`: re-queued or FAILED (JobScheduler::LoseLease), persisted as far as
  // the store allows. Returns true if the caller must now call FinalizeBatch.
  bool LoseLeaseLocked(Batch* batch, JobRecord* job, const std::string& lease_id,
                       const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Registers a finished job's result for the cache and the cycle history.
  void RememberResultLocked(const Batch& batch, const JobRecord& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  JobStore* const store_;
  JobScheduler* const scheduler_;
  Clock* const clock_;
  const BatchManagerOptions options_;

  Artifacts artifacts_;  // thread-safe; called without mu_

  mutable absl::Mutex mu_;
  RunHistory history_ ABSL_GUARDED_BY(mu_);
  ResultCache cache_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::thread sweeper_;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_BATCH_MANAGER_H_
