#include "coordinator/coordinator_service.h"

#include <malloc.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/logging.h"
#include "runner/runner.h"

namespace flamefleet::coordinator {
namespace {

// Writes the one INFO line per RPC: method, batch or task id, latency, status
// code.
class RpcLog {
 public:
  RpcLog(const char* method, std::string id)
      : method_(method), id_(std::move(id)), start_(absl::Now()) {}
  void set_id(std::string id) { id_ = std::move(id); }
  // Logs and returns `status`.
  const absl::Status& Done(const absl::Status& status) {
    LOG(INFO) << method_ << " " << (id_.empty() ? "-" : id_) << " "
              << absl::FormatDuration(absl::Now() - start_) << " "
              << absl::StatusCodeToString(status.code())
              << (status.ok() ? "" : absl::StrCat(": ", status.message()));
    return status;
  }

 private:
  const char* method_;
  std::string id_;
  absl::Time start_;
};

bool IsTerminal(v1::BatchState state) {
  return state == v1::BATCH_STATE_SUCCEEDED || state == v1::BATCH_STATE_FAILED ||
         state == v1::BATCH_STATE_CANCELLED;
}

// A result at least this large is followed by malloc_trim(0).
constexpr size_t kTrimAfterBytes = size_t{32} << 20;

absl::Status RequireBatchId(const std::string& batch_id) {
  if (batch_id.empty()) return absl::InvalidArgumentError("batch_id: empty");
  return absl::OkStatus();
}

}  // namespace

CoordinatorServiceImpl::CoordinatorServiceImpl(BatchManager* manager,
                                               CoordinatorServiceOptions options)
    : manager_(manager),
      options_(std::move(options)),
      worker_leases_(options_.max_leases_per_worker),
      result_budget_(options_.max_inflight_result_bytes) {}

grpc::Status CoordinatorServiceImpl::SubmitBatch(grpc::ServerContext* /*context*/,
                                                 const v1::SubmitBatchRequest* request,
                                                 v1::SubmitBatchResponse* response) {
  RpcLog log("SubmitBatch", request->request_id());
  absl::Status status = internal::ValidateSubmitBatchRequest(*request, options_.submit_limits);
  std::optional<v1::SubmitBatchRequest> capped;
  if (status.ok() && request->options().max_cycles() == 0 &&
      options_.submit_limits.max_cycle_cap != 0) {
    // No cap asked for: the ceiling is the cap (workers otherwise use 2^32).
    capped = *request;
    capped->mutable_options()->set_max_cycles(options_.submit_limits.max_cycle_cap);
  }
  if (status.ok() && request->options().max_memory_bytes() == 0 &&
      options_.submit_limits.max_memory_cap != 0) {
    // No budget asked for: the ceiling is the budget (workers otherwise use 1 GiB).
    if (!capped) capped = *request;
    capped->mutable_options()->set_max_memory_bytes(options_.submit_limits.max_memory_cap);
  }
  if (status.ok()) {
    absl::StatusOr<std::string> id = manager_->SubmitBatch(capped ? *capped : *request);
    status = id.status();
    if (id.ok()) {
      log.set_id(absl::StrCat(*id, " (", request->jobs_size(), " jobs)"));
      response->set_batch_id(*id);
    }
  }
  return ToGrpcStatus(log.Done(status));
}

grpc::Status CoordinatorServiceImpl::GetBatch(grpc::ServerContext* /*context*/,
                                              const v1::GetBatchRequest* request,
                                              v1::Batch* response) {
  RpcLog log("GetBatch", request->batch_id());
  absl::Status status = RequireBatchId(request->batch_id());
  if (status.ok()) {
    absl::StatusOr<v1::Batch> batch = manager_->GetBatch(request->batch_id(), true);
    status = batch.status();
    if (batch.ok()) *response = std::move(*batch);
  }
  return ToGrpcStatus(log.Done(status));
}

grpc::Status CoordinatorServiceImpl::ListBatches(grpc::ServerContext* /*context*/,
                                                 const v1::ListBatchesRequest* request,
                                                 v1::ListBatchesResponse* response) {
  RpcLog log("ListBatches", "");
  for (v1::Batch& batch : manager_->ListBatches(*request)) {
    *response->add_batches() = std::move(batch);
  }
  return ToGrpcStatus(log.Done(absl::OkStatus()));
}

grpc::Status CoordinatorServiceImpl::WatchBatch(grpc::ServerContext* context,
                                                const v1::WatchBatchRequest* request,
                                                grpc::ServerWriter<v1::Batch>* writer) {
  RpcLog log("WatchBatch", request->batch_id());
  absl::Status status = RequireBatchId(request->batch_id());
  uint64_t version = 0;
  bool first = true;
  while (status.ok() && !context->IsCancelled()) {
    absl::StatusOr<BatchSnapshot> snapshot =
        manager_->WaitForChange(request->batch_id(), version, options_.watch_poll);
    if (!snapshot.ok()) {
      status = snapshot.status();
      break;
    }
    if (snapshot->version == version) continue;  // nothing new; check the client is still there
    version = snapshot->version;
    bool ended = IsTerminal(snapshot->batch.state());
    if (first && !ended) {
      // The first event carries the per-job statuses too.
      absl::StatusOr<v1::Batch> full = manager_->GetBatch(request->batch_id(), true);
      if (full.ok()) snapshot->batch = std::move(*full);
    }
    first = false;
    if (!writer->Write(snapshot->batch)) break;  // the client went away
    if (ended) break;
  }
  if (status.ok() && context->IsCancelled()) status = absl::CancelledError("client cancelled");
  return ToGrpcStatus(log.Done(status));
}

grpc::Status CoordinatorServiceImpl::CancelBatch(grpc::ServerContext* /*context*/,
                                                 const v1::CancelBatchRequest* request,
                                                 v1::Batch* response) {
  RpcLog log("CancelBatch", request->batch_id());
  absl::Status status = RequireBatchId(request->batch_id());
  if (status.ok()) {
    absl::StatusOr<v1::Batch> batch = manager_->CancelBatch(request->batch_id());
    status = batch.status();
    if (batch.ok()) *response = std::move(*batch);
  }
  return ToGrpcStatus(log.Done(status));
}

grpc::Status CoordinatorServiceImpl::FetchArtifact(grpc::ServerContext* /*context*/,
                                                   const v1::FetchArtifactRequest* request,
                                                   grpc::ServerWriter<v1::ArtifactChunk>* writer) {
  RpcLog log(
      "FetchArtifact",
      absl::StrCat(request->batch_id(), " ",
                   request->job_name().empty()
                       ? (request->view() == v1::AGGREGATE_VIEW_BY_JOB ? "(by job)" : "(aggregate)")
                       : request->job_name(),
                   " ", v1::ArtifactFormat_Name(request->format())));
  absl::Status status = RequireBatchId(request->batch_id());
  if (status.ok() && !v1::ArtifactFormat_IsValid(request->format())) {
    status = absl::InvalidArgumentError(absl::StrCat("format: unknown value ", request->format()));
  }
  if (status.ok() && !v1::AggregateView_IsValid(request->view())) {
    status = absl::InvalidArgumentError(absl::StrCat("view: unknown value ", request->view()));
  }
  if (status.ok()) {
    absl::StatusOr<std::string> data = manager_->FetchArtifact(
        request->batch_id(), request->job_name(), request->format(), request->view());
    status = data.status();
    if (data.ok()) {
      v1::ArtifactChunk chunk;
      for (size_t offset = 0; offset < data->size(); offset += options_.chunk_bytes) {
        chunk.set_data(data->substr(offset, options_.chunk_bytes));
        if (!writer->Write(chunk)) {
          status = absl::CancelledError("client went away");
          break;
        }
      }
    }
  }
  return ToGrpcStatus(log.Done(status));
}

grpc::Status CoordinatorServiceImpl::Aggregate(grpc::ServerContext* /*context*/,
                                               const v1::AggregateRequest* request,
                                               grpc::ServerWriter<v1::AggregateChunk>* writer) {
  RpcLog log("Aggregate", v1::ArtifactFormat_Name(request->format()));
  absl::Status status;
  for (const auto& [key, value] : request->labels()) {
    if (key.empty()) status = absl::InvalidArgumentError("labels: empty key");
  }
  if (status.ok() && request->until_unix_ms() != 0 &&
      request->until_unix_ms() <= request->since_unix_ms()) {
    status = absl::InvalidArgumentError("until_unix_ms: not after since_unix_ms");
  }
  absl::StatusOr<AggregateResult> result =
      status.ok() ? manager_->Aggregate(*request) : absl::StatusOr<AggregateResult>(status);
  status = result.status();
  if (result.ok()) {
    v1::AggregateChunk chunk;
    v1::AggregateHeader* header = chunk.mutable_header();
    header->mutable_batch_ids()->Assign(result->batch_ids.begin(), result->batch_ids.end());
    header->set_jobs(result->jobs);
    header->set_cycles(result->cycles);
    header->set_bytes(result->data.size());
    bool sent = writer->Write(chunk);
    for (size_t offset = 0; sent && offset < result->data.size(); offset += options_.chunk_bytes) {
      chunk.set_data(result->data.substr(offset, options_.chunk_bytes));
      sent = writer->Write(chunk);
    }
    if (!sent) status = absl::CancelledError("client went away");
  }
  return ToGrpcStatus(log.Done(status));
}

grpc::Status CoordinatorServiceImpl::LeaseTask(grpc::ServerContext* context,
                                               const v1::LeaseTaskRequest* request,
                                               v1::LeaseTaskResponse* response) {
  RpcLog log("LeaseTask", request->worker_id());
  // Bounded long-polls: each one holds a server thread while it waits.
  const size_t polls = lease_polls_.fetch_add(1) + 1;
  struct PollSlot {
    std::atomic<size_t>* count;
    ~PollSlot() { count->fetch_sub(1); }
  } slot{&lease_polls_};
  if (options_.max_lease_polls != 0 && polls > options_.max_lease_polls) {
    return ToGrpcStatus(log.Done(absl::ResourceExhaustedError(absl::StrCat(
        "LeaseTask: ", options_.max_lease_polls,
        " long-polls are already waiting, the limit of --max-lease-polls; retry later"))));
  }
  if (!worker_leases_.TryReserve(request->worker_id(), absl::Now())) {
    return ToGrpcStatus(log.Done(absl::ResourceExhaustedError(absl::StrCat(
        "worker \"", request->worker_id(), "\": already holds ", options_.max_leases_per_worker,
        " leases, the limit of max_leases_per_worker; no more until one "
        "ends"))));
  }
  absl::Duration wait = std::min(absl::Milliseconds(request->wait_ms()), options_.max_lease_wait);
  std::vector<std::string> cached(request->cached_library_digests().begin(),
                                  request->cached_library_digests().end());
  absl::StatusOr<std::optional<v1::Task>> task = manager_->LeaseTask(
      request->worker_id(), wait, cached, [context] { return context->IsCancelled(); });
  if (task.ok() && !task->has_value() && context->IsCancelled()) {
    worker_leases_.CancelReservation(request->worker_id());
    return ToGrpcStatus(log.Done(absl::CancelledError("worker went away")));
  }
  if (task.ok() && task->has_value() && context->IsCancelled()) {
    // The worker gave up waiting; do not let the task sit on a lease nobody
    // holds: back to the front of the queue, the attempt not counted.
    manager_->ReleaseTask((*task)->task_id(), (*task)->lease_id());
    worker_leases_.CancelReservation(request->worker_id());
    return ToGrpcStatus(log.Done(absl::CancelledError("worker went away")));
  }
  if (task.ok() && task->has_value()) {
    worker_leases_.Commit(request->worker_id(), (*task)->task_id(), (*task)->lease_id(),
                          absl::Now() + absl::Milliseconds((*task)->lease_ms()));
  } else {
    worker_leases_.CancelReservation(request->worker_id());
  }
  if (task.ok() && task->has_value()) {
    log.set_id(absl::StrCat(request->worker_id(), " -> ", (*task)->task_id(), " attempt ",
                            (*task)->attempt()));
    *response->mutable_task() = std::move(**task);
  }
  return ToGrpcStatus(log.Done(task.status()));
}

grpc::Status CoordinatorServiceImpl::RenewLease(grpc::ServerContext* /*context*/,
                                                const v1::RenewLeaseRequest* request,
                                                v1::RenewLeaseResponse* response) {
  RpcLog log("RenewLease", request->task_id());
  std::optional<absl::Duration> lease =
      manager_->RenewLease(request->task_id(), request->lease_id());
  response->set_ok(lease.has_value());
  if (lease) {
    worker_leases_.Renew(request->task_id(), request->lease_id(), absl::Now() + *lease);
  } else {
    worker_leases_.End(request->task_id(), request->lease_id());
  }
  if (lease) response->set_lease_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(*lease)));
  return ToGrpcStatus(log.Done(absl::OkStatus()));
}

grpc::Status CoordinatorServiceImpl::CompleteTask(grpc::ServerContext* context,
                                                  grpc::ServerReader<v1::CompleteTaskChunk>* reader,
                                                  v1::CompleteTaskResponse* response) {
  RpcLog log("CompleteTask", "");
  v1::CompleteTaskChunk chunk;
  absl::Status status;
  if (!reader->Read(&chunk) || !chunk.has_header()) {
    status = absl::InvalidArgumentError("header: the first chunk must carry the TaskHeader");
  }
  v1::TaskHeader header = chunk.header();
  log.set_id(header.task_id());
  if (status.ok() && header.profile_bytes() > options_.max_profile_bytes) {
    status = absl::ResourceExhaustedError(absl::StrCat(
        "header.profile_bytes: ", header.profile_bytes(), " bytes exceeds the limit of ",
        options_.max_profile_bytes, " bytes (--max-profile-bytes)"));
  }
  if (status.ok() && header.summary_bytes() > runner::kMaxSummaryBytes) {
    status = absl::ResourceExhaustedError(
        absl::StrCat("header.summary_bytes: ", header.summary_bytes(),
                     " bytes exceeds the limit of ", runner::kMaxSummaryBytes, " bytes"));
  }
  // What a worker reports is stored and served in every GetBatch/WatchBatch: bounded.
  if (header.error().size() > options_.max_error_bytes) {
    header.set_error(internal::TruncateMiddle(header.error(), options_.max_error_bytes));
  }
  if (static_cast<size_t>(header.stack_size()) > internal::kMaxResultStackValues) {
    header.mutable_stack()->Truncate(static_cast<int>(internal::kMaxResultStackValues));
  }
  // The bytes held in memory until the result is stored count against the budget shared by
  // every stream; a stream that does not fit waits, then is refused (the worker retries).
  const size_t reserved = status.ok() ? header.profile_bytes() + header.summary_bytes() : 0;
  if (status.ok()) {
    status = result_budget_.Acquire(reserved, options_.result_budget_wait,
                                    [context] { return context->IsCancelled(); });
    if (!status.ok()) {
      status =
          absl::Status(status.code(), absl::StrCat("header.profile_bytes: ", status.message()));
    }
  }
  const bool budgeted = status.ok();
  std::string profile, summary;
  if (status.ok()) {
    profile.reserve(header.profile_bytes());
    summary.reserve(header.summary_bytes());
  }
  // The profile's chunks, then the summary's.
  while (status.ok() && reader->Read(&chunk)) {
    if (chunk.has_profile_data()) {
      if (!summary.empty()) {
        status = absl::InvalidArgumentError("profile_data: sent after summary_data");
      } else if (profile.size() + chunk.profile_data().size() > header.profile_bytes()) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "profile_data: more than header.profile_bytes = ", header.profile_bytes()));
      } else {
        profile += chunk.profile_data();
      }
    } else if (chunk.has_summary_data()) {
      if (summary.size() + chunk.summary_data().size() > header.summary_bytes()) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "summary_data: more than header.summary_bytes = ", header.summary_bytes()));
      } else {
        summary += chunk.summary_data();
      }
    } else {
      status = absl::InvalidArgumentError("header: sent twice");
    }
  }
  if (status.ok() && profile.size() != header.profile_bytes()) {
    status = absl::InvalidArgumentError(absl::StrCat("profile_data: received ", profile.size(),
                                                     " bytes, header.profile_bytes says ",
                                                     header.profile_bytes()));
  }
  if (status.ok() && summary.size() != header.summary_bytes()) {
    status = absl::InvalidArgumentError(absl::StrCat("summary_data: received ", summary.size(),
                                                     " bytes, header.summary_bytes says ",
                                                     header.summary_bytes()));
  }
  if (status.ok()) {
    absl::StatusOr<bool> accepted = manager_->CompleteTask(header, profile, summary);
    status = accepted.status();
    // Accepted or stale, the lease is over (a malformed upload keeps it live).
    if (accepted.ok()) worker_leases_.End(header.task_id(), header.lease_id());
    if (accepted.ok()) {
      response->set_accepted(*accepted);
      if (!*accepted) log.set_id(absl::StrCat(header.task_id(), " (rejected: stale or duplicate)"));
    }
  }
  if (budgeted) {
    // No copy of the result outlives the call: free it, then give the bytes back.
    std::string().swap(profile);
    std::string().swap(summary);
    chunk.Clear();
    result_budget_.Release(reserved);
    // glibc keeps freed large blocks in its arenas; give them back to the OS after a large
    // result so that RSS falls after a burst of uploads.
    if (reserved >= kTrimAfterBytes) malloc_trim(0);
  }
  return ToGrpcStatus(log.Done(status));
}

}  // namespace flamefleet::coordinator
