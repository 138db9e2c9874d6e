// flamefleet-coordinator: serves flamefleet.v1.Coordinator (plus health and
// reflection).
//
//   flamefleet-coordinator --listen 127.0.0.1:0 --state-dir /var/lib/flamefleet
//       [--renderer HOST:PORT] [--renderer-lb round_robin] [--port-file PATH]
//       [--lease-ms 10000] [--keep-days N] [--schedule longest-first|fifo]
//
// Without --renderer, SVGs are rendered in this process. SIGTERM / SIGINT drain
// and exit 0.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "common/channel.h"
#include "common/logging.h"
#include "common/server.h"
#include "common/service_main.h"
#include "coordinator/coordinator_service.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0",
          "host:port to listen on (port 0: OS-chosen)");
ABSL_FLAG(std::string, state_dir, "",
          "directory for state.db and artifacts (required)");
ABSL_FLAG(std::string, renderer, "",
          "renderer service address; empty: render in process");
ABSL_FLAG(std::string, port_file, "",
          "write the chosen port here as \"PORT\\n\"");
ABSL_FLAG(int, lease_ms, 10000, "task lease length in milliseconds");
ABSL_FLAG(int, render_deadline_ms, 120000, "deadline of one Render call");
ABSL_FLAG(std::string, renderer_lb, "",
          "load-balancing policy of the renderer channel (e.g. round_robin "
          "over a dns:/// name); empty: gRPC's default (pick_first)");
ABSL_FLAG(double, keep_days, 0,
          "remove batches (and their artifacts) that ended more than this many "
          "days ago; 0 keeps everything");
ABSL_FLAG(std::string, schedule, "longest-first",
          "queue order: longest-first (by cycles of earlier runs of the same "
          "program; unknown first) or fifo");

namespace flamefleet::coordinator {
namespace {

int Run() {
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
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store =
      SqliteJobStore::Open(state_dir);
  if (!store.ok()) {
    LOG(ERROR) << "cannot open state dir: " << store.status();
    return 1;
  }
  std::unique_ptr<RenderClient> render;
  std::string renderer = absl::GetFlag(FLAGS_renderer);
  if (renderer.empty()) {
    render = std::make_unique<InProcessRenderClient>();
  } else {
    render = std::make_unique<GrpcRenderClient>(
        MakeChannel(renderer, 64 << 20, absl::GetFlag(FLAGS_renderer_lb)),
        absl::Milliseconds(absl::GetFlag(FLAGS_render_deadline_ms)));
  }
  RealClock clock;
  JobScheduler scheduler(
      &clock, SchedulerOptions{.lease_duration = absl::Milliseconds(lease_ms),
                               .longest_first = schedule == "longest-first"});
  BatchManager manager(
      store->get(), &scheduler, render.get(), &clock,
      BatchManagerOptions{
          .sweep_interval =
              std::min(absl::Seconds(1), absl::Milliseconds(lease_ms) / 4),
          .keep_for = absl::Hours(24 * keep_days)});
  absl::Status recovered = manager.Recover();
  if (!recovered.ok()) {
    LOG(ERROR) << "cannot load state: " << recovered;
    return 1;
  }
  CoordinatorServiceImpl service(&manager, {});
  ServerOptions server_options;
  server_options.listen = absl::GetFlag(FLAGS_listen);
  server_options.port_file = absl::GetFlag(FLAGS_port_file);
  absl::StatusOr<std::unique_ptr<GrpcServer>> server =
      GrpcServer::Start(server_options, {&service});
  if (!server.ok()) {
    LOG(ERROR) << "cannot start server: " << server.status();
    return 1;
  }
  LOG(INFO) << "coordinator listening on port " << (*server)->port()
            << ", state in " << state_dir << ", rendering "
            << (renderer.empty() ? std::string("in process")
                                 : "via " + renderer);
  AnnounceListening((*server)->port());
  WaitForShutdownSignal();
  LOG(INFO) << "shutting down";
  manager.Shutdown();  // wakes long-polls and watchers so the drain is quick
  (*server)->Shutdown(absl::Seconds(10));
  return 0;
}

}  // namespace
}  // namespace flamefleet::coordinator

int main(int argc, char** argv) {
  flamefleet::InitServiceMain(argc, argv,
                              "flamefleet-coordinator --state-dir DIR [--listen ADDR] "
                              "[--renderer ADDR] [--port-file PATH] [--lease-ms N]");
  return flamefleet::coordinator::Run();
}
