#include "common/server.h"

#include <grpc/grpc.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace flamefleet {
namespace {

// Explains why gRPC could not bind `listen` (it only returns a null server): binds a plain
// socket to the same address and reports the errno, e.g. "address already in use".
std::string DescribeBindFailure(const std::string& listen) {
  absl::string_view address = listen;
  for (absl::string_view scheme : {"dns:///", "ipv4:", "ipv6:"})
    absl::ConsumePrefix(&address, scheme);
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return "not a host:port address";
  }
  std::string host(address.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) return absl::StrCat("cannot resolve \"", host, "\": ", gai_strerror(rc));
  std::string reason = "gRPC refused the address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as gRPC does
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      reason = errno == EADDRINUSE ? "address already in use" : strerror(errno);
      close(fd);
      break;
    }
    close(fd);
  }
  freeaddrinfo(found);
  return reason;
}

// Settings every server of ours gets: one process per port (no SO_REUSEPORT, which gRPC turns
// on by default on Linux and which would let a second coordinator or renderer bind the same
// port and answer a share of the calls with its own, empty, state).
void ConfigureBuilder(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
}

absl::Status CannotListen(const std::string& listen, absl::string_view what) {
  return absl::UnavailableError(
      absl::StrCat("cannot listen on ", listen, what, ": ", DescribeBindFailure(listen)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& listen) {
  grpc::EnableDefaultHealthCheckService(true);
  // The reflection plugin is process-wide (GrpcServer::Start registers it too). It gives this
  // server the synchronous service that gRPC needs before it polls; the credentials refuse
  // reflection, like everything but Health, before it runs.
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  ConfigureBuilder(builder);
  int port = 0;
  builder.AddListeningPort(listen, MakeHealthOnlyServerCredentials(), &port);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return CannotListen(listen, " (--health-listen)");
  server->GetHealthCheckService()->SetServingStatus(true);
  return std::unique_ptr<HealthServer>(new HealthServer(std::move(server), port));
}

HealthServer::~HealthServer() { Shutdown(); }

void HealthServer::SetServing(bool serving) {
  if (server_ != nullptr) server_->GetHealthCheckService()->SetServingStatus(serving);
}

void HealthServer::Shutdown(absl::Duration linger) {
  if (server_ == nullptr) return;
  server_->GetHealthCheckService()->SetServingStatus(false);
  server_->Shutdown(absl::ToChronoTime(absl::Now() + linger));
  server_->Wait();
  server_.reset();
}

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    const ServerOptions& options, const std::vector<grpc::Service*>& services) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  ConfigureBuilder(builder);
  if (options.max_threads > 0) {
    grpc::ResourceQuota quota("flamefleet-server");
    quota.SetMaxThreads(options.max_threads);
    builder.SetResourceQuota(quota);
  }
  int port = 0;
  builder.AddListeningPort(options.listen, MakeServerCredentials(options.security), &port);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // Long-polls and streams sit idle for a while: allow client keepalive pings.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  for (grpc::Service* s : services) builder.RegisterService(s);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return CannotListen(options.listen, "");
  server->GetHealthCheckService()->SetServingStatus(true);
  std::unique_ptr<HealthServer> health;
  if (!options.health_listen.empty()) {
    absl::StatusOr<std::unique_ptr<HealthServer>> started =
        HealthServer::Start(options.health_listen);
    if (!started.ok()) {
      server->Shutdown();
      return started.status();
    }
    health = std::move(*started);
  }
  if (!options.port_file.empty()) {
    absl::Status st = WriteFileAtomically(options.port_file, absl::StrCat(port, "\n"));
    if (!st.ok()) {
      server->Shutdown();
      return st;
    }
  }
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(server), port, std::move(health)));
}

GrpcServer::~GrpcServer() { Shutdown(absl::ZeroDuration()); }

void GrpcServer::Shutdown(absl::Duration grace) {
  if (server_ == nullptr) return;
  server_->GetHealthCheckService()->SetServingStatus(false);
  if (health_ != nullptr) health_->SetServing(false);
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  server_->Wait();
  server_.reset();
  // Watchers of the health port get the final NOT_SERVING before their streams end.
  if (health_ != nullptr) health_->Shutdown(std::min(grace, absl::Milliseconds(500)));
}

void WaitForShutdownSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  // Block the signals in this thread (threads created later inherit the mask) and wait.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
}

}  // namespace flamefleet
