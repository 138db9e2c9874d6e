#include "coordinator/render_client.h"

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <sstream>
#include <utility>

#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "profile/profile_proto.h"
#include "renderer/flamegraph.h"

namespace flamefleet::coordinator {
namespace {

// Maps the wire options onto the renderer's, with the wire defaults (cycles,
// 1200 px).
absl::StatusOr<renderer::RenderOptions> FromWire(
    const v1::RenderOptions& wire) {
  renderer::RenderOptions options;
  if (!wire.title().empty()) options.title = wire.title();
  options.subtitle = wire.subtitle();
  options.count_name = wire.count_name().empty() ? "cycles" : wire.count_name();
  if (wire.width() != 0) options.width = static_cast<int>(wire.width());
  if (!wire.min_width().empty()) {
    FLAMEFLEET_RETURN_IF_ERROR(
        renderer::ParseMinWidth(wire.min_width(), &options));
  }
  if (!wire.palette().empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(options.palette,
                                renderer::ParsePalette(wire.palette()));
  }
  options.inverted = wire.inverted();
  options.reverse = wire.reverse();
  options.flamechart = wire.flamechart();
  FLAMEFLEET_RETURN_IF_ERROR(renderer::ValidateOptions(options));
  return options;
}

}  // namespace

absl::StatusOr<std::string> InProcessRenderClient::RenderSvg(
    const profile::Profile& profile, const v1::RenderOptions& wire) {
  FLAMEFLEET_ASSIGN_OR_RETURN(renderer::RenderOptions options, FromWire(wire));
  std::ostringstream out;
  FLAMEFLEET_RETURN_IF_ERROR(renderer::RenderSvg(profile, options, out));
  return std::move(out).str();
}

GrpcRenderClient::GrpcRenderClient(std::shared_ptr<grpc::Channel> channel,
                                   absl::Duration deadline)
    : stub_(v1::Renderer::NewStub(std::move(channel))), deadline_(deadline) {}

absl::StatusOr<std::string> GrpcRenderClient::RenderSvg(
    const profile::Profile& profile, const v1::RenderOptions& options) {
  v1::RenderRequest request;
  *request.mutable_options() = options;
  request.set_profile(profile::SerializeProfile(profile));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  std::unique_ptr<grpc::ClientReader<v1::RenderChunk>> reader =
      stub_->Render(&context, request);
  std::string svg;
  v1::RenderChunk chunk;
  while (reader->Read(&chunk)) svg += chunk.svg();
  FLAMEFLEET_RETURN_IF_ERROR(FromGrpcStatus(reader->Finish()));
  return svg;
}

}  // namespace flamefleet::coordinator
