// Server and process helpers shared by every flamefleet service: a gRPC server with the
// grpc.health.v1 health service (SERVING) and server reflection, listening on an address whose
// port may be 0 (the OS picks one; it is reported and optionally written to a file), served in
// plaintext or TLS and with or without a bearer token (common/security.h), optionally with a
// second plaintext port that answers only the health service (for Kubernetes gRPC probes), and
// graceful shutdown on SIGTERM / SIGINT.
//
//   ServerOptions options{.listen = "127.0.0.1:0", .port_file = "/tmp/x.port",
//                         .security = security, .health_listen = "0.0.0.0:8081"};
//   FLAMEFLEET_ASSIGN_OR_RETURN(auto server, GrpcServer::Start(options, {&service}));
//   WaitForShutdownSignal();
//   server->Shutdown(absl::Seconds(10));
#ifndef FLAMEFLEET_COMMON_SERVER_H_
#define FLAMEFLEET_COMMON_SERVER_H_

#include <grpcpp/server.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/file.h"  // WriteFileAtomically, which used to live here (#13)
#include "common/security.h"

namespace grpc {
class Service;
}  // namespace grpc

namespace flamefleet {

// Default of ServerOptions::max_threads: every long-poll, watch stream and upload holds one
// thread of the synchronous server while it runs.
inline constexpr int kDefaultMaxServerThreads = 2048;

struct ServerOptions {
  // host:port to listen on; port 0 lets the OS choose.
  std::string listen = "127.0.0.1:0";
  // If set, the chosen port is written there as "PORT\n" (temp file + rename) once serving.
  std::string port_file;
  // Largest message accepted or sent (the default gRPC limit is 4 MiB); a larger request is
  // refused by gRPC with RESOURCE_EXHAUSTED.
  int max_message_bytes = 64 << 20;
  // TLS and bearer token of the main port (default: plaintext, no token). Health is always
  // answered without a token.
  Security security;
  // If set, host:port of an extra plaintext port that answers only grpc.health.v1.Health (every
  // other method: UNIMPLEMENTED) and follows the main port's health status.
  std::string health_listen;
  // Most threads the synchronous server may use for RPCs (grpc::ResourceQuota::SetMaxThreads);
  // beyond it gRPC answers new calls RESOURCE_EXHAUSTED. 0: gRPC's default (unbounded).
  int max_threads = kDefaultMaxServerThreads;
};

// A plaintext server that answers only grpc.health.v1.Health (every other method is refused
// with UNIMPLEMENTED before it reaches a service; no token). For the --health-listen port of
// the services; the worker, which serves nothing else, uses it directly.
class HealthServer {
 public:
  // Starts serving on `listen` (port 0: OS-chosen) and reports SERVING. Unavailable when the
  // address cannot be bound, with the reason ("address already in use": SO_REUSEPORT is off,
  // so a port held by another process is never shared).
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(const std::string& listen);
  ~HealthServer();

  int port() const { return port_; }
  // Sets the status that Check and Watch report. Not to be called concurrently with Shutdown.
  void SetServing(bool serving);
  // Reports NOT_SERVING and stops the server, giving open Watch streams up to `linger` to
  // deliver that last status before they are cancelled. Idempotent; call from one thread.
  void Shutdown(absl::Duration linger = absl::ZeroDuration());

 private:
  HealthServer(std::unique_ptr<grpc::Server> server, int port)
      : server_(std::move(server)), port_(port) {}

  std::unique_ptr<grpc::Server> server_;
  int port_;
};

class GrpcServer {
 public:
  // Builds and starts a server with `services` (kept; they must outlive the server), the
  // health service reporting SERVING, and reflection, with the security of `options`, plus the
  // health-only port if `options.health_listen` is set. Returns Unavailable when an address
  // cannot be bound, naming it and the reason ("cannot listen on 127.0.0.1:7070: address
  // already in use"; SO_REUSEPORT is off, so a port is never shared with another process),
  // Internal if the port file cannot be written.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      const ServerOptions& options, const std::vector<grpc::Service*>& services);

  ~GrpcServer();

  // The port the server listens on.
  int port() const { return port_; }
  // The health-only port, or 0 without one.
  int health_port() const { return health_ == nullptr ? 0 : health_->port(); }
  grpc::Server* server() { return server_.get(); }

  // Marks the health service NOT_SERVING (on both ports), stops accepting RPCs and waits up to
  // `grace` for running ones before cancelling them, then stops the health-only port.
  // Idempotent. Thread-safe.
  void Shutdown(absl::Duration grace);

 private:
  GrpcServer(std::unique_ptr<grpc::Server> server, int port, std::unique_ptr<HealthServer> health)
      : server_(std::move(server)), port_(port), health_(std::move(health)) {}

  std::unique_ptr<grpc::Server> server_;
  int port_;
  std::unique_ptr<HealthServer> health_;
};

// Blocks until the process receives SIGTERM or SIGINT. Call from main() only (it installs the
// signal handlers the first time it runs).
void WaitForShutdownSignal();

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_SERVER_H_
