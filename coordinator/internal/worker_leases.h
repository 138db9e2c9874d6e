// Counts the unexpired leases each worker holds, for the --max-leases-per-worker limit of
// LeaseTask. The service reserves a slot before it long-polls (so concurrent polls of one worker
// cannot overshoot), then records the lease it handed out or gives the slot back. A lease stops
// counting when its task completes, or when it expires without a renewal (also after a cancel,
// which makes renewals fail). Worker ids are what workers report; the limit protects against
// runaway workers, not against a client that lies about its id.
//
//   WorkerLeases leases(/*max_per_worker=*/4);
//   if (!leases.TryReserve("w1", absl::Now())) return ResourceExhausted(...);
//   ... lease = manager->LeaseTask(...) ...
//   lease ? leases.Commit("w1", task_id, lease_id, absl::Now() + lease_length)
//         : leases.CancelReservation("w1");
//
// Thread-safe.
#ifndef FLAMEFLEET_COORDINATOR_INTERNAL_WORKER_LEASES_H_
#define FLAMEFLEET_COORDINATOR_INTERNAL_WORKER_LEASES_H_

#include <cstddef>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace flamefleet::coordinator::internal {

class WorkerLeases {
 public:
  // `max_per_worker` 0 = unlimited (every call succeeds and nothing is tracked).
  explicit WorkerLeases(size_t max_per_worker) : max_per_worker_(max_per_worker) {}

  // Reserves a slot for a lease to `worker_id` if it holds fewer than the limit (unexpired
  // leases at `now` plus reservations). Returns false at the limit.
  bool TryReserve(const std::string& worker_id, absl::Time now);
  // Gives back a reservation that yielded no lease.
  void CancelReservation(const std::string& worker_id);
  // Turns a reservation into a lease that counts until `expires`.
  void Commit(const std::string& worker_id, const std::string& task_id, const std::string& lease_id,
              absl::Time expires);
  // Extends the lease (if it is the one recorded for the task).
  void Renew(const std::string& task_id, const std::string& lease_id, absl::Time expires);
  // Stops counting the lease (if it is the one recorded for the task).
  void End(const std::string& task_id, const std::string& lease_id);

  // Returns the leases counted for `worker_id` at `now` (reservations included).
  size_t CountForTest(const std::string& worker_id, absl::Time now);

 private:
  struct Held {
    std::string worker_id;
    std::string lease_id;
    absl::Time expires;
  };
  // Drops expired leases; returns the count of `worker_id`.
  size_t PruneAndCountLocked(const std::string& worker_id, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_per_worker_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Held> by_task_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, size_t> reserved_ ABSL_GUARDED_BY(mu_);
};

}  // namespace flamefleet::coordinator::internal

#endif  // FLAMEFLEET_COORDINATOR_INTERNAL_WORKER_LEASES_H_
