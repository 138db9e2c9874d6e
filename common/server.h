// Server and process helpers shared by every flamefleet service: a gRPC server with the
// grpc.health.v1 health service (SERVING) and server reflection, listening on an address whose
// port may be 0 (the OS picks one; it is reported and optionally written to a file), and
// graceful shutdown on SIGTERM / SIGINT.
//
//   ServerOptions options{.listen = "127.0.0.1:0", .port_file = "/tmp/x.port"};
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

namespace grpc {
class Service;
}  // namespace grpc

namespace flamefleet {

struct ServerOptions {
  // host:port to listen on; port 0 lets the OS choose.
  std::string listen = "127.0.0.1:0";
  // If set, the chosen port is written there as "PORT\n" (temp file + rename) once serving.
  std::string port_file;
  // Largest message accepted (the default gRPC limit is 4 MiB).
  int max_message_bytes = 64 << 20;
};

class GrpcServer {
 public:
  // Builds and starts a server with `services` (kept; they must outlive the server), the
  // health service reporting SERVING, and reflection. Returns Unavailable when the address
  // cannot be bound, Internal if the port file cannot be written.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      const ServerOptions& options, const std::vector<grpc::Service*>& services);

  ~GrpcServer();

  // The port the server listens on.
  int port() const { return port_; }
  grpc::Server* server() { return server_.get(); }

  // Marks the health service NOT_SERVING, stops accepting RPCs and waits up to `grace` for
  // running ones before cancelling them. Idempotent. Thread-safe.
  void Shutdown(absl::Duration grace);

 private:
  GrpcServer(std::unique_ptr<grpc::Server> server, int port)
      : server_(std::move(server)), port_(port) {}

  std::unique_ptr<grpc::Server> server_;
  int port_;
};

// Blocks until the process receives SIGTERM or SIGINT. Call from main() only (it installs the
// signal handlers the first time it runs).
void WaitForShutdownSignal();

// Writes `contents` to `path` atomically (temp file, fsync, rename).
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_SERVER_H_
