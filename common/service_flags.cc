#include "common/service_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/channel.h"
#include "common/logging.h"

ABSL_FLAG(std::string, tls_cert, "",
          "certificate chain (PEM) of this process: served with --listen, and presented as the "
          "client certificate when calling other services");
ABSL_FLAG(std::string, tls_key, "", "private key (PEM) of --tls-cert");
ABSL_FLAG(std::string, tls_ca, "",
          "CA bundle (PEM) that peers are verified against; a client with it uses TLS");
ABSL_FLAG(bool, tls_client_auth, false,
          "servers: require client certificates that verify against --tls-ca (mutual TLS)");
ABSL_FLAG(std::string, auth_token_file, "",
          "file holding the fleet's bearer token: required on every RPC but health, and sent on "
          "every call to another service");
ABSL_FLAG(std::string, health_listen, "",
          "host:port of an extra plaintext port serving only grpc.health.v1.Health (port 0: "
          "OS-chosen, printed as HEALTH_LISTENING <port>)");
ABSL_FLAG(int, max_message_bytes, flamefleet::kDefaultMaxMessageBytes,
          "largest gRPC message received or sent, in bytes (larger: RESOURCE_EXHAUSTED)");

namespace flamefleet {

absl::StatusOr<ServiceFlags> ReadServiceFlags() {
  ServiceFlags out;
  SecurityOptions options;
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_ca_file = absl::GetFlag(FLAGS_tls_ca);
  options.tls_client_auth = absl::GetFlag(FLAGS_tls_client_auth);
  options.auth_token_file = absl::GetFlag(FLAGS_auth_token_file);
  absl::StatusOr<Security> security = LoadSecurity(options);
  if (!security.ok()) return security.status();
  out.security = std::move(*security);
  out.health_listen = absl::GetFlag(FLAGS_health_listen);
  out.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  if (out.max_message_bytes < 1024) {
    return absl::InvalidArgumentError(absl::StrCat("--max-message-bytes: ", out.max_message_bytes,
                                                   " is below the minimum of 1024"));
  }
  return out;
}

void LogServiceSecurity(const Security& security, bool serves, bool calls) {
  if (serves) LOG(INFO) << "serving: " << DescribeServerSecurity(security);
  if (calls) LOG(INFO) << "calling: " << DescribeClientSecurity(security);
  if (!security.token.empty() &&
      ((serves && !security.server_tls()) || (calls && !security.client_tls()))) {
    LOG(WARNING) << "the bearer token travels in plaintext: anyone on the network path can read "
                    "it (serve with --tls-cert/--tls-key, call with --tls-ca)";
  }
}

}  // namespace flamefleet
