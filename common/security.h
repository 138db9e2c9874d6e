// Transport security and bearer tokens for every flamefleet service and client, built in one
// place. The files named by the --tls-* and --auth-token-file flags are read once into a
// `Security` (PEM strings and the token); servers and channels are then built from it:
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(Security security,
//                               LoadSecurity(SecurityOptions{.tls_cert_file = "s.pem",
//                                                            .tls_key_file = "s.key",
//                                                            .tls_ca_file = "ca.pem",
//                                                            .auth_token_file = "token"}));
//   ServerOptions options{.listen = "0.0.0.0:7700", .security = security};  // common/server.h
//   auto channel = MakeChannel("coord:7700", security);                       // common/channel.h
//
// Semantics:
// * Server: a certificate + key means the port serves TLS; `client_auth` additionally requires a
//   client certificate that verifies against `ca_pem` (mutual TLS).
// * Client: TLS when a CA or a certificate is set. The server is verified against `ca_pem`, or
//   against the system roots when only a certificate is given; the certificate + key, if set, are
//   presented as the client certificate.
// * Token: a server with a token refuses every RPC except grpc.health.v1.Health/* unless it
//   carries "authorization: Bearer <token>" (UNAUTHENTICATED, fixed message). The check runs in
//   gRPC's auth metadata processor, before any handler (so reflection and every future method are
//   covered and a refused call has no side effect), with plaintext and with TLS alike. A client
//   with a token sends that header on every call. One token is shared by the whole fleet.
//
// Never log a `Security`: it holds the private key and the token.
#ifndef FLAMEFLEET_COMMON_SECURITY_H_
#define FLAMEFLEET_COMMON_SECURITY_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/client_interceptor.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flamefleet {

// The files to read (empty = not set). Field names follow the flags.
struct SecurityOptions {
  std::string tls_cert_file{};    // --tls-cert: this process's certificate chain (PEM)
  std::string tls_key_file{};     // --tls-key: its private key (PEM)
  std::string tls_ca_file{};      // --tls-ca: CA bundle (PEM) that peers are verified against
  bool tls_client_auth = false;   // --tls-client-auth: servers require client certificates
  std::string auth_token_file{};  // --auth-token-file: the bearer token, whitespace trimmed
};

// The loaded material. Default-constructed = plaintext without a token (today's behaviour).
struct Security {
  std::string cert_chain_pem;
  std::string private_key_pem;
  std::string ca_pem;
  bool client_auth = false;
  std::string token;

  // True if a server built from this serves TLS (it has a certificate).
  bool server_tls() const { return !cert_chain_pem.empty(); }
  // True if a channel built from this uses TLS (it has a CA or a certificate).
  bool client_tls() const { return !ca_pem.empty() || !cert_chain_pem.empty(); }
};

// Reads the files of `options`. Errors (InvalidArgument) name the flag and the path, never the
// contents: "--tls-key: cannot read /x: No such file or directory", a file that is not PEM, an
// empty or non-printable token, --tls-cert without --tls-key (or the reverse), and
// --tls-client-auth without --tls-cert or --tls-ca.
absl::StatusOr<Security> LoadSecurity(const SecurityOptions& options);

// Returns a one-line description without secrets, e.g. "TLS (mutual), bearer token", for logs.
std::string DescribeServerSecurity(const Security& security);
std::string DescribeClientSecurity(const Security& security);

// Returns the credentials of a server port: plaintext or TLS as `security` says, with the token
// check when it has a token.
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const Security& security);

// Returns plaintext credentials that refuse everything but grpc.health.v1.Health/* with
// UNIMPLEMENTED (the --health-listen port).
std::shared_ptr<grpc::ServerCredentials> MakeHealthOnlyServerCredentials();

// Returns the channel credentials of a client: plaintext or TLS as `security` says (the token is
// not part of them; see MakeTokenInterceptors).
std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(const Security& security);

// Returns the interceptor factories that add "authorization: Bearer <token>" to every call (none
// when `token` is empty). Interceptors rather than call credentials, so the token also works on
// plaintext channels.
std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
MakeTokenInterceptors(const std::string& token);

// The message of every refused call; it never depends on what the client sent.
inline constexpr char kUnauthenticatedMessage[] =
    "missing or invalid bearer token (metadata \"authorization: Bearer <token>\")";

namespace internal {

// Compares in time that depends only on the lengths. True if equal.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

// True if `method` (a ":path" such as "/grpc.health.v1.Health/Check") needs no token.
bool IsHealthMethod(absl::string_view method);

}  // namespace internal
}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_SECURITY_H_
