// Transport security and the bearer token of common/security.h, on real loopback TCP servers
// (GrpcServer) with the committed test identities in tests/testdata/tls (see generate.sh there).
#include "common/security.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/channel.h"
#include "common/server.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/generic_call.h"

namespace flamefleet {
namespace {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

constexpr char kReflection[] = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
constexpr char kToken[] = "s3cret-token-value-1234";

std::string Tls(const std::string& name) {
  return absl::StrCat(FLAMEFLEET_TLS_TESTDATA, "/", name);
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = absl::StrCat(::testing::TempDir(), "/security_test_", getpid(), "_", name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

Security MustLoad(const SecurityOptions& options) {
  absl::StatusOr<Security> s = LoadSecurity(options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Security{};
}

// The identity every service presents (server.pem is valid for serverAuth and clientAuth).
SecurityOptions ServerIdentity() {
  return SecurityOptions{.tls_cert_file = Tls("server.pem"), .tls_key_file = Tls("server.key")};
}

std::unique_ptr<GrpcServer> StartServer(const Security& security,
                                        const std::string& health_listen = "") {
  ServerOptions options;
  options.security = security;
  options.health_listen = health_listen;
  auto server = GrpcServer::Start(options, {});
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

std::string Address(int port) { return absl::StrCat("127.0.0.1:", port); }

grpc::Status Check(const std::shared_ptr<grpc::Channel>& channel, HealthCheckResponse* out) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  return grpc::health::v1::Health::NewStub(channel)->Check(&ctx, HealthCheckRequest(), out);
}

grpc::Status Check(const std::shared_ptr<grpc::Channel>& channel) {
  HealthCheckResponse response;
  return Check(channel, &response);
}

TEST(LoadSecurityTest, ErrorsNameTheFlagAndPathButNoContents) {
  std::string token_file = WriteTemp("token", "  \n\t ");
  auto empty = LoadSecurity({.auth_token_file = token_file});
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(),
            absl::StrCat("--auth-token-file: ", token_file, " holds no token"));

  auto missing =
      LoadSecurity({.tls_cert_file = Tls("server.pem"), .tls_key_file = "/nonexistent/k"});
  EXPECT_EQ(missing.status().message(),
            "--tls-key: cannot read /nonexistent/k: No such file or directory");

  std::string secret_file = WriteTemp("not-pem", kToken);
  auto not_pem = LoadSecurity({.tls_ca_file = secret_file});
  EXPECT_EQ(not_pem.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(not_pem.status().message().find("--tls-ca: "), absl::string_view::npos);
  EXPECT_EQ(not_pem.status().message().find(kToken), absl::string_view::npos);

  std::string spaced = WriteTemp("spaced", "two words\n");
  auto bad_token = LoadSecurity({.auth_token_file = spaced});
  EXPECT_EQ(bad_token.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_token.status().message().find("two"), absl::string_view::npos);

  EXPECT_EQ(LoadSecurity({.tls_cert_file = Tls("server.pem")}).status().message(),
            "--tls-cert and --tls-key must be given together");
  EXPECT_EQ(LoadSecurity({.tls_cert_file = Tls("server.pem"),
                          .tls_key_file = Tls("server.key"),
                          .tls_client_auth = true})
                .status()
                .message(),
            "--tls-client-auth needs --tls-cert, --tls-key and --tls-ca");
}

TEST(LoadSecurityTest, TrimsTheTokenAndReadsThePemFiles) {
  Security s = MustLoad({.tls_cert_file = Tls("server.pem"),
                         .tls_key_file = Tls("server.key"),
                         .tls_ca_file = Tls("ca.pem"),
                         .tls_client_auth = true,
                         .auth_token_file = WriteTemp("tok", absl::StrCat("\n ", kToken, " \n"))});
  EXPECT_EQ(s.token, kToken);
  EXPECT_TRUE(s.server_tls());
  EXPECT_TRUE(s.client_tls());
  EXPECT_TRUE(s.client_auth);
  EXPECT_NE(s.private_key_pem.find("PRIVATE KEY"), std::string::npos);
  // Descriptions are for logs: no secret in them.
  for (const std::string& d : {DescribeServerSecurity(s), DescribeClientSecurity(s)}) {
    EXPECT_EQ(d.find(kToken), std::string::npos) << d;
    EXPECT_EQ(d.find("PRIVATE"), std::string::npos) << d;
  }
  EXPECT_EQ(DescribeServerSecurity(s), "TLS (mutual), bearer token required");
  EXPECT_FALSE(Security{}.client_tls());
}

TEST(ConstantTimeEqualsTest, ComparesWholeStrings) {
  EXPECT_TRUE(internal::ConstantTimeEquals("Bearer abc", "Bearer abc"));
  EXPECT_FALSE(internal::ConstantTimeEquals("Bearer abc", "Bearer abd"));
  EXPECT_FALSE(internal::ConstantTimeEquals("Bearer abc", "Bearer abcd"));
  EXPECT_FALSE(internal::ConstantTimeEquals("Bearer abc", "Bearer ab"));
  EXPECT_FALSE(internal::ConstantTimeEquals("", "x"));
  EXPECT_TRUE(internal::ConstantTimeEquals("", ""));
  EXPECT_TRUE(internal::IsHealthMethod("/grpc.health.v1.Health/Watch"));
  EXPECT_FALSE(internal::IsHealthMethod("/grpc.health.v1.HealthX/Check"));
  EXPECT_FALSE(internal::IsHealthMethod("/flamefleet.v1.Coordinator/GetBatch"));
}

TEST(TlsTest, ServerTlsIsVerifiedAgainstTheCaAndRefusesOtherClients) {
  auto server = StartServer(MustLoad(ServerIdentity()));
  ASSERT_NE(server, nullptr);
  std::string address = Address(server->port());
  Security trusting = MustLoad({.tls_ca_file = Tls("ca.pem")});
  EXPECT_TRUE(Check(MakeChannel(address, trusting)).ok());
  // The certificate is valid for localhost too.
  EXPECT_TRUE(Check(MakeChannel(absl::StrCat("localhost:", server->port()), trusting)).ok());
  // A client that trusts another CA, or only the system roots, or speaks plaintext: refused.
  EXPECT_EQ(
      Check(MakeChannel(address, MustLoad({.tls_ca_file = Tls("other-ca.pem")}))).error_code(),
      grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Check(MakeChannel(address, MustLoad({.tls_cert_file = Tls("client.pem"),
                                                 .tls_key_file = Tls("client.key")})))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Check(MakeChannel(address)).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(TlsTest, ClientAuthRefusesClientsWithoutACertificateOrWithAForeignOne) {
  SecurityOptions options = ServerIdentity();
  options.tls_ca_file = Tls("ca.pem");
  options.tls_client_auth = true;
  auto server = StartServer(MustLoad(options));
  ASSERT_NE(server, nullptr);
  std::string address = Address(server->port());
  // Trusts the server, presents nothing.
  EXPECT_EQ(Check(MakeChannel(address, MustLoad({.tls_ca_file = Tls("ca.pem")}))).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // Presents a certificate of another CA.
  EXPECT_EQ(Check(MakeChannel(address, MustLoad({.tls_cert_file = Tls("other.pem"),
                                                 .tls_key_file = Tls("other.key"),
                                                 .tls_ca_file = Tls("ca.pem")})))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // The fleet's client certificate, and the services' dual-use one, are accepted.
  EXPECT_TRUE(Check(MakeChannel(address, MustLoad({.tls_cert_file = Tls("client.pem"),
                                                   .tls_key_file = Tls("client.key"),
                                                   .tls_ca_file = Tls("ca.pem")})))
                  .ok());
  EXPECT_TRUE(Check(MakeChannel(address, MustLoad({.tls_cert_file = Tls("server.pem"),
                                                   .tls_key_file = Tls("server.key"),
                                                   .tls_ca_file = Tls("ca.pem")})))
                  .ok());
}

// Runs the token checks against a server built from `server_security`; `client` is the security
// of a well-configured client without the token.
void ExpectTokenEnforced(const Security& server_security, Security client) {
  auto server = StartServer(server_security);
  ASSERT_NE(server, nullptr);
  std::string address = Address(server->port());
  auto tokenless = MakeChannel(address, client);
  // Health needs no token.
  EXPECT_TRUE(Check(tokenless).ok());
  // Reflection (and everything else) does; the message is fixed and echoes nothing.
  grpc::Status missing = testutil::GenericCall(tokenless, kReflection, "");
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(missing.error_message(), kUnauthenticatedMessage);
  grpc::Status wrong = testutil::GenericCall(tokenless, kReflection, "", "Bearer wrong-token-xyz");
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(wrong.error_message(), kUnauthenticatedMessage);
  // Right token but another scheme, or a prefix of it: refused.
  EXPECT_EQ(testutil::GenericCall(tokenless, kReflection, "", absl::StrCat("Basic ", kToken))
                .error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(testutil::GenericCall(tokenless, kReflection, "", "Bearer s3cret").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // The right token, sent by MakeChannel's interceptor: reflection answers.
  client.token = kToken;
  int responses = 0;
  grpc::Status good =
      testutil::GenericCall(MakeChannel(address, client), kReflection, "", "", &responses);
  EXPECT_TRUE(good.ok()) << good.error_message();
  EXPECT_EQ(responses, 1);
}

TEST(TokenTest, EveryMethodButHealthNeedsTheTokenOverPlaintext) {
  Security server;
  server.token = kToken;
  ExpectTokenEnforced(server, Security{});
}

TEST(TokenTest, EveryMethodButHealthNeedsTheTokenOverTls) {
  Security server = MustLoad(ServerIdentity());
  server.token = kToken;
  ExpectTokenEnforced(server, MustLoad({.tls_ca_file = Tls("ca.pem")}));
}

TEST(HealthPortTest, AnswersInPlaintextWithoutTokenServesNothingElseAndFollowsShutdown) {
  SecurityOptions options = ServerIdentity();
  options.tls_ca_file = Tls("ca.pem");
  options.tls_client_auth = true;
  Security security = MustLoad(options);
  security.token = kToken;
  auto server = StartServer(security, "127.0.0.1:0");
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->health_port(), 0);
  ASSERT_NE(server->health_port(), server->port());
  auto health = MakeChannel(Address(server->health_port()));
  HealthCheckResponse response;
  ASSERT_TRUE(Check(health, &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  // The main port refuses plaintext.
  EXPECT_EQ(Check(MakeChannel(Address(server->port()))).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // Nothing but health on the health port, token or not.
  EXPECT_EQ(testutil::GenericCall(health, kReflection, "").error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(
      testutil::GenericCall(health, kReflection, "", absl::StrCat("Bearer ", kToken)).error_code(),
      grpc::StatusCode::UNIMPLEMENTED);

  // Watch on the health port (a raw call: our health.proto declares only Check) sees
  // NOT_SERVING when the main server shuts down.
  grpc::GenericStub stub(health);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  grpc::CompletionQueue cq;
  void* tag = nullptr;
  bool ok = false;
  auto watch = stub.PrepareCall(&ctx, "/grpc.health.v1.Health/Watch", &cq);
  watch->StartCall(nullptr);
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  grpc::Slice empty(std::string(""));
  watch->WriteLast(grpc::ByteBuffer(&empty, 1), grpc::WriteOptions(), nullptr);
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  auto read = [&](HealthCheckResponse* out) {
    grpc::ByteBuffer buffer;
    watch->Read(&buffer, nullptr);
    return cq.Next(&tag, &ok) && ok &&
           grpc::SerializationTraits<HealthCheckResponse>::Deserialize(&buffer, out).ok();
  };
  ASSERT_TRUE(read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  std::thread stopper([&] { server->Shutdown(absl::Seconds(1)); });
  bool saw_not_serving = false;
  while (read(&response)) {
    if (response.status() == HealthCheckResponse::NOT_SERVING) {
      saw_not_serving = true;
      break;
    }
  }
  EXPECT_TRUE(saw_not_serving);
  ctx.TryCancel();
  grpc::Status finished;
  watch->Finish(&finished, nullptr);
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  stopper.join();
}

}  // namespace
}  // namespace flamefleet
