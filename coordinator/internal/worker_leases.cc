#include "coordinator/internal/worker_leases.h"

namespace flamefleet::coordinator::internal {

size_t WorkerLeases::PruneAndCountLocked(const std::string& worker_id, absl::Time now) {
  size_t count = 0;
  for (auto it = by_task_.begin(); it != by_task_.end();) {
    if (it->second.expires <= now) {
      by_task_.erase(it++);
      continue;
    }
    if (it->second.worker_id == worker_id) ++count;
    ++it;
  }
  auto reserved = reserved_.find(worker_id);
  return count + (reserved == reserved_.end() ? 0 : reserved->second);
}

bool WorkerLeases::TryReserve(const std::string& worker_id, absl::Time now) {
  if (max_per_worker_ == 0) return true;
  absl::MutexLock lock(&mu_);
  if (PruneAndCountLocked(worker_id, now) >= max_per_worker_) return false;
  ++reserved_[worker_id];
  return true;
}

void WorkerLeases::CancelReservation(const std::string& worker_id) {
  if (max_per_worker_ == 0) return;
  absl::MutexLock lock(&mu_);
  auto it = reserved_.find(worker_id);
  if (it == reserved_.end()) return;
  if (--it->second == 0) reserved_.erase(it);
}

void WorkerLeases::Commit(const std::string& worker_id, const std::string& task_id,
                          const std::string& lease_id, absl::Time expires) {
  if (max_per_worker_ == 0) return;
  absl::MutexLock lock(&mu_);
  auto reserved = reserved_.find(worker_id);
  if (reserved != reserved_.end() && --reserved->second == 0) reserved_.erase(reserved);
  by_task_[task_id] = Held{worker_id, lease_id, expires};
}

void WorkerLeases::Renew(const std::string& task_id, const std::string& lease_id,
                         absl::Time expires) {
  if (max_per_worker_ == 0) return;
  absl::MutexLock lock(&mu_);
  auto it = by_task_.find(task_id);
  if (it != by_task_.end() && it->second.lease_id == lease_id) it->second.expires = expires;
}

void WorkerLeases::End(const std::string& task_id, const std::string& lease_id) {
  if (max_per_worker_ == 0) return;
  absl::MutexLock lock(&mu_);
  auto it = by_task_.find(task_id);
  if (it != by_task_.end() && it->second.lease_id == lease_id) by_task_.erase(it);
}

size_t WorkerLeases::CountForTest(const std::string& worker_id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  return PruneAndCountLocked(worker_id, now);
}

}  // namespace flamefleet::coordinator::internal
