#include "common/security.h"

#include <fcntl.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpcpp/support/interceptor.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace flamefleet {
namespace {

// Reads a whole file; the error names the flag and the path only.
absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag, const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", path, ": ", strerror(errno)));
  }
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": cannot read ", path, ": ", strerror(err)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (size_t{16} << 20)) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is larger than 16 MiB"));
    }
  }
  close(fd);
  return out;
}

absl::StatusOr<std::string> ReadPem(absl::string_view flag, const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFlagFile(flag, path);
  if (pem.ok() && !absl::StrContains(*pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is not PEM (no \"-----BEGIN \" line)"));
  }
  return pem;
}

// The auth metadata processor's state: what an accepted call must carry.
struct TokenCheck {
  std::string expected_header;  // "Bearer <token>"; empty: no token required
  bool health_only = false;     // refuse everything but Health
};

absl::string_view SliceView(const grpc_slice& s) {
  return absl::string_view(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(s)),
                           GRPC_SLICE_LENGTH(s));
}

// Runs in gRPC's server auth filter, once per call, before the call reaches any service (so a
// refused call has no side effect). Thread-safe: the state is read-only.
void ProcessAuthMetadata(void* state, grpc_auth_context* /*context*/, const grpc_metadata* md,
                         size_t num_md, grpc_process_auth_metadata_done_cb cb, void* user_data) {
  const auto* check = static_cast<const TokenCheck*>(state);
  absl::string_view path;
  for (size_t i = 0; i < num_md; ++i) {
    if (SliceView(md[i].key) == ":path") path = SliceView(md[i].value);
  }
  if (internal::IsHealthMethod(path)) {
    cb(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_OK, nullptr);
    return;
  }
  if (check->health_only) {
    cb(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_UNIMPLEMENTED,
       "this port serves only grpc.health.v1.Health");
    return;
  }
  const grpc_metadata* match = nullptr;
  for (size_t i = 0; i < num_md; ++i) {
    if (SliceView(md[i].key) != "authorization") continue;
    // Every candidate is compared, so the time does not depend on which one matches.
    if (internal::ConstantTimeEquals(SliceView(md[i].value), check->expected_header)) {
      match = &md[i];
    }
  }
  if (match == nullptr) {
    cb(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_UNAUTHENTICATED, kUnauthenticatedMessage);
    return;
  }
  // Consumed: handlers never see (and so can never log) the token.
  cb(user_data, match, 1, nullptr, 0, GRPC_STATUS_OK, nullptr);
}

void DestroyTokenCheck(void* state) { delete static_cast<TokenCheck*>(state); }

// Server credentials over a gRPC core credentials object (plaintext or TLS) with our metadata
// processor attached. The C++ InsecureServerCredentials() cannot take a processor in gRPC 1.51,
// but the core's plaintext credentials can, and the core runs the processor for them too.
class CoreServerCredentials final : public grpc::ServerCredentials {
 public:
  // Takes ownership of `creds`; `check` may be null (no processor).
  CoreServerCredentials(grpc_server_credentials* creds, std::unique_ptr<TokenCheck> check)
      : creds_(creds) {
    if (check != nullptr) {
      grpc_server_credentials_set_auth_metadata_processor(
          creds_,
          grpc_auth_metadata_processor{&ProcessAuthMetadata, &DestroyTokenCheck, check.release()});
    }
  }
  ~CoreServerCredentials() override { grpc_server_credentials_release(creds_); }

  void SetAuthMetadataProcessor(
      const std::shared_ptr<grpc::AuthMetadataProcessor>& /*processor*/) override {
    LOG(FATAL) << "CoreServerCredentials carries its own token check";
  }

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override {
    return grpc_server_add_http2_port(server, addr.c_str(), creds_);
  }

  grpc_server_credentials* const creds_;
};

class TokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(std::string header) : header_(std::move(header)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", header_});
    }
    methods->Proceed();
  }

 private:
  const std::string header_;
};

class TokenInterceptorFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(const std::string& token)
      : header_(absl::StrCat("Bearer ", token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new TokenInterceptor(header_);  // gRPC owns and deletes it
  }

 private:
  const std::string header_;
};

}  // namespace

namespace internal {

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Walk the longer length; every byte position is touched whatever the contents.
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool IsHealthMethod(absl::string_view method) {
  return absl::StartsWith(method, "/grpc.health.v1.Health/");
}

}  // namespace internal

absl::StatusOr<Security> LoadSecurity(const SecurityOptions& options) {
  Security out;
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key must be given together");
  }
  if (!options.tls_cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadPem("--tls-cert", options.tls_cert_file);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem("--tls-key", options.tls_key_file);
    if (!key.ok()) return key.status();
    out.cert_chain_pem = std::move(*cert);
    out.private_key_pem = std::move(*key);
  }
  if (!options.tls_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem("--tls-ca", options.tls_ca_file);
    if (!ca.ok()) return ca.status();
    out.ca_pem = std::move(*ca);
  }
  if (options.tls_client_auth) {
    if (out.cert_chain_pem.empty() || out.ca_pem.empty()) {
      return absl::InvalidArgumentError(
          "--tls-client-auth needs --tls-cert, --tls-key and --tls-ca");
    }
    out.client_auth = true;
  }
  if (!options.auth_token_file.empty()) {
    absl::StatusOr<std::string> text = ReadFlagFile("--auth-token-file", options.auth_token_file);
    if (!text.ok()) return text.status();
    absl::string_view token = absl::StripAsciiWhitespace(*text);
    if (token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--auth-token-file: ", options.auth_token_file, " holds no token"));
    }
    for (char c : token) {
      if (c < 0x21 || c > 0x7e) {
        return absl::InvalidArgumentError(
            absl::StrCat("--auth-token-file: ", options.auth_token_file,
                         ": the token must be visible ASCII (no spaces or control characters)"));
      }
    }
    out.token = std::string(token);
  }
  return out;
}

std::string DescribeServerSecurity(const Security& security) {
  return absl::StrCat(
      security.server_tls() ? (security.client_auth ? "TLS (mutual)" : "TLS") : "plaintext",
      security.token.empty() ? ", no token" : ", bearer token required");
}

std::string DescribeClientSecurity(const Security& security) {
  std::string tls = "plaintext";
  if (security.client_tls()) {
    tls = absl::StrCat("TLS (server verified against ",
                       security.ca_pem.empty() ? "the system roots" : "--tls-ca",
                       security.cert_chain_pem.empty() ? ")" : "; client certificate sent)");
  }
  return absl::StrCat(tls, security.token.empty() ? ", no token" : ", bearer token sent");
}

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const Security& security) {
  if (!security.server_tls() && security.token.empty()) return grpc::InsecureServerCredentials();
  grpc_server_credentials* creds = nullptr;
  if (security.server_tls()) {
    grpc_ssl_pem_key_cert_pair pair{security.private_key_pem.c_str(),
                                    security.cert_chain_pem.c_str()};
    creds = grpc_ssl_server_credentials_create_ex(
        security.ca_pem.empty() ? nullptr : security.ca_pem.c_str(), &pair, 1,
        security.client_auth ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                             : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
        nullptr);
  } else {
    creds = grpc_insecure_server_credentials_create();
  }
  CHECK(creds != nullptr);
  std::unique_ptr<TokenCheck> check;
  if (!security.token.empty()) {
    check = std::make_unique<TokenCheck>();
    check->expected_header = absl::StrCat("Bearer ", security.token);
  }
  return std::make_shared<CoreServerCredentials>(creds, std::move(check));
}

std::shared_ptr<grpc::ServerCredentials> MakeHealthOnlyServerCredentials() {
  auto check = std::make_unique<TokenCheck>();
  check->health_only = true;
  return std::make_shared<CoreServerCredentials>(grpc_insecure_server_credentials_create(),
                                                 std::move(check));
}

std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(const Security& security) {
  if (!security.client_tls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = security.ca_pem;  // empty: gRPC's default (system) roots
  ssl.pem_private_key = security.private_key_pem;
  ssl.pem_cert_chain = security.cert_chain_pem;
  return grpc::SslCredentials(ssl);
}

std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
MakeTokenInterceptors(const std::string& token) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> out;
  if (!token.empty()) out.push_back(std::make_unique<TokenInterceptorFactory>(token));
  return out;
}

}  // namespace flamefleet
