// The flags that every service main shares, declared once: transport security, the bearer
// token, the health-only port and the message size limit. Linked only into the service
// binaries (flamefleet::service_flags), so the flags exist nowhere else.
//
//   int main(int argc, char** argv) {
//     InitServiceMain(argc, argv, "flamefleet-renderer [--listen ADDR] "
//     FLAMEFLEET_SERVICE_FLAGS_USAGE); absl::StatusOr<ServiceFlags> flags = ReadServiceFlags(); if
//     (!flags.ok()) { LOG(ERROR) << flags.status(); return 2; } LogServiceSecurity(flags->security,
//     /*serves=*/true, /*calls=*/false);
//
// Flags: --tls-cert FILE, --tls-key FILE, --tls-ca FILE, --tls-client-auth,
// --auth-token-file FILE, --health-listen ADDR, --max-message-bytes N (see common/security.h
// for what they mean for servers and clients).
#ifndef FLAMEFLEET_COMMON_SERVICE_FLAGS_H_
#define FLAMEFLEET_COMMON_SERVICE_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/security.h"

// The usage text of the shared flags, for InitServiceMain.
#define FLAMEFLEET_SERVICE_FLAGS_USAGE                                    \
  "[--tls-cert FILE --tls-key FILE] [--tls-ca FILE] [--tls-client-auth] " \
  "[--auth-token-file FILE] [--health-listen ADDR] [--max-message-bytes N]"

namespace flamefleet {

struct ServiceFlags {
  Security security;          // loaded from the --tls-* and --auth-token-file files
  std::string health_listen;  // --health-listen; empty: no health-only port
  int max_message_bytes = 0;  // --max-message-bytes
};

// Reads the shared flags and the files they name. InvalidArgument naming the flag (and the path,
// never file contents) when a file is unreadable or malformed or a value is out of range.
absl::StatusOr<ServiceFlags> ReadServiceFlags();

// Logs, without secrets, the security of the server (`serves`) and of outgoing calls (`calls`),
// and one warning when the token would travel over plaintext.
void LogServiceSecurity(const Security& security, bool serves, bool calls);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_SERVICE_FLAGS_H_
