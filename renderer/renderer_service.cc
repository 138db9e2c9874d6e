#include "renderer/renderer_service.h"

#include <algorithm>
#include <climits>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "profile/diff.h"
#include "profile/profile.h"
#include "profile/profile_proto.h"

namespace flamefleet::renderer {
namespace {

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

// Renders the request into an SVG string.
absl::StatusOr<std::string> RenderRequestToSvg(const v1::RenderRequest& request) {
  if (request.profile().empty()) {
    return absl::InvalidArgumentError("RenderRequest.profile is empty");
  }
  absl::StatusOr<RenderOptions> options = RenderOptionsFromProto(request.options());
  if (!options.ok()) return Prefixed("RenderRequest.options: ", options.status());
  absl::StatusOr<profile::Profile> after = profile::ParseProfile(request.profile());
  if (!after.ok()) return Prefixed("RenderRequest.", after.status());
  std::ostringstream svg;
  if (request.before().empty()) {
    FLAMEFLEET_RETURN_IF_ERROR(RenderSvg(*after, *options, svg));
  } else {
    absl::StatusOr<profile::Profile> before = profile::ParseProfile(request.before());
    if (!before.ok()) return Prefixed("RenderRequest.before: ", before.status());
    FLAMEFLEET_RETURN_IF_ERROR(
        RenderDiffSvg(profile::ProfileDiff::Compute(*before, *after), *options, svg));
  }
  return std::move(svg).str();
}

}  // namespace

absl::StatusOr<RenderOptions> RenderOptionsFromProto(const v1::RenderOptions& wire) {
  RenderOptions options;
  if (!wire.title().empty()) options.title = wire.title();
  options.subtitle = wire.subtitle();
  options.count_name = wire.count_name().empty() ? "cycles" : wire.count_name();
  if (wire.width() > static_cast<uint32_t>(INT_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat("width ", wire.width(), " is too large"));
  }
  if (wire.width() != 0) options.width = static_cast<int>(wire.width());
  if (!wire.min_width().empty()) {
    FLAMEFLEET_RETURN_IF_ERROR(ParseMinWidth(wire.min_width(), &options));
  }
  if (!wire.palette().empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(options.palette, ParsePalette(wire.palette()));
  }
  options.inverted = wire.inverted();
  options.reverse = wire.reverse();
  options.flamechart = wire.flamechart();
  FLAMEFLEET_RETURN_IF_ERROR(ValidateOptions(options));
  return options;
}

grpc::Status RendererServiceImpl::Render(grpc::ServerContext* context,
                                         const v1::RenderRequest* request,
                                         grpc::ServerWriter<v1::RenderChunk>* writer) {
  const absl::Time start = absl::Now();
  const bool diff = !request->before().empty();
  absl::StatusOr<std::string> svg = RenderRequestToSvg(*request);
  absl::Status status = svg.status();
  size_t sent = 0;
  if (status.ok()) {
    const size_t chunk_bytes = std::max<size_t>(options_.chunk_bytes, 1);
    v1::RenderChunk chunk;
    while (sent < svg->size()) {
      if (context->IsCancelled()) {
        status = absl::CancelledError("client cancelled the render");
        break;
      }
      const size_t n = std::min(chunk_bytes, svg->size() - sent);
      chunk.set_svg(svg->data() + sent, n);
      if (!writer->Write(chunk)) {
        status = absl::CancelledError("client went away while the SVG was streamed");
        break;
      }
      sent += n;
    }
  }
  LOG(INFO) << "Render" << (diff ? " (diff)" : "") << " profile_bytes=" << request->profile().size()
            << " svg_bytes=" << sent
            << " latency_ms=" << absl::ToInt64Milliseconds(absl::Now() - start)
            << " status=" << absl::StatusCodeToString(status.code());
  return ToGrpcStatus(status);
}

}  // namespace flamefleet::renderer
