#include "cli/local_fleet.h"

#include <signal.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace flamefleet::cli {

LocalFleet::~LocalFleet() { Stop(); }

absl::Status LocalFleet::Start(const std::string& state_dir, int workers, bool web) {
  auto renderer_bin = FindServiceBinary("flamefleet-renderer", "renderer");
  auto coordinator_bin = FindServiceBinary("flamefleet-coordinator", "coordinator");
  auto worker_bin = FindServiceBinary("flamefleet-worker", "worker");
  for (const auto* s : {&renderer_bin, &coordinator_bin, &worker_bin}) {
    if (!s->ok()) return s->status();
  }
  absl::MutexLock lock(&mu_);
  auto renderer = Subprocess::Start({*renderer_bin, "--listen", "127.0.0.1:0"});
  if (!renderer.ok()) return renderer.status();
  auto rport = (*renderer)->WaitForListeningPort(absl::Seconds(60));
  children_.push_back(std::move(*renderer));
  if (!rport.ok()) return rport.status();
  std::vector<std::string> coordinator_args = {*coordinator_bin,
                                               "--listen",
                                               "127.0.0.1:0",
                                               "--state-dir",
                                               state_dir,
                                               "--renderer",
                                               absl::StrCat("127.0.0.1:", *rport)};
  if (web) {
    coordinator_args.push_back("--http-listen");
    coordinator_args.push_back("127.0.0.1:0");
  }
  auto coordinator = Subprocess::Start(coordinator_args);
  if (!coordinator.ok()) return coordinator.status();
  Subprocess* started = coordinator->get();
  auto cport = started->WaitForListeningPort(absl::Seconds(60));
  children_.push_back(std::move(*coordinator));
  if (!cport.ok()) return cport.status();
  address_ = absl::StrCat("127.0.0.1:", *cport);
  if (web) {
    // Printed after LISTENING (coordinator_main.cc).
    auto hport = started->WaitForLine("HTTP_LISTENING ", absl::Seconds(60));
    if (!hport.ok()) return hport.status();
    web_url_ = absl::StrCat("http://127.0.0.1:", *hport);
  }
  for (int i = 0; i < workers; ++i) {
    auto w = Subprocess::Start({*worker_bin, "--coordinator", address_, "--slots", "1",
                                "--worker-id", absl::StrCat("local-", i), "--grace", "1s"});
    if (!w.ok()) return w.status();
    children_.push_back(std::move(*w));
  }
  return absl::OkStatus();
}

std::optional<std::string> LocalFleet::DeadChild() {
  absl::MutexLock lock(&mu_);
  for (auto& c : children_) {
    if (c->Poll().has_value()) return absl::StrCat("fleet process ", c->pid(), " exited");
  }
  return std::nullopt;
}

void LocalFleet::Stop() {
  absl::MutexLock lock(&mu_);
  for (auto& c : children_) c->Signal(SIGTERM);
  for (auto& c : children_) c->Stop(absl::Seconds(10));
  children_.clear();
}

}  // namespace flamefleet::cli
