// flamefleet-worker: leases tasks from a coordinator and runs them in the VM.
//
//   flamefleet-worker --coordinator 127.0.0.1:7000 [--slots N] [--worker-id ID]
//
// SIGTERM / SIGINT stop leasing at once; running tasks get --grace to finish
// and report, then they are abandoned (their leases expire and the coordinator
// re-queues them).
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/channel.h"
#include "common/logging.h"
#include "common/service_main.h"
#include "common/server.h"
#include "worker/worker.h"

ABSL_FLAG(std::string, coordinator, "",
          "coordinator address (host:port), required");
ABSL_FLAG(int, slots, 0, "tasks run in parallel (0 = number of cores)");
ABSL_FLAG(std::string, worker_id, "",
          "worker id reported to the coordinator (default host-pid)");
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
  flamefleet::InitServiceMain(
      argc, argv, "flamefleet-worker --coordinator ADDR [--slots N] [--worker-id ID]");

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
  if (options.slots == 0)
    options.slots = static_cast<int>(std::thread::hardware_concurrency());
  if (options.slots == 0) options.slots = 1;
  options.worker_id = absl::GetFlag(FLAGS_worker_id);
  if (options.worker_id.empty()) options.worker_id = DefaultWorkerId();

  flamefleet::worker::Worker worker(flamefleet::v1::Coordinator::NewStub(
                                        flamefleet::MakeChannel(coordinator)),
                                    options);
  worker.Start();
  LOG(INFO) << "worker " << options.worker_id << ": " << options.slots
            << " slots, coordinator " << coordinator;
  flamefleet::WaitForShutdownSignal();
  LOG(INFO) << "worker " << options.worker_id << ": stopping";
  worker.Stop(absl::GetFlag(FLAGS_grace));
  const flamefleet::worker::WorkerStats stats = worker.stats();
  LOG(INFO) << "worker " << options.worker_id
            << ": stopped; succeeded=" << stats.tasks_succeeded
            << " failed=" << stats.tasks_failed
            << " abandoned=" << stats.tasks_abandoned;
  return EXIT_SUCCESS;
}
