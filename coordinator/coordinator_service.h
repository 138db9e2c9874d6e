// The coordinator component: where to start reading.
//
// flamefleet's coordinator accepts batches of MASM jobs from the CLI, hands
// them to pull-based workers under leases, merges the returned profiles exactly
// once into a batch aggregate, and serves flame graphs and folded stacks. It is
// split by concern:
//
//   coordinator_service.h  CoordinatorServiceImpl: gRPC glue only (validate,
//                          call the BatchManager, fill the response, map the
//                          status)
//   batch_manager.h        BatchManager: batch lifecycle, job states, watch
//                          versions, finalizing (merge + render)
//   run_history.h          RunHistory: the batches held, list/aggregate
//                          queries, retention candidates, cycle history
//   result_cache.h         ResultCache: jobs answered by an identical run
//   artifacts.h            Artifacts: aggregate, folded and SVG artifacts
//   scheduler.h            JobScheduler: queue, leases, expiry, retries,
//                          exactly-once completion
//   profile_merger.h       ProfileMerger: the aggregate, an exact sum
//   render_client.h        RenderClient: SVGs via the renderer or in process
//   job_store.h            JobStore: SQLite + digest-named files, or memory
//   clock.h                Clock: real or fake time
//
//   SqliteJobStore store = ...; RealClock clock; InProcessRenderClient render;
//   JobScheduler scheduler(&clock, {});
//   BatchManager manager(store.get(), &scheduler, &render, &clock, {});
//   FLAMEFLEET_RETURN_IF_ERROR(manager.Recover());
//   CoordinatorServiceImpl service(&manager, {});
//   FLAMEFLEET_ASSIGN_OR_RETURN(auto server,
//                               GrpcServer::Start(options, {&service}));
//
// Streams: WatchBatch sends the current Batch at once (with per-job statuses),
// then one Batch per change (counts only; changes that happen faster than the
// client reads are coalesced), and a final one with per-job statuses when the
// batch ends. FetchArtifact sends the artifact in `chunk_bytes` pieces.
// CompleteTask expects a TaskHeader first, then the serialized Profile in
// profile_data chunks whose total must equal header.profile_bytes, then the job's
// serialized JobSummary in summary_data chunks whose total must equal
// header.summary_bytes (at most runner::kMaxSummaryBytes).
//
// Thread-safety: the service is stateless apart from its options; all handlers
// may run concurrently (the BatchManager synchronises).
#ifndef FLAMEFLEET_COORDINATOR_COORDINATOR_SERVICE_H_
#define FLAMEFLEET_COORDINATOR_COORDINATOR_SERVICE_H_

#include <atomic>
#include <cstddef>

#include "absl/time/time.h"
#include "coordinator/batch_manager.h"
#include "coordinator/internal/byte_budget.h"
#include "coordinator/internal/validation.h"
#include "coordinator/internal/worker_leases.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"

namespace flamefleet::coordinator {

// Defaults of the limits below (flags of flamefleet-coordinator in brackets).
// Longest LeaseTask long-poll honoured; a larger wait_ms is clamped [--max-lease-wait-ms].
inline constexpr absl::Duration kDefaultMaxLeaseWait = absl::Seconds(30);
// Most LeaseTask calls waiting at once; more are answered RESOURCE_EXHAUSTED at once (workers
// back off) [--max-lease-polls].
inline constexpr size_t kDefaultMaxLeasePolls = 512;
// Bytes of CompleteTask results held in memory at once, over all streams
// [--max-inflight-result-bytes].
inline constexpr size_t kDefaultMaxInflightResultBytes = size_t{512} << 20;
// How long a CompleteTask stream waits for room in that budget before RESOURCE_EXHAUSTED
// [--result-budget-wait-ms].
inline constexpr absl::Duration kDefaultResultBudgetWait = absl::Seconds(10);

struct CoordinatorServiceOptions {
  // Limits on SubmitBatch requests (jobs, program size, request size, cycle cap
  // ceiling). A request without max_cycles gets submit_limits.max_cycle_cap
  // (when set) as its cap, one without max_memory_bytes max_memory_cap.
  internal::SubmitLimits submit_limits;
  // Unexpired leases one worker may hold; at the limit LeaseTask answers
  // RESOURCE_EXHAUSTED (the worker backs off) until one ends. 0 = unlimited.
  size_t max_leases_per_worker = 0;
  // FetchArtifact chunk size.
  size_t chunk_bytes = 1 << 20;
  // Largest profile a worker may upload with CompleteTask.
  size_t max_profile_bytes = size_t{512} << 20;
  // Longest LeaseTask long-poll honoured (a larger wait_ms is clamped).
  absl::Duration max_lease_wait = kDefaultMaxLeaseWait;
  // LeaseTask calls in progress at once (0 = unlimited); beyond it RESOURCE_EXHAUSTED. A
  // poll whose client cancels ends within JobScheduler's kGoneCheckInterval and is never
  // handed a task; one handed a task just before that gives it back (front of the queue, no
  // attempt counted).
  size_t max_lease_polls = kDefaultMaxLeasePolls;
  // Budget of result bytes held by CompleteTask streams at once (0 = unlimited) and how long a
  // stream waits for room before RESOURCE_EXHAUSTED (the worker retries later).
  size_t max_inflight_result_bytes = kDefaultMaxInflightResultBytes;
  absl::Duration result_budget_wait = kDefaultResultBudgetWait;
  // Longest error message stored for a job: a worker's longer one is cut in the middle
  // (internal::TruncateMiddle). The final stack keeps its top kMaxResultStackValues values.
  size_t max_error_bytes = internal::kDefaultMaxErrorBytes;
  // How often a WatchBatch stream checks whether its client went away.
  absl::Duration watch_poll = absl::Seconds(1);
};

class CoordinatorServiceImpl final : public v1::Coordinator::Service {
 public:
  // `manager` is not owned and must outlive the service.
  CoordinatorServiceImpl(BatchManager* manager, CoordinatorServiceOptions options);

  grpc::Status SubmitBatch(grpc::ServerContext* context, const v1::SubmitBatchRequest* request,
                           v1::SubmitBatchResponse* response) override;
  grpc::Status GetBatch(grpc::ServerContext* context, const v1::GetBatchRequest* request,
                        v1::Batch* response) override;
  grpc::Status ListBatches(grpc::ServerContext* context, const v1::ListBatchesRequest* request,
                           v1::ListBatchesResponse* response) override;
  grpc::Status WatchBatch(grpc::ServerContext* context, const v1::WatchBatchRequest* request,
                          grpc::ServerWriter<v1::Batch>* writer) override;
  grpc::Status CancelBatch(grpc::ServerContext* context, const v1::CancelBatchRequest* request,
                           v1::Batch* response) override;
  grpc::Status FetchArtifact(grpc::ServerContext* context, const v1::FetchArtifactRequest* request,
                             grpc::ServerWriter<v1::ArtifactChunk>* writer) override;
  grpc::Status Aggregate(grpc::ServerContext* context, const v1::AggregateRequest* request,
                         grpc::ServerWriter<v1::AggregateChunk>* writer) override;
  grpc::Status LeaseTask(grpc::ServerContext* context, const v1::LeaseTaskRequest* request,
                         v1::LeaseTaskResponse* response) override;
  grpc::Status RenewLease(grpc::ServerContext* context, const v1::RenewLeaseRequest* request,
                          v1::RenewLeaseResponse* response) override;
  grpc::Status CompleteTask(grpc::ServerContext* context,
                            grpc::ServerReader<v1::CompleteTaskChunk>* reader,
                            v1::CompleteTaskResponse* response) override;

  // Returns the LeaseTask calls in progress (waiting or about to return).
  size_t lease_polls_in_progress() const { return lease_polls_.load(); }
  // Returns the result bytes CompleteTask streams hold now (see
  // max_inflight_result_bytes).
  size_t result_bytes_in_flight() const { return result_budget_.in_use(); }

 private:
  BatchManager* const manager_;
  const CoordinatorServiceOptions options_;
  internal::WorkerLeases worker_leases_;
  internal::ByteBudget result_budget_;
  std::atomic<size_t> lease_polls_{0};  // LeaseTask calls in progress
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_COORDINATOR_SERVICE_H_
