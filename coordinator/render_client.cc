#include "coordinator/render_client.h"

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <algorithm>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "profile/profile_proto.h"
#include "renderer/flamegraph.h"

namespace flamefleet::coordinator {
namespace {

// Maps the wire options onto the renderer's, with the wire defaults (cycles,
// 1200 px).
absl::StatusOr<renderer::RenderOptions> FromWire(const v1::RenderOptions& wire) {
  renderer::RenderOptions options;
  if (!wire.title().empty()) options.title = wire.title();
  options.subtitle = wire.subtitle();
  options.count_name = wire.count_name().empty() ? "cycles" : wire.count_name();
  if (wire.width() != 0) options.width = static_cast<int>(wire.width());
  if (!wire.min_width().empty()) {
    FLAMEFLEET_RETURN_IF_ERROR(renderer::ParseMinWidth(wire.min_width(), &options));
  }
  if (!wire.palette().empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(options.palette, renderer::ParsePalette(wire.palette()));
  }
  options.inverted = wire.inverted();
  options.reverse = wire.reverse();
  options.flamechart = wire.flamechart();
  FLAMEFLEET_RETURN_IF_ERROR(renderer::ValidateOptions(options));
  return options;
}

}  // namespace

absl::StatusOr<std::string> InProcessRenderClient::RenderSvg(const profile::Profile& profile,
                                                             const v1::RenderOptions& wire) {
  FLAMEFLEET_ASSIGN_OR_RETURN(renderer::RenderOptions options, FromWire(wire));
  std::ostringstream out;
  FLAMEFLEET_RETURN_IF_ERROR(renderer::RenderSvg(profile, options, out));
  return std::move(out).str();
}

GrpcRenderClient::GrpcRenderClient(std::shared_ptr<grpc::Channel> channel, absl::Duration deadline,
                                   std::string target, absl::Duration retry_for)
    : stub_(v1::Renderer::NewStub(std::move(channel))),
      deadline_(deadline),
      target_(target.empty() ? "(unnamed)" : std::move(target)),
      retry_for_(retry_for) {}

absl::StatusOr<std::string> GrpcRenderClient::RenderSvg(const profile::Profile& profile,
                                                        const v1::RenderOptions& options) {
  return RenderSvgWithin(profile, options, deadline_);
}

absl::StatusOr<std::string> GrpcRenderClient::RenderSvgWithin(const profile::Profile& profile,
                                                              const v1::RenderOptions& options,
                                                              absl::Duration deadline) {
  v1::RenderRequest request;
  *request.mutable_options() = options;
  request.set_profile(profile::SerializeProfile(profile));
  const absl::Time start = absl::Now();
  const absl::Time give_up = start + std::min(deadline, deadline_);
  const absl::Time stop_retrying = std::min(give_up, start + retry_for_);
  absl::Duration backoff = absl::Milliseconds(50);
  int attempts = 0;
  while (true) {
    ++attempts;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(give_up));
    std::unique_ptr<grpc::ClientReader<v1::RenderChunk>> reader = stub_->Render(&context, request);
    std::string svg;
    v1::RenderChunk chunk;
    while (reader->Read(&chunk)) svg += chunk.svg();
    const absl::Status status = FromGrpcStatus(reader->Finish());
    if (status.ok()) return svg;
    // UNAVAILABLE: the renderer is down or restarting, or the channel is in
    // its reconnect backoff; rendering is idempotent, so try again briefly.
    if (!absl::IsUnavailable(status) || absl::Now() + backoff >= stop_retrying) {
      return absl::Status(
          status.code(),
          absl::StrCat("renderer at ", target_, ": ",
                       absl::AsciiStrToLower(absl::StatusCodeToString(status.code())), ": ",
                       status.message(),
                       attempts > 1
                           ? absl::StrCat(" (", attempts, " attempts in ",
                                          absl::FormatDuration(absl::Trunc(
                                              absl::Now() - start, absl::Milliseconds(100))),
                                          ")")
                           : ""));
    }
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
}

}  // namespace flamefleet::coordinator
