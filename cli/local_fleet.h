// The embedded local fleet of `flamefleet run`: a renderer, a coordinator and N workers
// started as child processes on loopback (OS-chosen ports, plaintext, no token), found beside
// the flamefleet binary, in the build tree or on PATH (FindServiceBinary), and stopped
// together.
//
//   LocalFleet fleet;
//   FLAMEFLEET_RETURN_IF_ERROR(fleet.Start("/tmp/flamefleet-run-XXXXXX", /*workers=*/4));
//   BatchClient client(MakeChannel(fleet.address()));
//   ...
//   fleet.Stop();   // also done by the destructor
//
// Thread-safety: Start and address() from the owning thread; DeadChild and Stop from any
// thread (a signal thread stops the fleet on SIGINT).
#ifndef FLAMEFLEET_CLI_LOCAL_FLEET_H_
#define FLAMEFLEET_CLI_LOCAL_FLEET_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/subprocess.h"

namespace flamefleet::cli {

class LocalFleet {
 public:
  LocalFleet() = default;
  LocalFleet(const LocalFleet&) = delete;
  LocalFleet& operator=(const LocalFleet&) = delete;
  // Stops the fleet (Stop).
  ~LocalFleet();

  // Starts the renderer, then the coordinator (state in `state_dir`, which must exist), then
  // `workers` one-slot workers, each after the previous one listens. With `web`, the
  // coordinator also serves its web view on an OS-chosen loopback port (--http-listen
  // 127.0.0.1:0; see web_url()). Returns NotFound when a service binary is missing and the
  // errors of starting a child or waiting for its port; children already started stay until
  // Stop. Call once.
  absl::Status Start(const std::string& state_dir, int workers, bool web = false);

  // Returns "fleet process PID exited" for a child that died, if any.
  std::optional<std::string> DeadChild();

  // Stops every child (SIGTERM, then SIGKILL after 10 s). Thread-safe, idempotent.
  void Stop();

  // Returns the coordinator's address ("127.0.0.1:PORT") once Start succeeded.
  const std::string& address() const { return address_; }

  // Returns the web view's base URL ("http://127.0.0.1:PORT") once Start(..., web = true)
  // succeeded, else "".
  const std::string& web_url() const { return web_url_; }

 private:
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Subprocess>> children_ ABSL_GUARDED_BY(mu_);
  std::string address_;
  std::string web_url_;
};

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_LOCAL_FLEET_H_
