// The queue of runnable tasks and the leases held on them by workers.
//
// A task (an opaque id, "<batch>/<job index>" in practice) is Enqueue'd, handed
// to a worker by LeaseTask together with a fresh lease id, kept alive by
// RenewLease, and ended by exactly one accepted Complete (the lease id must be
// the task's live one; duplicates and stale leases are rejected). A lease that
// is not renewed expires: SweepExpired puts the task back in the queue, or
// fails it once it has lost `max_lost_leases` leases ("worker lost 3 times
// (last: lease expired)"). Cancel forgets tasks, which invalidates their
// leases. Time comes from a Clock, so tests drive expiry with a FakeClock; only
// the long-poll wait of LeaseTask is real time.
//
//   JobScheduler scheduler(&clock, {.lease_duration = absl::Seconds(10)});
//   scheduler.Enqueue("7/0", /*attempts=*/0);
//   std::optional<Lease> lease = scheduler.LeaseTask(absl::Seconds(5));
//   ... worker runs it, calling RenewLease(lease->task_id, lease->lease_id) ...
//   if (scheduler.Complete(lease->task_id, lease->lease_id)) {
//     // the one accepted result
//   }
//
// The scheduler knows nothing of batches or storage: callers (BatchManager)
// persist the state changes it reports. Thread-safe: every method may be called
// from any thread.
#ifndef FLAMEFLEET_COORDINATOR_SCHEDULER_H_
#define FLAMEFLEET_COORDINATOR_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/clock.h"

namespace flamefleet::coordinator {

struct SchedulerOptions {
  // How long a lease lives without a renewal.
  absl::Duration lease_duration = absl::Seconds(10);
  // A task that lost this many leases (worker died or hung) fails instead of
  // being re-queued.
  uint32_t max_lost_leases = 3;
  // Lease the task with the largest expected cost first (tasks with no estimate
  // before all others, ties in submission order). False: submission order.
  bool longest_first = true;
};

// How often a waiting LeaseTask checks its `gone` predicate.
inline constexpr absl::Duration kGoneCheckInterval = absl::Milliseconds(200);

// Expected cost of a task with no history: runs before every estimated task.
inline constexpr uint64_t kUnknownCost = ~uint64_t{0};

// A task handed to a worker.
struct Lease {
  std::string task_id;
  std::string lease_id;
  uint32_t attempt = 0;  // 1-based: the attempts made so far, this one included
  absl::Time expires;
};

// A lease that SweepExpired found expired.
struct ExpiredLease {
  std::string task_id;
  uint32_t attempt = 0;  // the attempt whose lease expired
  bool failed = false;   // true: the task is dropped and should fail with `reason`
  std::string reason;    // for failed tasks
};

class JobScheduler {
 public:
  // `clock` is not owned and must outlive the scheduler.
  JobScheduler(Clock* clock, SchedulerOptions options);
  JobScheduler(const JobScheduler&) = delete;
  JobScheduler& operator=(const JobScheduler&) = delete;

  // Adds a runnable task that has had `attempts` leases before (0 for a new
  // task; restored tasks keep their count) and wakes one waiting LeaseTask.
  // `expected_cost` (e.g. cycles of an earlier run) orders the queue when
  // longest_first is set. Returns AlreadyExists if the task is already queued
  // or leased.
  absl::Status Enqueue(const std::string& task_id, uint32_t attempts,
                       uint64_t expected_cost = kUnknownCost);

  // Leases the next queued task (largest expected cost first, or the oldest),
  // waiting up to `wait` (real time) for one to appear. A re-queued task keeps
  // its place. Returns nullopt if none came in time, after Shutdown(), or as
  // soon as `gone` (if set; e.g. "the client cancelled the call") returns true:
  // it is checked at least every kGoneCheckInterval while waiting and again just
  // before a task is taken, so a dead poll is never handed a task. `gone` is
  // called only from the calling thread, with the scheduler's lock held; it must
  // be cheap and not block.
  std::optional<Lease> LeaseTask(absl::Duration wait, const std::function<bool()>& gone = nullptr);

  // Returns true if `lease_id` is the task's live lease.
  bool IsLeased(const std::string& task_id, const std::string& lease_id) const;

  // Ends the live lease as lost, as an expiry would (the worker delivered a
  // result that could not be recorded, e.g. the disk is full): the lost lease is
  // counted and the task re-queued in its old place, or dropped once it lost
  // max_lost_leases (failed = true, with `reason` and the count). Returns nullopt
  // if `lease_id` is not the task's live lease.
  std::optional<ExpiredLease> LoseLease(const std::string& task_id, const std::string& lease_id,
                                        absl::string_view reason);

  // Extends the lease by lease_duration from now. Returns the new expiry, or
  // nullopt if `lease_id` is not the task's live lease (expired, completed,
  // cancelled, unknown).
  std::optional<absl::Time> RenewLease(const std::string& task_id, const std::string& lease_id);

  // Accepts the result of the task if `lease_id` is its live lease, and forgets
  // the task. Returns true exactly once per task; false for duplicates, stale
  // leases and unknown tasks. An expired lease that was not swept yet is still
  // accepted.
  bool Complete(const std::string& task_id, const std::string& lease_id);

  // Puts a leased task back at the front of the queue (of its rank) without
  // counting a lost lease or the attempt (the lease was never delivered: the
  // client went away, or its start could not be recorded). Returns false if
  // `lease_id` is not the live lease.
  bool Release(const std::string& task_id, const std::string& lease_id);

  // Forgets the tasks (queued or leased): their leases stop being renewable or
  // completable. Unknown ids are ignored.
  void Cancel(const std::vector<std::string>& task_ids);

  // Re-queues every task whose lease expired at or before Now(), or drops it
  // once it lost max_lost_leases leases, and returns what it did, in expiry
  // order.
  std::vector<ExpiredLease> SweepExpired();

  // Returns the earliest lease expiry (nullopt if nothing is leased).
  std::optional<absl::Time> NextExpiry() const;

  // Wakes every waiting LeaseTask; later calls return nullopt at once.
  void Shutdown();

  size_t queued() const;
  size_t leased() const;
  const SchedulerOptions& options() const { return options_; }

 private:
  enum class TaskState : uint8_t { kQueued, kLeased };
  // Queue order: larger rank first, then smaller sequence number.
  struct QueueKey {
    uint64_t rank = 0;
    int64_t seq = 0;
    friend bool operator<(const QueueKey& a, const QueueKey& b) {
      return a.rank != b.rank ? a.rank > b.rank : a.seq < b.seq;
    }
  };
  struct TaskEntry {
    TaskState state = TaskState::kQueued;
    uint32_t attempts = 0;     // leases handed out
    uint32_t lost_leases = 0;  // leases that expired
    std::string lease_id;      // live lease while kLeased
    absl::Time expires;
    QueueKey key;  // its place in queue_ while kQueued
  };
  // Puts a task (already in tasks_) into the queue at `key`.
  void QueueLocked(const std::string& task_id, TaskEntry& task, QueueKey key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  bool HasQueuedTask() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns the task if it is leased under `lease_id`, else null.
  TaskEntry* FindLeased(const std::string& task_id, const std::string& lease_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a lost lease of a leased task: re-queues it, or drops it at the
  // limit. `reason` describes the last loss.
  ExpiredLease LoseLocked(const std::string& task_id, absl::string_view reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string NewLeaseId() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const SchedulerOptions options_;
  const std::string lease_prefix_;  // random per scheduler, so lease ids never repeat

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, TaskEntry> tasks_ ABSL_GUARDED_BY(mu_);
  // Queued task ids in lease order.
  std::map<QueueKey, std::string> queue_ ABSL_GUARDED_BY(mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;   // for the back of the queue
  int64_t front_seq_ ABSL_GUARDED_BY(mu_) = 0;  // for Release (the front)
  uint64_t next_lease_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_SCHEDULER_H_
