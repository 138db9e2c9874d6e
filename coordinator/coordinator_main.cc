// flamefleet-coordinator: serves flamefleet.v1.Coordinator (plus health and
// reflection).
//
//   flamefleet-coordinator --listen 127.0.0.1:0 --state-dir /var/lib/flamefleet
//       [--renderer HOST:PORT] [--renderer-lb round_robin] [--port-file PATH]
//       [--lease-ms 10000] [--keep-days N] [--schedule longest-first|fifo]
//       [--render-deadline-ms 120000] [--render-retry-ms 5000]
//       [--aggregate-render-deadline-ms 5000]
//       [--tls-cert FILE --tls-key FILE] [--tls-ca FILE] [--tls-client-auth]
//       [--auth-token-file FILE] [--health-listen ADDR] [--max-message-bytes N]
//       [--max-jobs-per-batch N] [--max-program-bytes N] [--max-request-bytes N]
//       [--max-cycle-cap N] [--max-memory-cap BYTES] [--max-leases-per-worker N]
//       [--max-name-bytes N] [--max-labels N] [--max-error-bytes N]
//       [--max-lease-wait-ms N] [--max-lease-polls N] [--max-server-threads N]
//       [--max-profile-bytes N] [--max-inflight-result-bytes N] [--result-budget-wait-ms N]
//       [--http-listen ADDR] [--http-jobs-per-page N] [--http-summary-rows N]
//
// --http-listen serves the web view (coordinator/web/web_server.h) on a second port, off by
// default; port 0 prints "HTTP_LISTENING <port>" after "LISTENING <port>". With the TLS flags it
// serves HTTPS, with --auth-token-file it needs the same token as the gRPC API.
//
// The state dir is locked (DIR/LOCK, flock) while the coordinator runs: a second one on the
// same dir exits 1 naming the holder's pid. Every port refuses to be shared (no SO_REUSEPORT):
// a port in use makes the coordinator exit 1 with "address already in use".
//
// Without --renderer, SVGs are rendered in this process. The TLS identity and
// token are also used to call the renderer. SIGTERM / SIGINT drain and exit 0.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/channel.h"
#include "common/logging.h"
#include "common/server.h"
#include "common/service_flags.h"
#include "common/service_main.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/web/web_server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to listen on (port 0: OS-chosen)");
ABSL_FLAG(std::string, state_dir, "", "directory for state.db and artifacts (required)");
ABSL_FLAG(std::string, renderer, "", "renderer service address; empty: render in process");
ABSL_FLAG(std::string, port_file, "", "write the chosen port here as \"PORT\\n\"");
ABSL_FLAG(int, lease_ms, 10000, "task lease length in milliseconds");
ABSL_FLAG(int, render_deadline_ms, 120000, "deadline of one Render call");
ABSL_FLAG(
    int, render_retry_ms,
    static_cast<int>(absl::ToInt64Milliseconds(flamefleet::coordinator::kDefaultRenderRetryFor)),
    "how long a Render call that fails with UNAVAILABLE (renderer "
    "restarting) is retried with backoff, within its deadline");
ABSL_FLAG(int, aggregate_render_deadline_ms,
          static_cast<int>(
              absl::ToInt64Milliseconds(flamefleet::coordinator::kDefaultAggregateRenderDeadline)),
          "deadline of the aggregate SVG render when a batch ends (the batch "
          "ends first; on failure the first fetch renders it)");
ABSL_FLAG(std::string, renderer_lb, "",
          "load-balancing policy of the renderer channel (e.g. round_robin "
          "over a dns:/// name); empty: gRPC's default (pick_first)");
ABSL_FLAG(double, keep_days, 0,
          "remove batches (and their artifacts) that ended more than this many "
          "days ago; 0 keeps everything");
ABSL_FLAG(std::string, schedule, "longest-first",
          "queue order: longest-first (by cycles of earlier runs of the same "
          "program; unknown first) or fifo");
ABSL_FLAG(int64_t, max_jobs_per_batch, 10000, "most jobs in one SubmitBatch");
ABSL_FLAG(int64_t, max_program_bytes, 1 << 20,
          "largest program, inputs file or library file of a batch, in bytes");
ABSL_FLAG(int64_t, max_request_bytes, 48 << 20, "largest serialized SubmitBatch request, in bytes");
ABSL_FLAG(uint64_t, max_cycle_cap, 0,
          "ceiling of a batch's max_cycles; batches without a cap get it (0: none, "
          "workers default to 2^32)");
ABSL_FLAG(uint64_t, max_memory_cap, 0,
          "ceiling of a batch's max_memory_bytes (per-job VM memory budget); batches without "
          "a budget get it (0: none, workers default to 1 GiB)");
ABSL_FLAG(int64_t, max_leases_per_worker, 0,
          "unexpired leases one worker id may hold (0: unlimited)");
ABSL_FLAG(int64_t, max_name_bytes,
          static_cast<int64_t>(flamefleet::coordinator::internal::kDefaultMaxNameBytes),
          "longest label key or value, title, request id, job name, library namespace or "
          "library file path of a batch, in bytes");
ABSL_FLAG(int64_t, max_labels,
          static_cast<int64_t>(flamefleet::coordinator::internal::kDefaultMaxLabels),
          "most labels on one batch");
ABSL_FLAG(int64_t, max_error_bytes,
          static_cast<int64_t>(flamefleet::coordinator::internal::kDefaultMaxErrorBytes),
          "longest job error message stored; a worker's longer one keeps its head and tail "
          "and says how many bytes were cut");
ABSL_FLAG(int64_t, max_lease_wait_ms,
          absl::ToInt64Milliseconds(flamefleet::coordinator::kDefaultMaxLeaseWait),
          "longest LeaseTask long-poll honoured; a larger wait_ms is clamped");
ABSL_FLAG(int64_t, max_lease_polls,
          static_cast<int64_t>(flamefleet::coordinator::kDefaultMaxLeasePolls),
          "most LeaseTask long-polls waiting at once; more get RESOURCE_EXHAUSTED (workers "
          "back off); 0: unlimited");
ABSL_FLAG(int64_t, max_profile_bytes, int64_t{512} << 20,
          "largest profile one CompleteTask may upload, in bytes");
ABSL_FLAG(int64_t, max_inflight_result_bytes,
          static_cast<int64_t>(flamefleet::coordinator::kDefaultMaxInflightResultBytes),
          "bytes of CompleteTask results held in memory at once over all uploads; an upload "
          "that does not fit waits --result-budget-wait-ms, then gets RESOURCE_EXHAUSTED and "
          "the worker retries; 0: unlimited");
ABSL_FLAG(int64_t, result_budget_wait_ms,
          absl::ToInt64Milliseconds(flamefleet::coordinator::kDefaultResultBudgetWait),
          "how long an upload waits for room in --max-inflight-result-bytes");
ABSL_FLAG(int64_t, max_server_threads, flamefleet::kDefaultMaxServerThreads,
          "most threads serving RPCs (each long-poll, watch and upload holds one); beyond it "
          "gRPC answers RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, http_listen, "",
          "host:port of the web view (port 0: OS-chosen, printed as HTTP_LISTENING); empty: off");
ABSL_FLAG(int64_t, http_jobs_per_page,
          static_cast<int64_t>(flamefleet::coordinator::kDefaultJobsPerPage),
          "jobs in one page of a batch's job table in the web view (at most 10000)");
ABSL_FLAG(int64_t, http_summary_rows,
          static_cast<int64_t>(flamefleet::coordinator::kDefaultSummaryRows),
          "rows of each summary table (procedures, phases) on a batch's web page (at most 10000)");
namespace flamefleet::coordinator {
namespace {

// Reads the limit flags; InvalidArgument naming a flag that is out of range.
absl::StatusOr<CoordinatorServiceOptions> ServiceOptionsFromFlags() {
  CoordinatorServiceOptions options;
  struct {
    const char* name;
    int64_t value;
    int64_t min;
  } const checks[] = {
      {"--max-jobs-per-batch", absl::GetFlag(FLAGS_max_jobs_per_batch), 1},
      {"--max-program-bytes", absl::GetFlag(FLAGS_max_program_bytes), 1},
      {"--max-request-bytes", absl::GetFlag(FLAGS_max_request_bytes), 1},
      {"--max-leases-per-worker", absl::GetFlag(FLAGS_max_leases_per_worker), 0},
      {"--max-name-bytes", absl::GetFlag(FLAGS_max_name_bytes), 1},
      {"--max-labels", absl::GetFlag(FLAGS_max_labels), 0},
      {"--max-error-bytes", absl::GetFlag(FLAGS_max_error_bytes), 64},
      {"--max-lease-wait-ms", absl::GetFlag(FLAGS_max_lease_wait_ms), 0},
      {"--max-lease-polls", absl::GetFlag(FLAGS_max_lease_polls), 0},
      {"--max-profile-bytes", absl::GetFlag(FLAGS_max_profile_bytes), 1},
      {"--max-inflight-result-bytes", absl::GetFlag(FLAGS_max_inflight_result_bytes), 0},
      {"--result-budget-wait-ms", absl::GetFlag(FLAGS_result_budget_wait_ms), 0},
      {"--max-server-threads", absl::GetFlag(FLAGS_max_server_threads), 0},
  };
  for (const auto& c : checks) {
    if (c.value < c.min) {
      return absl::InvalidArgumentError(
          absl::StrCat(c.name, ": ", c.value, " is below the minimum of ", c.min));
    }
  }
  options.submit_limits.max_jobs = static_cast<size_t>(absl::GetFlag(FLAGS_max_jobs_per_batch));
  options.submit_limits.max_source_bytes =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_program_bytes));
  options.submit_limits.max_request_bytes =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_request_bytes));
  options.submit_limits.max_cycle_cap = absl::GetFlag(FLAGS_max_cycle_cap);
  options.submit_limits.max_memory_cap = absl::GetFlag(FLAGS_max_memory_cap);
  options.max_leases_per_worker = static_cast<size_t>(absl::GetFlag(FLAGS_max_leases_per_worker));
  options.submit_limits.max_name_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_max_name_bytes));
  options.submit_limits.max_labels = static_cast<size_t>(absl::GetFlag(FLAGS_max_labels));
  options.max_error_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_max_error_bytes));
  options.max_lease_wait = absl::Milliseconds(absl::GetFlag(FLAGS_max_lease_wait_ms));
  options.max_lease_polls = static_cast<size_t>(absl::GetFlag(FLAGS_max_lease_polls));
  options.max_profile_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_max_profile_bytes));
  options.max_inflight_result_bytes =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_inflight_result_bytes));
  options.result_budget_wait = absl::Milliseconds(absl::GetFlag(FLAGS_result_budget_wait_ms));
  return options;
}

int Run() {
  absl::StatusOr<ServiceFlags> flags = ReadServiceFlags();
  if (!flags.ok()) {
    LOG(ERROR) << flags.status().message();
    return 2;
  }
  absl::StatusOr<CoordinatorServiceOptions> service_options = ServiceOptionsFromFlags();
  if (!service_options.ok()) {
    LOG(ERROR) << service_options.status().message();
    return 2;
  }
  std::string state_dir = absl::GetFlag(FLAGS_state_dir);
  if (state_dir.empty()) {
    LOG(ERROR) << "--state-dir is required";
    return 2;
  }
  int lease_ms = absl::GetFlag(FLAGS_lease_ms);
  if (lease_ms <= 0) {
    LOG(ERROR) << "--lease-ms must be positive";
    return 2;
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"--render-deadline-ms",
                                    absl::GetFlag(FLAGS_render_deadline_ms)},
        {"--aggregate-render-deadline-ms", absl::GetFlag(FLAGS_aggregate_render_deadline_ms)}}) {
    if (value <= 0) {
      LOG(ERROR) << name << " must be positive, not " << value;
      return 2;
    }
  }
  if (absl::GetFlag(FLAGS_render_retry_ms) < 0) {
    LOG(ERROR) << "--render-retry-ms must be zero (no retry) or positive";
    return 2;
  }
  const double keep_days = absl::GetFlag(FLAGS_keep_days);
  if (!(keep_days >= 0)) {
    LOG(ERROR) << "--keep-days must be zero or positive";
    return 2;
  }
  const std::string schedule = absl::GetFlag(FLAGS_schedule);
  if (schedule != "longest-first" && schedule != "fifo") {
    LOG(ERROR) << "--schedule must be longest-first or fifo, not \"" << schedule << "\"";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(state_dir);
  if (!store.ok()) {
    LOG(ERROR) << "cannot open state dir: " << store.status();
    return 1;
  }
  std::unique_ptr<RenderClient> render;
  std::string renderer = absl::GetFlag(FLAGS_renderer);
  LogServiceSecurity(flags->security, /*serves=*/true,
                     /*calls=*/!renderer.empty());
  if (renderer.empty()) {
    render = std::make_unique<InProcessRenderClient>();
  } else {
    render = std::make_unique<GrpcRenderClient>(
        MakeChannel(renderer, flags->security, flags->max_message_bytes,
                    absl::GetFlag(FLAGS_renderer_lb)),
        absl::Milliseconds(absl::GetFlag(FLAGS_render_deadline_ms)), renderer,
        absl::Milliseconds(absl::GetFlag(FLAGS_render_retry_ms)));
  }
  RealClock clock;
  JobScheduler scheduler(&clock, SchedulerOptions{.lease_duration = absl::Milliseconds(lease_ms),
                                                  .longest_first = schedule == "longest-first"});
  BatchManager manager(
      store->get(), &scheduler, render.get(), &clock,
      BatchManagerOptions{
          .sweep_interval = std::min(absl::Seconds(1), absl::Milliseconds(lease_ms) / 4),
          .keep_for = absl::Hours(24 * keep_days),
          .aggregate_render_deadline =
              absl::Milliseconds(absl::GetFlag(FLAGS_aggregate_render_deadline_ms))});
  absl::Status recovered = manager.Recover();
  if (!recovered.ok()) {
    LOG(ERROR) << "cannot load state: " << recovered;
    return 1;
  }
  CoordinatorServiceImpl service(&manager, *service_options);
  ServerOptions server_options;
  server_options.listen = absl::GetFlag(FLAGS_listen);
  server_options.port_file = absl::GetFlag(FLAGS_port_file);
  server_options.max_message_bytes = flags->max_message_bytes;
  server_options.security = flags->security;
  server_options.health_listen = flags->health_listen;
  server_options.max_threads =
      static_cast<int>(std::min<int64_t>(absl::GetFlag(FLAGS_max_server_threads), 1 << 20));
  absl::StatusOr<std::unique_ptr<GrpcServer>> server =
      GrpcServer::Start(server_options, {&service});
  if (!server.ok()) {
    LOG(ERROR) << "cannot start server: " << server.status();
    return 1;
  }
  std::unique_ptr<WebServer> web;
  const std::string http_listen = absl::GetFlag(FLAGS_http_listen);
  if (!http_listen.empty()) {
    const int64_t jobs_per_page = absl::GetFlag(FLAGS_http_jobs_per_page);
    const int64_t summary_rows = absl::GetFlag(FLAGS_http_summary_rows);
    absl::StatusOr<std::unique_ptr<WebServer>> started = WebServer::Start(
        &manager,
        WebServerOptions{.listen = http_listen,
                         .security = flags->security,
                         .jobs_per_page = static_cast<size_t>(std::max<int64_t>(0, jobs_per_page)),
                         .summary_rows = static_cast<size_t>(std::max<int64_t>(0, summary_rows))});
    if (!started.ok()) {
      LOG(ERROR) << "cannot start the web view: " << started.status().message();
      (*server)->Shutdown(absl::Seconds(1));
      return absl::IsInvalidArgument(started.status()) ? 2 : 1;
    }
    web = *std::move(started);
  }
  LOG(INFO) << "coordinator listening on port " << (*server)->port() << ", state in " << state_dir
            << ", rendering " << (renderer.empty() ? std::string("in process") : "via " + renderer);
  AnnounceListening((*server)->port());
  if (!flags->health_listen.empty()) {
    AnnounceHealthListening(flags->health_listen, (*server)->health_port());
  }
  if (web != nullptr) AnnounceHttpListening(http_listen, web->port(), web->https());
  WaitForShutdownSignal();
  LOG(INFO) << "shutting down";
  if (web != nullptr) web->Shutdown();
  manager.Shutdown();  // wakes long-polls and watchers so the drain is quick
  (*server)->Shutdown(absl::Seconds(10));
  return 0;
}

}  // namespace
}  // namespace flamefleet::coordinator

int main(int argc, char** argv) {
  flamefleet::InitServiceMain(
      argc, argv,
      "flamefleet-coordinator --state-dir DIR [--listen ADDR] [--renderer ADDR] "
      "[--port-file PATH] [--lease-ms N] [--render-deadline-ms N] [--render-retry-ms N] "
      "[--aggregate-render-deadline-ms N] " FLAMEFLEET_SERVICE_FLAGS_USAGE
      " [--max-jobs-per-batch N] [--max-program-bytes N] [--max-request-bytes N] "
      "[--max-cycle-cap N] [--max-memory-cap BYTES] [--max-leases-per-worker N] "
      "[--max-name-bytes N] [--max-labels N] [--max-error-bytes N] [--max-lease-wait-ms N] "
      "[--max-lease-polls N] "
      "[--max-server-threads N] [--max-profile-bytes N] [--max-inflight-result-bytes N] "
      "[--result-budget-wait-ms N] [--http-listen ADDR] [--http-jobs-per-page N] "
      "[--http-summary-rows N]");
  return flamefleet::coordinator::Run();
}
