#include "common/server.h"

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/channel.h"
#include "common/grpc_status.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flamefleet {
namespace {

using ::flamefleet::testutil::StatusIs;

TEST(GrpcStatusTest, RoundTripsCodeAndMessage) {
  absl::Status s = absl::ResourceExhaustedError("too big: jobs[3]");
  grpc::Status g = ToGrpcStatus(s);
  EXPECT_EQ(g.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(g.error_message(), "too big: jobs[3]");
  EXPECT_EQ(FromGrpcStatus(g), s);
  EXPECT_OK(FromGrpcStatus(grpc::Status::OK));
}

TEST(GrpcServerTest, ListensOnAnOsChosenPortAndWritesIt) {
  std::string port_file = absl::StrCat(testing::TempDir(), "/server_test.port");
  ServerOptions options;
  options.port_file = port_file;
  ASSERT_OK_AND_ASSIGN(auto server, GrpcServer::Start(options, {}));
  EXPECT_GT(server->port(), 0);
  std::ifstream in(port_file);
  std::string text;
  std::getline(in, text);
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(text, &port));
  EXPECT_EQ(port, server->port());
  auto channel = MakeChannel(absl::StrCat("127.0.0.1:", port));
  EXPECT_TRUE(channel->WaitForConnected(absl::ToChronoTime(absl::Now() + absl::Seconds(10))));
  // The standard health service answers SERVING.
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  server->Shutdown(absl::Seconds(1));
  server->Shutdown(absl::Seconds(1));  // idempotent
}

TEST(GrpcServerTest, BadAddressIsUnavailable) {
  ServerOptions options;
  options.listen = "256.1.1.1:99999";
  EXPECT_THAT(GrpcServer::Start(options, {}), StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace flamefleet
