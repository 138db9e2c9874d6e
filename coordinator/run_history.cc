#include "coordinator/run_history.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "coordinator/scheduler.h"

namespace flamefleet::coordinator {
namespace {

bool IsEnded(v1::BatchState state) {
  return state == v1::BATCH_STATE_SUCCEEDED || state == v1::BATCH_STATE_FAILED ||
         state == v1::BATCH_STATE_CANCELLED;
}

int64_t UnixMs(absl::Time t) { return t == absl::UnixEpoch() ? 0 : absl::ToUnixMillis(t); }

// True if the batch has every label of `wanted` with the same value.
bool HasLabels(const BatchRecord& record,
               const google::protobuf::Map<std::string, std::string>& wanted) {
  for (const auto& [key, value] : wanted) {
    auto label = record.labels.find(key);
    if (label == record.labels.end() || label->second != value) return false;
  }
  return true;
}

}  // namespace

std::string TaskId(absl::string_view batch_id, uint32_t index) {
  return absl::StrCat(batch_id, "/", index);
}

v1::Batch BatchEntry::ToProto(bool with_jobs) const {
  v1::Batch out;
  out.set_batch_id(record.id);
  out.set_state(record.state);
  out.mutable_labels()->insert(record.labels.begin(), record.labels.end());
  out.set_created_unix_ms(UnixMs(record.created));
  out.set_finished_unix_ms(UnixMs(record.finished));
  out.set_jobs_total(static_cast<uint32_t>(record.jobs.size()));
  out.set_jobs_queued(counts[v1::JOB_STATE_QUEUED]);
  out.set_jobs_running(counts[v1::JOB_STATE_RUNNING]);
  out.set_jobs_succeeded(counts[v1::JOB_STATE_SUCCEEDED]);
  out.set_jobs_failed(counts[v1::JOB_STATE_FAILED]);
  out.set_jobs_cancelled(counts[v1::JOB_STATE_CANCELLED]);
  out.set_aggregate_cycles(aggregate_cycles);
  if (with_jobs) {
    for (const JobRecord& job : record.jobs) {
      v1::JobStatus* status = out.add_jobs();
      status->set_name(job.spec.name());
      status->set_state(job.state);
      status->set_attempts(job.attempts);
      status->set_cycles(job.cycles);
      status->mutable_stack()->Add(job.stack.begin(), job.stack.end());
      status->set_error(job.error);
      status->set_cached_from(job.cached_from);
    }
  }
  return out;
}

BatchEntry* RunHistory::Add(BatchRecord record) {
  auto batch = std::make_unique<BatchEntry>();
  batch->record = std::move(record);
  for (JobRecord& job : batch->record.jobs) {
    batch->job_by_name[job.spec.name()] = job.index;
    ++batch->counts[job.state];
    if (job.state == v1::JOB_STATE_SUCCEEDED) batch->aggregate_cycles += job.cycles;
  }
  uint64_t numeric_id = 0;
  if (absl::SimpleAtoi(batch->record.id, &numeric_id) && numeric_id >= next_id_) {
    next_id_ = numeric_id + 1;
  }
  if (!batch->record.request_id.empty()) {
    by_request_id_[batch->record.request_id] = batch->record.id;
  }
  order_.push_back(batch->record.id);
  BatchEntry* entry = batch.get();
  std::string id = batch->record.id;
  batches_[id] = std::move(batch);
  return entry;
}

BatchEntry* RunHistory::Find(absl::string_view batch_id) {
  auto it = batches_.find(batch_id);
  return it == batches_.end() ? nullptr : it->second.get();
}

const BatchEntry* RunHistory::Find(absl::string_view batch_id) const {
  auto it = batches_.find(batch_id);
  return it == batches_.end() ? nullptr : it->second.get();
}

const std::string* RunHistory::FindRequest(absl::string_view request_id) const {
  auto it = by_request_id_.find(request_id);
  return it == by_request_id_.end() ? nullptr : &it->second;
}

void RunHistory::RecordCycles(const JobRecord& job) {
  if (!job.program_digest.empty()) cycles_by_program_[job.program_digest] = job.cycles;
  cycles_by_name_[job.spec.name()] = job.cycles;
}

uint64_t RunHistory::ExpectedCost(const JobRecord& job) const {
  if (auto it = cycles_by_program_.find(job.program_digest); it != cycles_by_program_.end()) {
    return it->second;
  }
  // A changed program keeps the estimate of its previous version.
  if (auto it = cycles_by_name_.find(job.spec.name()); it != cycles_by_name_.end()) {
    return it->second;
  }
  return kUnknownCost;
}

std::vector<v1::Batch> RunHistory::List(const v1::ListBatchesRequest& request) const {
  const size_t limit =
      std::min<size_t>(request.limit() == 0 ? 100 : request.limit(), kMaxListedBatches);
  std::vector<v1::Batch> result;
  for (auto it = order_.rbegin(); it != order_.rend() && result.size() < limit; ++it) {
    const BatchEntry& batch = *batches_.at(*it);
    const BatchRecord& record = batch.record;
    if (request.state() != v1::BATCH_STATE_UNSPECIFIED && record.state != request.state()) {
      continue;
    }
    if (UnixMs(record.created) < request.since_unix_ms()) continue;
    if (HasLabels(record, request.labels())) result.push_back(batch.ToProto(/*with_jobs=*/false));
  }
  return result;
}

AggregateSelection RunHistory::SelectForAggregate(const v1::AggregateRequest& request) const {
  AggregateSelection selection;
  const int64_t until = request.until_unix_ms() != 0 ? request.until_unix_ms() : INT64_MAX;
  for (const std::string& id : order_) {
    const BatchRecord& record = batches_.at(id)->record;
    if (record.state != v1::BATCH_STATE_SUCCEEDED && record.state != v1::BATCH_STATE_FAILED) {
      continue;  // running (not final yet) or cancelled (no aggregate)
    }
    const int64_t created = UnixMs(record.created);
    if (created < request.since_unix_ms() || created >= until) continue;
    if (!HasLabels(record, request.labels())) continue;
    selection.batch_ids.push_back(id);
    for (const JobRecord& job : record.jobs) {
      if (job.state == v1::JOB_STATE_SUCCEEDED && !job.profile_digest.empty()) {
        selection.profiles.emplace_back(TaskId(id, job.index), job.profile_digest);
      }
    }
  }
  return selection;
}

std::string RunHistory::Previous(absl::string_view batch_id) const {
  const BatchEntry* batch = Find(batch_id);
  if (batch == nullptr) return "";
  auto it = std::find(order_.rbegin(), order_.rend(), batch_id);
  for (++it; it != order_.rend(); ++it) {
    const BatchRecord& record = batches_.at(*it)->record;
    if (record.state != v1::BATCH_STATE_SUCCEEDED && record.state != v1::BATCH_STATE_FAILED) {
      continue;  // running (no aggregate yet) or cancelled (none at all)
    }
    if (record.labels == batch->record.labels) return record.id;
  }
  return "";
}

std::vector<std::string> RunHistory::EndedBefore(absl::Time cutoff) const {
  std::vector<std::string> ids;
  for (const std::string& id : order_) {
    const BatchEntry& batch = *batches_.at(id);
    if (!IsEnded(batch.record.state) || batch.finalizing || batch.record.finished >= cutoff) {
      continue;
    }
    ids.push_back(id);
  }
  return ids;
}

void RunHistory::Remove(const absl::flat_hash_set<std::string>& batch_ids) {
  std::erase_if(order_, [&](const std::string& id) { return batch_ids.contains(id); });
  for (const std::string& id : batch_ids) {
    auto it = batches_.find(id);
    if (it == batches_.end()) continue;
    const BatchRecord& record = it->second->record;
    if (!record.request_id.empty()) by_request_id_.erase(record.request_id);
    batches_.erase(it);
  }
}

}  // namespace flamefleet::coordinator
