#include "coordinator/batch_manager.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "coordinator/internal/digest.h"
#include "coordinator/internal/validation.h"
#include "coordinator/profile_merger.h"
#include "profile/profile_proto.h"
#include "runner/runner.h"
#include "vm/dialect.h"

namespace flamefleet::coordinator {
namespace {

bool IsTerminal(v1::BatchState state) {
  return state == v1::BATCH_STATE_SUCCEEDED || state == v1::BATCH_STATE_FAILED ||
         state == v1::BATCH_STATE_CANCELLED;
}

bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

// Splits "<batch>/<index>".
absl::StatusOr<std::pair<std::string, uint32_t>> ParseTaskId(absl::string_view task_id) {
  size_t slash = task_id.rfind('/');
  uint32_t index = 0;
  if (slash == absl::string_view::npos || slash == 0 ||
      !absl::SimpleAtoi(task_id.substr(slash + 1), &index)) {
    return absl::InvalidArgumentError(absl::StrCat("task_id: malformed \"", task_id, "\""));
  }
  return std::make_pair(std::string(task_id.substr(0, slash)), index);
}

// The error CompleteTask returns when the store failed: the store's code (so a
// worker does not retry a result that was already given up on), with context.
absl::Status ResultNotStoredError(const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("result not stored (the task is queued again): ",
                                                  status.message()));
}

}  // namespace

BatchManager::BatchManager(JobStore* store, JobScheduler* scheduler, RenderClient* render,
                           Clock* clock, BatchManagerOptions options)
    : store_(store),
      scheduler_(scheduler),
      clock_(clock),
      options_(options),
      artifacts_(store, render, options.aggregate_render_deadline) {
  if (options_.sweep_interval > absl::ZeroDuration()) {
    sweeper_ = std::thread([this] { SweeperLoop(); });
  }
}

BatchManager::~BatchManager() { Shutdown(); }

void BatchManager::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    shutdown_ = true;
  }
  scheduler_->Shutdown();
  if (sweeper_.joinable()) sweeper_.join();
}

void BatchManager::SweeperLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&shutdown_), options_.sweep_interval);
      if (shutdown_) return;
    }
    SweepExpiredLeases();
    if (options_.keep_for > absl::ZeroDuration()) PruneExpiredBatches();
  }
}

absl::StatusOr<const JobRecord*> BatchManager::EndedJobLocked(const Batch& batch,
                                                              absl::string_view batch_id,
                                                              absl::string_view job_name) const {
  auto it = batch.job_by_name.find(job_name);
  if (it == batch.job_by_name.end()) {
    return absl::NotFoundError(absl::StrCat("batch ", batch_id, " has no job \"", job_name, "\""));
  }
  const JobRecord& job = batch.record.jobs[it->second];
  if (!IsTerminal(job.state)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job \"", job_name, "\" is ", v1::JobState_Name(job.state), "; no result yet"));
  }
  return &job;
}

BatchManager::Batch* BatchManager::FindLocked(absl::string_view batch_id) {
  return history_.Find(batch_id);
}

absl::StatusOr<std::pair<BatchManager::Batch*, JobRecord*>> BatchManager::FindTaskLocked(
    absl::string_view task_id) {
  FLAMEFLEET_ASSIGN_OR_RETURN(auto parsed, ParseTaskId(task_id));
  Batch* batch = FindLocked(parsed.first);
  if (batch == nullptr || parsed.second >= batch->record.jobs.size()) {
    return absl::NotFoundError(absl::StrCat("task ", task_id, " not found"));
  }
  return std::make_pair(batch, &batch->record.jobs[parsed.second]);
}

void BatchManager::SetJobStateLocked(Batch* batch, JobRecord* job, v1::JobState state) {
  --batch->counts[job->state];
  ++batch->counts[state];
  if (state == v1::JOB_STATE_SUCCEEDED) batch->aggregate_cycles += job->cycles;
  job->state = state;
}

BatchManager::Batch* BatchManager::AddBatchLocked(BatchRecord record) {
  Batch* batch = history_.Add(std::move(record));
  for (const JobRecord& job : batch->record.jobs) {
    if (job.state == v1::JOB_STATE_SUCCEEDED) RememberResultLocked(*batch, job);
  }
  return batch;
}

void BatchManager::RememberResultLocked(const Batch& batch, const JobRecord& job) {
  history_.RecordCycles(job);
  cache_.Remember(batch.record.id, job);
}

bool BatchManager::StartFinalizeLocked(Batch* batch) {
  if (batch->finalizing || IsTerminal(batch->record.state)) return false;
  uint32_t ended = batch->counts[v1::JOB_STATE_SUCCEEDED] + batch->counts[v1::JOB_STATE_FAILED] +
                   batch->counts[v1::JOB_STATE_CANCELLED];
  if (ended < batch->record.jobs.size()) return false;
  batch->finalizing = true;
  return true;
}

absl::Status BatchManager::Recover() {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::vector<BatchRecord> records,
                              store_->LoadBatches(/*with_sources=*/false));
  std::vector<std::string> to_finalize;
  {
    absl::MutexLock lock(&mu_);
    for (BatchRecord& record : records) {
      std::string id = record.id;
      Batch* batch = AddBatchLocked(std::move(record));
      if (IsTerminal(batch->record.state)) continue;
      for (JobRecord& job : batch->record.jobs) {
        if (job.state == v1::JOB_STATE_RUNNING) {  // a store that does not recover by itself
          SetJobStateLocked(batch, &job, v1::JOB_STATE_QUEUED);
          FLAMEFLEET_RETURN_IF_ERROR(store_->UpdateJob(id, job));
        }
        if (job.state == v1::JOB_STATE_QUEUED) {
          FLAMEFLEET_RETURN_IF_ERROR(
              scheduler_->Enqueue(TaskId(id, job.index), job.attempts, history_.ExpectedCost(job)));
        }
      }
      if (StartFinalizeLocked(batch)) to_finalize.push_back(id);
    }
  }
  for (const std::string& id : to_finalize) FinalizeBatch(id);
  return absl::OkStatus();
}

absl::StatusOr<std::string> BatchManager::SubmitBatch(const v1::SubmitBatchRequest& request) {
  BatchRecord record;
  record.request_id = request.request_id();
  if (!record.request_id.empty()) {
    record.request_digest = internal::SubmitRequestDigest(request);
  }
  record.labels.insert(request.labels().begin(), request.labels().end());
  record.options = request.options();
  record.libraries = request.libraries();
  record.libraries.set_digest(internal::LibrarySetDigest(request.libraries()));
  record.created = clock_->Now();
  record.state = v1::BATCH_STATE_RUNNING;
  record.jobs.reserve(request.jobs_size());
  for (int i = 0; i < request.jobs_size(); ++i) {
    JobRecord job;
    job.index = static_cast<uint32_t>(i);
    job.spec = request.jobs(i);
    // Workers see the dialect each job runs under, whichever level named it.
    FLAMEFLEET_ASSIGN_OR_RETURN(const vm::Dialect dialect,
                                internal::ResolveJobDialect(job.spec, i, record.options));
    const vm::DialectSpec& dialect_spec = vm::GetDialectSpec(dialect);
    job.spec.set_dialect(std::string(dialect_spec.name));
    job.program_digest = internal::JobProgramDigest(job.spec, record.libraries.digest());
    job.cache_key =
        internal::ResultCacheKey(job.program_digest, dialect_spec.engine_version, record.options);
    record.jobs.push_back(std::move(job));
  }
  std::string id;
  bool finalize = false;
  {
    absl::MutexLock lock(&mu_);
    if (!record.request_id.empty()) {
      if (const std::string* earlier_id = history_.FindRequest(record.request_id)) {
        const Batch* earlier = FindLocked(*earlier_id);
        if (earlier != nullptr && !earlier->record.request_digest.empty() &&
            earlier->record.request_digest != record.request_digest) {
          return absl::AlreadyExistsError(absl::StrCat(
              "request_id: \"", record.request_id, "\" was used for batch ", *earlier_id,
              " with different content (jobs, libraries, labels or options); use a new "
              "request_id for a new batch"));
        }
        return *earlier_id;
      }
    }
    record.id = absl::StrCat(history_.next_id());
    // Jobs whose identical run left a result are answered from the store (the
    // profile is deterministic): they start SUCCEEDED and are never leased.
    if (!record.options.no_cache()) {
      for (JobRecord& job : record.jobs) {
        const CachedResult* hit = cache_.Find(job.cache_key);
        if (hit == nullptr) continue;
        const Batch* source = FindLocked(hit->batch_id);
        if (source == nullptr) continue;
        ReuseResult(source->record.id, source->record.jobs[hit->index], &job);
      }
    }
    FLAMEFLEET_RETURN_IF_ERROR(store_->CreateBatch(record));
    id = record.id;
    Batch* batch = AddBatchLocked(std::move(record));  // moves next_id() past `id`
    for (const JobRecord& job : batch->record.jobs) {
      if (job.state != v1::JOB_STATE_QUEUED) continue;
      // A fresh task id cannot be known to the scheduler.
      FLAMEFLEET_RETURN_IF_ERROR(
          scheduler_->Enqueue(TaskId(id, job.index), 0, history_.ExpectedCost(job)));
    }
    finalize = StartFinalizeLocked(batch);
  }
  if (finalize) FinalizeBatch(id);  // every job came from the cache
  return id;
}

absl::StatusOr<v1::Batch> BatchManager::GetBatch(absl::string_view batch_id, bool with_jobs) {
  absl::MutexLock lock(&mu_);
  Batch* batch = FindLocked(batch_id);
  if (batch == nullptr) return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
  return batch->ToProto(with_jobs);
}

std::vector<v1::Batch> BatchManager::ListBatches(const v1::ListBatchesRequest& request) {
  absl::MutexLock lock(&mu_);
  return history_.List(request);
}

absl::StatusOr<std::string> BatchManager::PreviousBatch(absl::string_view batch_id) {
  absl::MutexLock lock(&mu_);
  if (FindLocked(batch_id) == nullptr) {
    return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
  }
  return history_.Previous(batch_id);
}

absl::StatusOr<BatchSnapshot> BatchManager::WaitForChange(absl::string_view batch_id,
                                                          uint64_t after_version,
                                                          absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (FindLocked(batch_id) == nullptr)
    return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
  // Looked up again after every wake-up: retention may remove the batch.
  auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const Batch* b = FindLocked(batch_id);
    return shutdown_ || b == nullptr || b->version > after_version;
  };
  mu_.AwaitWithTimeout(absl::Condition(&changed), timeout);
  if (shutdown_) return absl::UnavailableError("coordinator is shutting down");
  Batch* batch = FindLocked(batch_id);
  if (batch == nullptr) {
    return absl::NotFoundError(absl::StrCat("batch ", batch_id, " was removed (retention)"));
  }
  bool ended = IsTerminal(batch->record.state);
  return BatchSnapshot{batch->ToProto(/*with_jobs=*/ended), batch->version};
}

absl::StatusOr<v1::Batch> BatchManager::CancelBatch(absl::string_view batch_id) {
  absl::MutexLock lock(&mu_);
  Batch* batch = FindLocked(batch_id);
  if (batch == nullptr) return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
  if (IsTerminal(batch->record.state) || batch->finalizing) {
    return batch->ToProto(/*with_jobs=*/true);
  }
  std::vector<std::string> task_ids;
  for (const JobRecord& job : batch->record.jobs) {
    if (!IsTerminal(job.state)) task_ids.push_back(TaskId(batch->record.id, job.index));
  }
  scheduler_->Cancel(task_ids);
  for (JobRecord& job : batch->record.jobs) {
    if (IsTerminal(job.state)) continue;
    SetJobStateLocked(batch, &job, v1::JOB_STATE_CANCELLED);
    FLAMEFLEET_RETURN_IF_ERROR(store_->UpdateJob(batch->record.id, job));
  }
  batch->record.state = v1::BATCH_STATE_CANCELLED;
  batch->record.finished = clock_->Now();
  FLAMEFLEET_RETURN_IF_ERROR(
      store_->UpdateBatchState(batch->record.id, batch->record.state, batch->record.finished));
  ++batch->version;
  return batch->ToProto(/*with_jobs=*/true);
}

absl::StatusOr<std::optional<v1::Task>> BatchManager::LeaseTask(
    absl::string_view worker_id, absl::Duration wait,
    const std::vector<std::string>& cached_library_digests, const std::function<bool()>& gone) {
  absl::Time deadline = absl::Now() + wait;
  while (true) {
    std::optional<Lease> lease = scheduler_->LeaseTask(deadline - absl::Now(), gone);
    if (!lease) return std::optional<v1::Task>();
    absl::MutexLock lock(&mu_);
    absl::StatusOr<std::pair<Batch*, JobRecord*>> found = FindTaskLocked(lease->task_id);
    if (!found.ok() || found->second->state != v1::JOB_STATE_QUEUED) {
      scheduler_->Cancel({lease->task_id});  // cancelled meanwhile: drop it, try the next one
      continue;
    }
    auto [batch, job] = *found;
    SetJobStateLocked(batch, job, v1::JOB_STATE_RUNNING);
    job->attempts = lease->attempt;
    absl::Status stored = store_->UpdateJob(batch->record.id, *job);
    if (stored.ok()) {
      stored = store_->RecordAttempt(AttemptRecord{batch->record.id, job->index, lease->attempt,
                                                   std::string(worker_id), lease->lease_id,
                                                   clock_->Now()});
    }
    if (!stored.ok()) {
      SetJobStateLocked(batch, job, v1::JOB_STATE_QUEUED);
      scheduler_->Release(lease->task_id, lease->lease_id);  // not an attempt
      job->attempts = lease->attempt - 1;
      return stored;
    }
    ++batch->version;
    v1::Task task;
    task.set_task_id(lease->task_id);
    task.set_lease_id(lease->lease_id);
    task.set_attempt(lease->attempt);
    *task.mutable_job() = job->spec;
    *task.mutable_options() = batch->record.options;
    const std::string& digest = batch->record.libraries.digest();
    task.set_library_digest(digest);
    if (std::find(cached_library_digests.begin(), cached_library_digests.end(), digest) ==
        cached_library_digests.end()) {
      *task.mutable_libraries() = batch->record.libraries;
    }
    task.set_lease_ms(
        static_cast<uint32_t>(absl::ToInt64Milliseconds(scheduler_->options().lease_duration)));
    return std::optional<v1::Task>(std::move(task));
  }
}

void BatchManager::ReleaseTask(const std::string& task_id, const std::string& lease_id) {
  absl::MutexLock lock(&mu_);
  if (!scheduler_->Release(task_id, lease_id)) return;
  absl::StatusOr<std::pair<Batch*, JobRecord*>> found = FindTaskLocked(task_id);
  if (!found.ok() || found->second->state != v1::JOB_STATE_RUNNING) return;
  auto [batch, job] = *found;
  SetJobStateLocked(batch, job, v1::JOB_STATE_QUEUED);
  store_->FinishAttempt(batch->record.id, job->index, job->attempts, "not delivered", clock_->Now())
      .IgnoreError();  // history only (the next lease reuses the attempt number)
  if (job->attempts > 0) --job->attempts;  // never delivered: not an attempt
  absl::Status stored = store_->UpdateJob(batch->record.id, *job);
  if (!stored.ok()) LOG(ERROR) << "task " << task_id << ": " << stored;
  ++batch->version;
}

std::optional<absl::Duration> BatchManager::RenewLease(const std::string& task_id,
                                                       const std::string& lease_id) {
  if (!scheduler_->RenewLease(task_id, lease_id)) return std::nullopt;
  return scheduler_->options().lease_duration;
}

absl::StatusOr<bool> BatchManager::CompleteTask(const v1::TaskHeader& header,
                                                const std::string& profile_bytes,
                                                const std::string& summary_bytes) {
  FLAMEFLEET_RETURN_IF_ERROR(ParseTaskId(header.task_id()).status());
  // Check and store the profile before claiming the task, so that a bad upload
  // leaves the lease live and a stored result is never half-written. Identical
  // bytes share one artifact. A store failure (disk full) ends the lease as
  // lost: the job is queued again with the attempt counted, and fails after
  // max_lost_leases like a job whose worker keeps dying.
  // A result that lies about its cycles (or has no profile) is refused before
  // that, so it is never stored, cached or counted.
  uint64_t cycle_cap = 0;  // 0: none known (the worker applies its default)
  std::string job_name;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<std::pair<Batch*, JobRecord*>> found = FindTaskLocked(header.task_id());
    if (found.ok()) {
      cycle_cap = found->first->record.options.max_cycles();
      job_name = found->second->spec.name();
    }
  }
  if (header.succeeded() && cycle_cap != 0 && header.cycles() > cycle_cap) {
    return absl::InvalidArgumentError(
        absl::StrCat("header.cycles: ", header.cycles(), " exceeds the batch's cycle cap of ",
                     cycle_cap, " (options.max_cycles), so the run cannot have succeeded"));
  }
  std::string digest;
  if (header.succeeded() && profile_bytes.empty()) {
    return absl::InvalidArgumentError(
        "profile_data: a succeeded result must carry its profile "
        "(header.profile_bytes is 0)");
  }
  if (header.succeeded() || !profile_bytes.empty()) {
    absl::StatusOr<profile::Profile> parsed = profile::ParseProfile(profile_bytes);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("profile_data: ", parsed.status().message()));
    }
    if (header.succeeded() && parsed->total() != header.cycles()) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile_data: the profile's total of ", parsed->total(),
                       " cycles differs from header.cycles = ", header.cycles()));
    }
    absl::StatusOr<std::string> put = store_->PutArtifact(profile_bytes);
    if (!put.ok()) return ResultNotStored(header, put.status());
    digest = std::move(*put);
  }
  std::string summary_digest;
  if (!summary_bytes.empty()) {
    absl::StatusOr<runner::JobSummary> summary = runner::DecodeJobSummary(summary_bytes);
    if (!summary.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("summary_data: ", summary.status().message()));
    }
    if (!job_name.empty() && summary->job != job_name) {
      return absl::InvalidArgumentError(
          absl::StrCat("summary_data: names job \"", summary->job, "\", not \"", job_name, "\""));
    }
    if (header.succeeded() && summary->cycles != header.cycles()) {
      return absl::InvalidArgumentError(
          absl::StrCat("summary_data: cycles = ", summary->cycles,
                       " differs from header.cycles = ", header.cycles()));
    }
    absl::StatusOr<std::string> put = store_->PutArtifact(summary_bytes);
    if (!put.ok()) return ResultNotStored(header, put.status());
    summary_digest = std::move(*put);
  }

  std::string batch_id;
  bool finalize = false;
  absl::Status stored;
  {
    absl::MutexLock lock(&mu_);
    // Claimed only once the result is stored: every Complete, Release, Cancel
    // and sweep of the scheduler happens under mu_, so the lease cannot change
    // in between.
    if (!scheduler_->IsLeased(header.task_id(), header.lease_id())) return false;
    FLAMEFLEET_ASSIGN_OR_RETURN(auto found, FindTaskLocked(header.task_id()));
    auto [batch, job] = found;
    if (IsTerminal(job->state)) {
      scheduler_->Complete(header.task_id(), header.lease_id());
      return true;  // cancelled while it ran: the result is dropped
    }
    JobRecord updated = *job;
    updated.cycles = header.cycles();
    updated.stack.assign(header.stack().begin(), header.stack().end());
    updated.error = header.succeeded() ? "" : header.error();
    updated.profile_digest = digest;
    updated.summary_digest = summary_digest;
    updated.state = header.succeeded() ? v1::JOB_STATE_SUCCEEDED : v1::JOB_STATE_FAILED;
    stored = store_->UpdateJob(batch->record.id, updated);
    if (stored.ok() && !digest.empty()) {
      stored = store_->IndexArtifact(batch->record.id, job->spec.name(),
                                     v1::ARTIFACT_FORMAT_PROFILE, digest);
    }
    batch_id = batch->record.id;
    if (!stored.ok()) {
      // Not recorded: run it again rather than lose it, counting the attempt.
      finalize = LoseLeaseLocked(batch, job, header.lease_id(), stored);
    } else {
      scheduler_->Complete(header.task_id(), header.lease_id());
      store_
          ->FinishAttempt(
              batch->record.id, job->index, job->attempts,
              header.succeeded() ? "succeeded" : absl::StrCat("failed: ", header.error()),
              clock_->Now())
          .IgnoreError();  // history only; the job row above is what counts
      job->cycles = updated.cycles;
      job->stack = std::move(updated.stack);
      job->error = std::move(updated.error);
      job->profile_digest = std::move(updated.profile_digest);
      job->summary_digest = std::move(updated.summary_digest);
      SetJobStateLocked(batch, job, updated.state);
      if (updated.state == v1::JOB_STATE_SUCCEEDED) RememberResultLocked(*batch, *job);
      ++batch->version;
      finalize = StartFinalizeLocked(batch);
    }
  }
  if (finalize) FinalizeBatch(batch_id);
  if (!stored.ok()) return ResultNotStoredError(stored);
  return true;
}

absl::Status BatchManager::ResultNotStored(const v1::TaskHeader& header,
                                           const absl::Status& status) {
  std::string batch_id;
  bool finalize = false;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<std::pair<Batch*, JobRecord*>> found = FindTaskLocked(header.task_id());
    if (found.ok() && scheduler_->IsLeased(header.task_id(), header.lease_id())) {
      batch_id = found->first->record.id;
      finalize = LoseLeaseLocked(found->first, found->second, header.lease_id(), status);
    }
  }
  if (finalize) FinalizeBatch(batch_id);
  return ResultNotStoredError(status);
}

bool BatchManager::LoseLeaseLocked(Batch* batch, JobRecord* job, const std::string& lease_id,
                                   const absl::Status& status) {
  const std::string task_id = TaskId(batch->record.id, job->index);
  const std::string reason = absl::StrCat("result not stored: ", status.message());
  std::optional<ExpiredLease> lost = scheduler_->LoseLease(task_id, lease_id, reason);
  if (!lost) return false;
  LOG(ERROR) << "task " << task_id << " attempt " << lost->attempt << ": " << reason
             << (lost->failed ? "; " + lost->reason : "; queued again");
  store_->FinishAttempt(batch->record.id, job->index, lost->attempt, reason, clock_->Now())
      .IgnoreError();  // history only (the store is failing anyway)
  if (lost->failed) {
    job->error = lost->reason;
    SetJobStateLocked(batch, job, v1::JOB_STATE_FAILED);
  } else {
    SetJobStateLocked(batch, job, v1::JOB_STATE_QUEUED);
  }
  absl::Status stored = store_->UpdateJob(batch->record.id, *job);
  if (!stored.ok()) {
    // Memory is right; a restart re-queues what the store still calls RUNNING.
    LOG(ERROR) << "task " << task_id << ": " << stored;
  }
  ++batch->version;
  return StartFinalizeLocked(batch);
}

void BatchManager::SweepExpiredLeases() {
  std::vector<std::string> to_finalize;
  {
    absl::MutexLock lock(&mu_);
    for (const ExpiredLease& expired : scheduler_->SweepExpired()) {
      absl::StatusOr<std::pair<Batch*, JobRecord*>> found = FindTaskLocked(expired.task_id);
      if (!found.ok()) continue;
      auto [batch, job] = *found;
      if (IsTerminal(job->state)) continue;
      store_
          ->FinishAttempt(batch->record.id, job->index, expired.attempt, "lease expired",
                          clock_->Now())
          .IgnoreError();  // history only
      if (expired.failed) {
        job->error = expired.reason;
        SetJobStateLocked(batch, job, v1::JOB_STATE_FAILED);
      } else {
        SetJobStateLocked(batch, job, v1::JOB_STATE_QUEUED);
      }
      absl::Status stored = store_->UpdateJob(batch->record.id, *job);
      if (!stored.ok()) {
        LOG(ERROR) << "task " << expired.task_id << ": " << stored;
      }
      LOG(WARNING) << "task " << expired.task_id << " attempt " << expired.attempt
                   << ": lease expired" << (expired.failed ? "; " + expired.reason : "");
      ++batch->version;
      if (StartFinalizeLocked(batch)) to_finalize.push_back(batch->record.id);
    }
  }
  for (const std::string& id : to_finalize) FinalizeBatch(id);
}

void BatchManager::FinalizeBatch(const std::string& batch_id) {
  std::vector<std::pair<std::string, std::string>> profiles;  // task id, digest
  absl::flat_hash_map<std::string, std::string> job_names;    // task id -> job name
  BatchRecord header;
  {
    absl::MutexLock lock(&mu_);
    Batch* batch = FindLocked(batch_id);
    for (const JobRecord& job : batch->record.jobs) {
      if (job.state == v1::JOB_STATE_SUCCEEDED) {
        profiles.emplace_back(TaskId(batch_id, job.index), job.profile_digest);
        job_names[profiles.back().first] = job.spec.name();
      }
    }
    header.id = batch->record.id;
    header.options = batch->record.options;
  }
  // Merge: each succeeded job once, from its stored result; the by-job aggregate from the same
  // Add calls, so it counts the same jobs.
  ProfileMerger merger;
  merger.KeepByJob(std::move(job_names));
  absl::Status status = artifacts_.MergeStoredProfiles(profiles, &merger);
  if (status.ok()) status = artifacts_.StoreAggregate(batch_id, merger.aggregate());
  if (status.ok()) {
    // Not fatal: the first fetch of the by-job aggregate builds it again.
    absl::Status by_job = artifacts_.StoreByJobAggregate(batch_id, merger.by_job());
    if (!by_job.ok()) LOG(WARNING) << "batch " << batch_id << ": by-job aggregate: " << by_job;
  }
  const bool render_aggregate = status.ok() && merger.aggregate().total() > 0;
  if (!status.ok()) LOG(ERROR) << "batch " << batch_id << ": aggregate failed: " << status;

  {
    absl::MutexLock lock(&mu_);
    Batch* batch = FindLocked(batch_id);
    batch->finalizing = false;
    bool all_succeeded = batch->counts[v1::JOB_STATE_SUCCEEDED] == batch->record.jobs.size();
    batch->record.state =
        all_succeeded && status.ok() ? v1::BATCH_STATE_SUCCEEDED : v1::BATCH_STATE_FAILED;
    batch->record.finished = clock_->Now();
    absl::Status stored =
        store_->UpdateBatchState(batch_id, batch->record.state, batch->record.finished);
    if (!stored.ok()) LOG(ERROR) << "batch " << batch_id << ": " << stored;
    // The sources are only needed to run jobs.
    for (JobRecord& job : batch->record.jobs) {
      job.spec.clear_source();
      job.spec.clear_inputs();
      job.spec.clear_snapshot();
    }
    batch->record.libraries.clear_libraries();
    ++batch->version;
    LOG(INFO) << "batch " << batch_id << " " << v1::BatchState_Name(batch->record.state) << ": "
              << batch->counts[v1::JOB_STATE_SUCCEEDED] << "/" << batch->record.jobs.size()
              << " jobs succeeded, " << batch->aggregate_cycles << " cycles";
  }
  if (render_aggregate) {
    artifacts_.RenderAggregateSvg(header, merger.aggregate(), profiles.size());
  }
}

absl::StatusOr<std::string> BatchManager::FetchArtifact(absl::string_view batch_id,
                                                        absl::string_view job_name,
                                                        v1::ArtifactFormat format,
                                                        v1::AggregateView view) {
  const bool by_job = view == v1::AGGREGATE_VIEW_BY_JOB;
  if (by_job && !job_name.empty()) {
    return absl::InvalidArgumentError(
        "view: BY_JOB is a view of the aggregate; give no job_name with it");
  }
  if (format == v1::ARTIFACT_FORMAT_SUMMARY) {
    if (by_job) {
      return absl::InvalidArgumentError(
          "view: BY_JOB is a view of the aggregate flamegraph, not of the summary");
    }
    return FetchSummary(batch_id, job_name);
  }
  std::string profile_digest;
  v1::RenderOptions render_options;
  std::vector<StoredJobProfile> jobs;  // by_job: the succeeded jobs
  {
    absl::MutexLock lock(&mu_);
    Batch* batch = FindLocked(batch_id);
    if (batch == nullptr) {
      return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
    }
    if (job_name.empty()) {
      if (batch->record.state == v1::BATCH_STATE_CANCELLED) {
        return absl::FailedPreconditionError(
            absl::StrCat("batch ", batch_id, " was cancelled; it has no aggregate"));
      }
      if (!IsTerminal(batch->record.state)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "batch ", batch_id, " is still running; the aggregate is ready when it ends"));
      }
      render_options = BatchRenderOptions(batch->record, batch->counts[v1::JOB_STATE_SUCCEEDED],
                                          batch->aggregate_cycles);
      if (by_job) {
        render_options.set_title(absl::StrCat(render_options.title(), " by job"));
        for (const JobRecord& job : batch->record.jobs) {
          if (job.state == v1::JOB_STATE_SUCCEEDED) {
            jobs.push_back({TaskId(batch_id, job.index), job.spec.name(), job.profile_digest});
          }
        }
      }
    } else {
      FLAMEFLEET_ASSIGN_OR_RETURN(const JobRecord* ended,
                                  EndedJobLocked(*batch, batch_id, job_name));
      const JobRecord& job = *ended;
      if (job.profile_digest.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job \"", job_name, "\" is ", v1::JobState_Name(job.state), " and has no profile"));
      }
      profile_digest = job.profile_digest;
      render_options = JobRenderOptions(job.spec.name());
    }
  }
  if (by_job) return artifacts_.FetchByJob(std::string(batch_id), format, jobs, render_options);
  return artifacts_.Fetch(std::string(batch_id), std::string(job_name), format,
                          std::move(profile_digest), render_options);
}

absl::StatusOr<std::string> BatchManager::FetchSummary(absl::string_view batch_id,
                                                       absl::string_view job_name) {
  struct Wanted {
    std::string name;
    v1::JobState state;
    std::string error;
    std::string summary_digest;
  };
  std::vector<Wanted> jobs;
  v1::BatchState state = v1::BATCH_STATE_UNSPECIFIED;
  {
    absl::MutexLock lock(&mu_);
    Batch* batch = FindLocked(batch_id);
    if (batch == nullptr) {
      return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
    }
    state = batch->record.state;
    if (job_name.empty()) {
      for (const JobRecord& job : batch->record.jobs) {
        jobs.push_back({job.spec.name(), job.state, job.error, job.summary_digest});
      }
    } else {
      FLAMEFLEET_ASSIGN_OR_RETURN(const JobRecord* ended,
                                  EndedJobLocked(*batch, batch_id, job_name));
      const JobRecord& job = *ended;
      if (job.summary_digest.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job \"", job_name, "\" is ", v1::JobState_Name(job.state), " and has no summary"));
      }
      jobs.push_back({job.spec.name(), job.state, job.error, job.summary_digest});
    }
  }
  // A stored summary passed the decoder when it was uploaded; it is parsed again only to name
  // the job it is served for (a cached result's summary names the job that first ran it).
  auto load = [this](const Wanted& job, v1::JobSummary* out) -> absl::Status {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::string bytes, store_->GetArtifact(job.summary_digest));
    if (!out->ParseFromString(bytes)) {
      return absl::DataLossError(
          absl::StrCat("job \"", job.name, "\": the stored summary is unreadable"));
    }
    out->set_job(job.name);
    return absl::OkStatus();
  };
  if (!job_name.empty()) {
    v1::JobSummary summary;
    FLAMEFLEET_RETURN_IF_ERROR(load(jobs.front(), &summary));
    return summary.SerializeAsString();
  }
  v1::BatchSummary batch;
  batch.set_batch_id(std::string(batch_id));
  batch.set_state(state);
  size_t bytes = 0;  // of the jobs so far (each row's size plus its framing, at most 16 bytes)
  for (const Wanted& job : jobs) {
    v1::BatchSummaryJob* row = batch.add_jobs();
    row->set_name(job.name);
    row->set_state(job.state);
    row->set_error(job.error);
    if (!job.summary_digest.empty()) {
      FLAMEFLEET_RETURN_IF_ERROR(load(job, row->mutable_summary()));
    }
    bytes += row->ByteSizeLong() + 16;
    if (bytes > kMaxBatchSummaryBytes) {
      return absl::ResourceExhaustedError(absl::StrCat("batch ", batch_id, ": its summary exceeds ",
                                                       kMaxBatchSummaryBytes, " bytes"));
    }
  }
  return batch.SerializeAsString();
}

absl::StatusOr<AggregateResult> BatchManager::Aggregate(const v1::AggregateRequest& request) {
  if (!v1::ArtifactFormat_IsValid(request.format())) {
    return absl::InvalidArgumentError(absl::StrCat("format: unknown value ", request.format()));
  }
  if (request.format() == v1::ARTIFACT_FORMAT_SUMMARY) {
    return absl::InvalidArgumentError(
        "format: SUMMARY is per batch (FetchArtifact); Aggregate gives SVG, FOLDED or PROFILE");
  }
  AggregateSelection selection;
  {
    absl::MutexLock lock(&mu_);
    selection = history_.SelectForAggregate(request);
  }
  if (selection.batch_ids.empty()) {
    return absl::NotFoundError("no ended batch matches the labels and time window");
  }
  return artifacts_.Aggregate(request, std::move(selection.batch_ids), selection.profiles);
}

size_t BatchManager::PruneExpiredBatches() {
  if (options_.keep_for <= absl::ZeroDuration()) return 0;
  const absl::Time cutoff = clock_->Now() - options_.keep_for;
  std::vector<std::string> removed;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : history_.EndedBefore(cutoff)) {
      absl::Status deleted = store_->DeleteBatch(id);
      if (!deleted.ok() && !absl::IsNotFound(deleted)) {
        LOG(ERROR) << "retention: batch " << id << ": " << deleted;
        continue;  // kept; tried again on the next sweep
      }
      removed.push_back(id);
    }
    if (removed.empty()) return 0;
    absl::flat_hash_set<std::string> gone(removed.begin(), removed.end());
    history_.Remove(gone);
    cache_.ForgetBatches(gone);
  }
  absl::StatusOr<size_t> collected = store_->CollectGarbage(options_.garbage_min_age);
  LOG(INFO) << "retention: removed " << removed.size() << " batches ended before "
            << absl::FormatTime(cutoff) << ", "
            << (collected.ok()
                    ? absl::StrCat(*collected, " artifacts")
                    : absl::StrCat("artifacts not collected: ", collected.status().ToString()));
  return removed.size();
}

}  // namespace flamefleet::coordinator
