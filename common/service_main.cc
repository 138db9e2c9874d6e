#include "common/service_main.h"

#include <signal.h>

#include <cstdio>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "common/logging.h"

namespace flamefleet {

void InitServiceMain(int argc, char** argv, const char* usage) {
  absl::SetProgramUsageMessage(usage);
  for (int i = 1; i < argc; ++i) {
    char* arg = argv[i];
    if (arg[0] != '-' || arg[1] != '-') continue;
    if (arg[2] == '\0') break;  // "--" ends the flags
    for (char* c = arg + 2; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
  absl::ParseCommandLine(argc, argv);
  InitLogging(argv[0]);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void AnnounceListening(int port) {
  std::printf("LISTENING %d\n", port);
  std::fflush(stdout);
}

void AnnounceHealthListening(const std::string& requested, int port) {
  LOG(INFO) << "health-only port (plaintext, grpc.health.v1.Health) on " << requested << ", port "
            << port;
  if (absl::EndsWith(requested, ":0")) {
    std::printf("HEALTH_LISTENING %d\n", port);
    std::fflush(stdout);
  }
}

void AnnounceHttpListening(const std::string& requested, int port, bool https) {
  LOG(INFO) << "web view (" << (https ? "HTTPS" : "HTTP") << ") on " << requested << ", port "
            << port;
  if (absl::EndsWith(requested, ":0")) {
    std::printf("HTTP_LISTENING %d\n", port);
    std::fflush(stdout);
  }
}

}  // namespace flamefleet
