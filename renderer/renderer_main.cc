// flamefleet-renderer: serves flamefleet.v1.Renderer (plus health and
// reflection).
//
//   flamefleet-renderer --listen 127.0.0.1:0 [--port-file PATH]
//       [--tls-cert FILE --tls-key FILE] [--tls-ca FILE] [--tls-client-auth]
//       [--auth-token-file FILE] [--health-listen ADDR] [--max-message-bytes N]
//
// Once serving it prints "LISTENING <port>" on stdout (what Subprocess waits
// for) and, with
// --port-file, writes the port there. SIGTERM / SIGINT drain running renders
// and exit 0.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/server.h"
#include "common/service_flags.h"
#include "common/service_main.h"
#include "renderer/renderer_service.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to listen on (port 0: OS-chosen)");
ABSL_FLAG(std::string, port_file, "", "write the chosen port here as \"PORT\\n\"");
ABSL_FLAG(absl::Duration, grace, absl::Seconds(10),
          "on SIGTERM, how long running renders may take to finish");

int main(int argc, char** argv) {
  flamefleet::InitServiceMain(
      argc, argv,
      "flamefleet-renderer --listen ADDR [--port-file PATH] " FLAMEFLEET_SERVICE_FLAGS_USAGE);
  absl::StatusOr<flamefleet::ServiceFlags> flags = flamefleet::ReadServiceFlags();
  if (!flags.ok()) {
    LOG(ERROR) << flags.status().message();
    return 2;
  }
  flamefleet::LogServiceSecurity(flags->security, /*serves=*/true, /*calls=*/false);

  flamefleet::renderer::RendererServiceImpl service;
  flamefleet::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.port_file = absl::GetFlag(FLAGS_port_file);
  options.max_message_bytes = flags->max_message_bytes;
  options.security = flags->security;
  options.health_listen = flags->health_listen;
  absl::StatusOr<std::unique_ptr<flamefleet::GrpcServer>> server =
      flamefleet::GrpcServer::Start(options, {&service});
  if (!server.ok()) {
    LOG(ERROR) << "cannot start server: " << server.status();
    return 1;
  }
  flamefleet::AnnounceListening((*server)->port());
  if (!flags->health_listen.empty()) {
    flamefleet::AnnounceHealthListening(flags->health_listen, (*server)->health_port());
  }
  LOG(INFO) << "renderer listening on port " << (*server)->port();
  flamefleet::WaitForShutdownSignal();
  LOG(INFO) << "shutting down";
  (*server)->Shutdown(absl::GetFlag(FLAGS_grace));
  return 0;
}
