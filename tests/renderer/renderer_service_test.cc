#include "renderer/renderer_service.h"

#include <grpcpp/client_context.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/grpc_status.h"
#include "common/server.h"
#include "flamefleet/v1/renderer.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/diff.h"
#include "profile/profile.h"
#include "profile/profile_proto.h"
#include "renderer/flamegraph.h"

namespace flamefleet::renderer {
namespace {

using ::testing::HasSubstr;

profile::Profile MakeProfile(uint64_t scale) {
  profile::Profile p;
  const auto main = p.Child(profile::Profile::kRoot, p.InternFrame("$exec::$main"));
  const auto add = p.Child(main, p.InternFrame("std::math::u64::wrapping_add"));
  const auto mul = p.Child(main, p.InternFrame("std::math::u64::wrapping_mul"));
  p.AddSelf(main, 10 * scale);
  p.AddSelf(add, 40);
  p.AddSelf(mul, 25 * scale);
  return p;
}

struct Rendered {
  absl::Status status;
  std::vector<std::string> chunks;
  std::string svg;
};

class RendererServiceTest : public ::testing::Test {
 protected:
  void Start(RendererServiceOptions options = {}) {
    service_ = std::make_unique<RendererServiceImpl>(options);
    absl::StatusOr<std::unique_ptr<GrpcServer>> server =
        GrpcServer::Start(ServerOptions(), {service_.get()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = v1::Renderer::NewStub(server_->server()->InProcessChannel(grpc::ChannelArguments()));
  }

  void SetUp() override { Start(); }

  Rendered Render(const v1::RenderRequest& request) {
    grpc::ClientContext context;
    auto reader = stub_->Render(&context, request);
    Rendered out;
    v1::RenderChunk chunk;
    while (reader->Read(&chunk)) {
      out.chunks.push_back(chunk.svg());
      out.svg += chunk.svg();
    }
    out.status = FromGrpcStatus(reader->Finish());
    return out;
  }

  std::unique_ptr<RendererServiceImpl> service_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<v1::Renderer::Stub> stub_;
};

TEST_F(RendererServiceTest, RendersTheSameSvgAsTheLibrary) {
  v1::RenderRequest request;
  request.mutable_options()->set_title("Batch 42");
  request.mutable_options()->set_palette("masm");
  request.set_profile(profile::SerializeProfile(MakeProfile(1)));
  Rendered rendered = Render(request);
  ASSERT_TRUE(rendered.status.ok()) << rendered.status;
  EXPECT_THAT(rendered.svg, HasSubstr("<svg"));
  EXPECT_THAT(rendered.svg, HasSubstr("Batch 42"));
  EXPECT_THAT(rendered.svg, HasSubstr("std::math::u64::wrapping_add"));

  absl::StatusOr<RenderOptions> options = RenderOptionsFromProto(request.options());
  ASSERT_TRUE(options.ok()) << options.status();
  std::ostringstream expected;
  ASSERT_TRUE(RenderSvg(MakeProfile(1), *options, expected).ok());
  EXPECT_EQ(rendered.svg, expected.str());
}

TEST_F(RendererServiceTest, StreamsLargeSvgsInBoundedChunks) {
  Start(RendererServiceOptions{.chunk_bytes = 1000});
  v1::RenderRequest request;
  request.set_profile(profile::SerializeProfile(MakeProfile(1)));
  Rendered rendered = Render(request);
  ASSERT_TRUE(rendered.status.ok()) << rendered.status;
  ASSERT_GT(rendered.chunks.size(), 2u);
  for (const std::string& chunk : rendered.chunks) EXPECT_LE(chunk.size(), 1000u);
  EXPECT_THAT(rendered.svg, HasSubstr("</svg>"));
}

TEST_F(RendererServiceTest, RendersADiffWhenBeforeIsSet) {
  v1::RenderRequest request;
  request.set_before(profile::SerializeProfile(MakeProfile(1)));
  request.set_profile(profile::SerializeProfile(MakeProfile(3)));
  Rendered rendered = Render(request);
  ASSERT_TRUE(rendered.status.ok()) << rendered.status;

  absl::StatusOr<RenderOptions> options = RenderOptionsFromProto(request.options());
  ASSERT_TRUE(options.ok());
  std::ostringstream expected;
  ASSERT_TRUE(RenderDiffSvg(profile::ProfileDiff::Compute(MakeProfile(1), MakeProfile(3)), *options,
                            expected)
                  .ok());
  EXPECT_EQ(rendered.svg, expected.str());
  std::ostringstream plain;
  ASSERT_TRUE(RenderSvg(MakeProfile(3), *options, plain).ok());
  EXPECT_NE(rendered.svg, plain.str());
}

TEST_F(RendererServiceTest, RejectsMissingProfile) {
  Rendered rendered = Render(v1::RenderRequest());
  EXPECT_EQ(rendered.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rendered.status.message(), HasSubstr("profile"));
  EXPECT_TRUE(rendered.chunks.empty());
}

TEST_F(RendererServiceTest, RejectsMalformedProfiles) {
  v1::Profile bad;
  profile::ToProto(MakeProfile(1), &bad);
  bad.set_frame(2, 77);
  v1::RenderRequest request;
  request.set_profile(bad.SerializeAsString());
  Rendered rendered = Render(request);
  EXPECT_EQ(rendered.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rendered.status.message(), HasSubstr("frame[2]"));

  request.set_profile("\xff\xff\xff");
  EXPECT_EQ(Render(request).status.code(), absl::StatusCode::kInvalidArgument);

  request.set_profile(profile::SerializeProfile(MakeProfile(1)));
  request.set_before(bad.SerializeAsString());
  rendered = Render(request);
  EXPECT_EQ(rendered.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rendered.status.message(), HasSubstr("before"));
}

TEST_F(RendererServiceTest, RejectsBadOptions) {
  v1::RenderRequest request;
  request.set_profile(profile::SerializeProfile(MakeProfile(1)));
  request.mutable_options()->set_palette("rainbow");
  Rendered rendered = Render(request);
  EXPECT_EQ(rendered.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rendered.status.message(), HasSubstr("options"));

  request.mutable_options()->set_palette("hot");
  request.mutable_options()->set_min_width("wide");
  EXPECT_EQ(Render(request).status.code(), absl::StatusCode::kInvalidArgument);

  request.mutable_options()->clear_min_width();
  request.mutable_options()->set_width(4000000000u);
  EXPECT_EQ(Render(request).status.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RendererServiceTest, EmptyProfileIsFailedPrecondition) {
  v1::RenderRequest request;
  request.set_profile(profile::SerializeProfile(profile::Profile()));
  EXPECT_EQ(Render(request).status.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(RenderOptionsFromProtoTest, MapsWireOptionsAndDefaults) {
  absl::StatusOr<RenderOptions> defaults = RenderOptionsFromProto(v1::RenderOptions());
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->count_name, "cycles");
  EXPECT_EQ(defaults->width, 1200);
  EXPECT_EQ(defaults->title, RenderOptions().title);

  v1::RenderOptions wire;
  wire.set_title("t");
  wire.set_subtitle("s");
  wire.set_count_name("steps");
  wire.set_width(800);
  wire.set_min_width("0.5%");
  wire.set_palette("masm");
  wire.set_inverted(true);
  wire.set_reverse(true);
  wire.set_flamechart(true);
  absl::StatusOr<RenderOptions> options = RenderOptionsFromProto(wire);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->title, "t");
  EXPECT_EQ(options->subtitle, "s");
  EXPECT_EQ(options->count_name, "steps");
  EXPECT_EQ(options->width, 800);
  EXPECT_TRUE(options->min_width_percent);
  EXPECT_DOUBLE_EQ(options->min_width, 0.5);
  EXPECT_EQ(options->palette, Palette::kMasm);
  EXPECT_TRUE(options->inverted);
  EXPECT_TRUE(options->reverse);
  EXPECT_TRUE(options->flamechart);
}

}  // namespace
}  // namespace flamefleet::renderer
