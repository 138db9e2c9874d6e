// flamefleet-worker: leases tasks from a coordinator and runs them in the VM.
//
//   flamefleet-worker --coordinator 127.0.0.1:7000 [--slots N] [--worker-id ID]
//       [--tls-cert FILE --tls-key FILE] [--tls-ca FILE] [--auth-token-file FILE]
//       [--health-listen ADDR] [--max-message-bytes N]
//
// With --tls-ca (or --tls-cert) the worker calls the coordinator over TLS, presenting
// --tls-cert/--tls-key as its client certificate; with --auth-token-file it sends the token.
// --health-listen serves grpc.health.v1.Health in plaintext (SERVING until SIGTERM).
//
// SIGTERM / SIGINT stop leasing at once; running tasks get --grace to finish
// and report, then they are abandoned (their leases expire and the coordinator
// re-queues them).
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

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
#include "worker/worker.h"

ABSL_FLAG(std::string, coordinator, "", "coordinator address (host:port), required");
ABSL_FLAG(int, slots, 0, "tasks run in parallel (0 = number of cores)");
ABSL_FLAG(std::string, worker_id, "", "worker id reported to the coordinator (default host-pid)");
ABSL_FLAG(absl::Duration, grace, absl::Seconds(20),
          "on SIGTERM, how long running tasks may take to finish and report");

namespace {

std::string DefaultWorkerId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return absl::StrCat(host[0] != '\0' ? host : "worker", "-", getpid());
}

}  // namespace

int main(int argc, char** argv) {
  flamefleet::InitServiceMain(argc, argv,
                              "flamefleet-worker --coordinator ADDR [--slots N] [--worker-id "
                              "ID] " FLAMEFLEET_SERVICE_FLAGS_USAGE);
  absl::StatusOr<flamefleet::ServiceFlags> flags = flamefleet::ReadServiceFlags();
  if (!flags.ok()) {
    std::cerr << "flamefleet-worker: " << flags.status().message() << "\n";
    return 2;
  }

  const std::string coordinator = absl::GetFlag(FLAGS_coordinator);
  if (coordinator.empty()) {
    std::cerr << "flamefleet-worker: --coordinator ADDR is required\n";
    return 2;
  }
  flamefleet::worker::WorkerOptions options;
  options.slots = absl::GetFlag(FLAGS_slots);
  if (options.slots < 0) {
    std::cerr << "flamefleet-worker: --slots must be >= 0\n";
    return 2;
  }
  if (options.slots == 0) options.slots = static_cast<int>(std::thread::hardware_concurrency());
  if (options.slots == 0) options.slots = 1;
  options.worker_id = absl::GetFlag(FLAGS_worker_id);
  if (options.worker_id.empty()) options.worker_id = DefaultWorkerId();

  flamefleet::LogServiceSecurity(flags->security, /*serves=*/false, /*calls=*/true);
  std::unique_ptr<flamefleet::HealthServer> health;
  if (!flags->health_listen.empty()) {
    absl::StatusOr<std::unique_ptr<flamefleet::HealthServer>> started =
        flamefleet::HealthServer::Start(flags->health_listen);
    if (!started.ok()) {
      LOG(ERROR) << "cannot start the health server: " << started.status();
      return 1;
    }
    health = std::move(*started);
  }

  flamefleet::worker::Worker worker(flamefleet::v1::Coordinator::NewStub(flamefleet::MakeChannel(
                                        coordinator, flags->security, flags->max_message_bytes)),
                                    options);
  worker.Start();
  if (health != nullptr) {
    flamefleet::AnnounceHealthListening(flags->health_listen, health->port());
  }
  LOG(INFO) << "worker " << options.worker_id << ": " << options.slots << " slots, coordinator "
            << coordinator;
  flamefleet::WaitForShutdownSignal();
  LOG(INFO) << "worker " << options.worker_id << ": stopping";
  if (health != nullptr) health->SetServing(false);
  worker.Stop(absl::GetFlag(FLAGS_grace));
  const flamefleet::worker::WorkerStats stats = worker.stats();
  LOG(INFO) << "worker " << options.worker_id << ": stopped; succeeded=" << stats.tasks_succeeded
            << " failed=" << stats.tasks_failed << " abandoned=" << stats.tasks_abandoned;
  if (health != nullptr) health->Shutdown();
  return EXIT_SUCCESS;
}
