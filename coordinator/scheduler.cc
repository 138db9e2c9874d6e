#include "coordinator/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace flamefleet::coordinator {
namespace {

std::string RandomPrefix() {
  absl::BitGen gen;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

}  // namespace

JobScheduler::JobScheduler(Clock* clock, SchedulerOptions options)
    : clock_(clock), options_(options), lease_prefix_(RandomPrefix()) {}

absl::Status JobScheduler::Enqueue(const std::string& task_id, uint32_t attempts,
                                   uint64_t expected_cost) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = tasks_.try_emplace(task_id);
  if (!inserted) return absl::AlreadyExistsError(absl::StrCat("task ", task_id, " is known"));
  it->second.attempts = attempts;
  QueueLocked(task_id, it->second,
              QueueKey{options_.longest_first ? expected_cost : 0, next_seq_++});
  return absl::OkStatus();
}

void JobScheduler::QueueLocked(const std::string& task_id, TaskEntry& task, QueueKey key) {
  task.state = TaskState::kQueued;
  task.lease_id.clear();
  task.key = key;
  queue_.emplace(key, task_id);
}

bool JobScheduler::HasQueuedTask() const { return shutdown_ || !queue_.empty(); }

std::string JobScheduler::NewLeaseId() { return absl::StrCat(lease_prefix_, "-", ++next_lease_); }

std::optional<Lease> JobScheduler::LeaseTask(absl::Duration wait,
                                             const std::function<bool()>& gone) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + wait;
  // Woken by Enqueue/Release/Shutdown; the slices notice a client that went
  // away while nothing else happens. `gone` runs only in this thread (the
  // condition is evaluated by whichever thread unlocks).
  while (true) {
    const bool ready = mu_.AwaitWithDeadline(absl::Condition(this, &JobScheduler::HasQueuedTask),
                                             std::min(deadline, absl::Now() + kGoneCheckInterval));
    if (gone && gone()) return std::nullopt;
    if (ready || absl::Now() >= deadline) break;
  }
  if (shutdown_) return std::nullopt;
  if (!queue_.empty()) {
    std::string task_id = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    TaskEntry& task = tasks_.at(task_id);
    task.state = TaskState::kLeased;
    ++task.attempts;
    task.lease_id = NewLeaseId();
    task.expires = clock_->Now() + options_.lease_duration;
    return Lease{std::move(task_id), task.lease_id, task.attempts, task.expires};
  }
  return std::nullopt;
}

std::optional<absl::Time> JobScheduler::RenewLease(const std::string& task_id,
                                                   const std::string& lease_id) {
  absl::MutexLock lock(&mu_);
  TaskEntry* task = FindLeased(task_id, lease_id);
  if (task == nullptr) return std::nullopt;
  task->expires = clock_->Now() + options_.lease_duration;
  return task->expires;
}

JobScheduler::TaskEntry* JobScheduler::FindLeased(const std::string& task_id,
                                                  const std::string& lease_id) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second.state != TaskState::kLeased ||
      it->second.lease_id != lease_id) {
    return nullptr;
  }
  return &it->second;
}

bool JobScheduler::Complete(const std::string& task_id, const std::string& lease_id) {
  absl::MutexLock lock(&mu_);
  if (FindLeased(task_id, lease_id) == nullptr) return false;
  tasks_.erase(task_id);
  return true;
}

bool JobScheduler::Release(const std::string& task_id, const std::string& lease_id) {
  absl::MutexLock lock(&mu_);
  TaskEntry* task = FindLeased(task_id, lease_id);
  if (task == nullptr) return false;
  if (task->attempts > 0) --task->attempts;  // never delivered: not an attempt
  QueueLocked(task_id, *task, QueueKey{task->key.rank, --front_seq_});
  return true;
}

bool JobScheduler::IsLeased(const std::string& task_id, const std::string& lease_id) const {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  return it != tasks_.end() && it->second.state == TaskState::kLeased &&
         it->second.lease_id == lease_id;
}

std::optional<ExpiredLease> JobScheduler::LoseLease(const std::string& task_id,
                                                    const std::string& lease_id,
                                                    absl::string_view reason) {
  absl::MutexLock lock(&mu_);
  if (FindLeased(task_id, lease_id) == nullptr) return std::nullopt;
  return LoseLocked(task_id, reason);
}

ExpiredLease JobScheduler::LoseLocked(const std::string& task_id, absl::string_view reason) {
  auto it = tasks_.find(task_id);
  TaskEntry& task = it->second;
  ++task.lost_leases;
  ExpiredLease event{task_id, task.attempts, false, ""};
  if (task.lost_leases >= options_.max_lost_leases) {
    event.failed = true;
    event.reason = absl::StrCat("worker lost ", task.lost_leases, " times (last: ", reason, ")");
    tasks_.erase(it);
  } else {
    // Back in its old place: it keeps its rank and sequence number.
    QueueLocked(task_id, task, task.key);
  }
  return event;
}

void JobScheduler::Cancel(const std::vector<std::string>& task_ids) {
  absl::MutexLock lock(&mu_);
  for (const std::string& task_id : task_ids) {
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) continue;
    if (it->second.state == TaskState::kQueued) queue_.erase(it->second.key);
    tasks_.erase(it);
  }
}

std::vector<ExpiredLease> JobScheduler::SweepExpired() {
  absl::MutexLock lock(&mu_);
  absl::Time now = clock_->Now();
  std::vector<std::pair<absl::Time, std::string>> expired;
  for (const auto& [task_id, task] : tasks_) {
    if (task.state == TaskState::kLeased && task.expires <= now) {
      expired.emplace_back(task.expires, task_id);
    }
  }
  std::sort(expired.begin(), expired.end());
  std::vector<ExpiredLease> result;
  for (auto& [expires, task_id] : expired) {
    result.push_back(LoseLocked(task_id, "lease expired"));
  }
  return result;
}

std::optional<absl::Time> JobScheduler::NextExpiry() const {
  absl::MutexLock lock(&mu_);
  std::optional<absl::Time> next;
  for (const auto& [task_id, task] : tasks_) {
    if (task.state == TaskState::kLeased && (!next || task.expires < *next)) {
      next = task.expires;
    }
  }
  return next;
}

void JobScheduler::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
}

size_t JobScheduler::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t JobScheduler::leased() const {
  absl::MutexLock lock(&mu_);
  return tasks_.size() - queue_.size();
}

}  // namespace flamefleet::coordinator
