// The history of runs: every batch the coordinator holds in memory, oldest first, and what is
// asked of many batches at once.
//
// RunHistory owns one BatchEntry per batch (its record plus the live counts, version and
// finalizing flag that BatchManager maintains), finds batches by id and by request id, and
// answers the queries that look across batches: ListBatches' filter, the ended batches and
// succeeded jobs an Aggregate merges, which ended batches retention may remove, and the cycles
// of each program's latest run (the scheduler's cost estimate for its next run). It does no I/O;
// BatchManager does the store writes and the merging.
//
//   RunHistory history;
//   BatchEntry* entry = history.Add(std::move(record));  // created or recovered batch
//   history.RecordCycles(entry->record.jobs[0]);        // once the job succeeded
//   std::vector<v1::Batch> listed = history.List(list_request);
//   for (const std::string& id : history.EndedBefore(cutoff)) { ... }
//
// Thread-safety: a plain value; the owner synchronises (BatchManager holds its mutex).
#ifndef FLAMEFLEET_COORDINATOR_RUN_HISTORY_H_
#define FLAMEFLEET_COORDINATOR_RUN_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "coordinator/job_store.h"
#include "flamefleet/v1/coordinator.pb.h"

namespace flamefleet::coordinator {

// Most batches one ListBatches answers, whatever its `limit`: with every label at its limit
// (internal::SubmitLimits) a batch is about 64 KiB, so the answer stays under 64 MiB.
inline constexpr size_t kMaxListedBatches = 500;

// Returns the task id "<batch_id>/<index>" of job `index` of batch `batch_id`.
std::string TaskId(absl::string_view batch_id, uint32_t index);

// One batch as the coordinator holds it in memory. `record` is what the store holds; the rest
// is derived from it and kept up to date by BatchManager.
struct BatchEntry {
  BatchRecord record;
  absl::flat_hash_map<std::string, uint32_t> job_by_name;  // job name -> index
  uint32_t counts[6] = {0, 0, 0, 0, 0, 0};                 // jobs by v1::JobState
  uint64_t aggregate_cycles = 0;  // sum of the cycles of the succeeded jobs
  uint64_t version = 1;           // bumped on every visible change (WatchBatch)
  bool finalizing = false;        // the aggregate is being built

  // Returns the batch as the API shows it: state, labels, times and counts, and the per-job
  // statuses if `with_jobs`.
  v1::Batch ToProto(bool with_jobs) const;
};

// The batches and jobs an Aggregate merges (RunHistory::SelectForAggregate).
struct AggregateSelection {
  std::vector<std::string> batch_ids;  // oldest first
  // (task id, profile artifact digest) of each succeeded job of those batches.
  std::vector<std::pair<std::string, std::string>> profiles;
};

class RunHistory {
 public:
  // Adds a batch (just created, or loaded by recovery) after every batch held so far, counts
  // its jobs by state, and indexes it by id and by request id (if any). A numeric id at or
  // above next_id() moves next_id() past it. The id must be new. Returns the entry, owned by
  // the history and valid until Remove.
  BatchEntry* Add(BatchRecord record);

  // Returns the batch `batch_id`, or null if it is not held.
  BatchEntry* Find(absl::string_view batch_id);
  const BatchEntry* Find(absl::string_view batch_id) const;

  // Returns the id of the batch that was created with `request_id`, or null if none is held.
  const std::string* FindRequest(absl::string_view request_id) const;

  // Returns the id the next new batch gets (one above the highest numeric id added so far).
  uint64_t next_id() const { return next_id_; }

  // Returns the number of batches held.
  size_t size() const { return order_.size(); }

  // Records `job`'s cycles as those of the latest run of its program (and of its name).
  void RecordCycles(const JobRecord& job);

  // Returns the cost estimate for queueing `job`: the cycles of the latest run of its
  // program, else of the latest job with its name (a changed program keeps the estimate of
  // its previous version), else kUnknownCost (coordinator/scheduler.h).
  uint64_t ExpectedCost(const JobRecord& job) const;

  // Returns the batches matching every label of `request`, its state (UNSPECIFIED = any) and
  // created at or after since_unix_ms, newest first, at most `limit` (0 = 100; above
  // kMaxListedBatches it is clamped); no job lists.
  std::vector<v1::Batch> List(const v1::ListBatchesRequest& request) const;

  // Returns the ended (SUCCEEDED or FAILED) batches whose labels include request.labels() and
  // that were created in [since_unix_ms, until_unix_ms) (until 0 = no end), oldest first, with
  // the profile of each of their succeeded jobs. Empty batch_ids if none matches.
  AggregateSelection SelectForAggregate(const v1::AggregateRequest& request) const;

  // Returns the id of the predecessor of batch `batch_id`: the newest batch held before it
  // (in creation order) that ended SUCCEEDED or FAILED (it has an aggregate) and has exactly
  // the same labels (two unlabelled batches count as the same suite). "" if there is none or
  // `batch_id` is not held. What the web view's deltas and "diff against the previous" use.
  std::string Previous(absl::string_view batch_id) const;

  // Returns the ids, oldest first, of the ended batches (SUCCEEDED, FAILED or CANCELLED) not
  // being finalized that finished before `cutoff`: what retention removes.
  std::vector<std::string> EndedBefore(absl::Time cutoff) const;

  // Forgets the batches `batch_ids` and their request ids. Entries of them become invalid.
  // The cycle history is kept.
  void Remove(const absl::flat_hash_set<std::string>& batch_ids);

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<BatchEntry>> batches_;
  std::vector<std::string> order_;  // batch ids, oldest first
  absl::flat_hash_map<std::string, std::string> by_request_id_;
  uint64_t next_id_ = 1;
  // Cycle history: program digest (and job name) -> cycles of the latest run.
  absl::flat_hash_map<std::string, uint64_t> cycles_by_program_;
  absl::flat_hash_map<std::string, uint64_t> cycles_by_name_;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_RUN_HISTORY_H_
