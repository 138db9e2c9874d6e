// The renderer service: flamefleet.v1.Renderer over the SVG flame graph writer of
// renderer/flamegraph.h. Render takes one serialized profile (or two, for a differential graph:
// `before` -> `profile`) plus wire RenderOptions and streams the SVG back in RenderChunk messages
// of at most 1 MiB, so graphs larger than gRPC's 4 MiB message limit travel fine.
//
//   RendererServiceImpl service;
//   FLAMEFLEET_ASSIGN_OR_RETURN(auto server, GrpcServer::Start(options, {&service}));
//
// Thread-safety: the service keeps no mutable state; gRPC may run any number of Render calls
// concurrently.
#ifndef FLAMEFLEET_RENDERER_RENDERER_SERVICE_H_
#define FLAMEFLEET_RENDERER_RENDERER_SERVICE_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/sync_stream.h>

#include <cstddef>

#include "absl/status/statusor.h"
#include "flamefleet/v1/renderer.grpc.pb.h"
#include "renderer/flamegraph.h"

namespace flamefleet::renderer {

// Maps wire options onto RenderOptions: empty strings and zeros keep the defaults, except
// count_name, which defaults to "cycles" on the wire. Returns InvalidArgument naming the option for
// a bad min_width, palette or width, or anything ValidateOptions rejects.
absl::StatusOr<RenderOptions> RenderOptionsFromProto(const v1::RenderOptions& wire);

struct RendererServiceOptions {
  // Largest RenderChunk payload.
  size_t chunk_bytes = size_t{1} << 20;
};

class RendererServiceImpl final : public v1::Renderer::Service {
 public:
  explicit RendererServiceImpl(RendererServiceOptions options = {}) : options_(options) {}

  // Renders request->profile (a diff if request->before is set too) and streams the SVG. Returns
  // INVALID_ARGUMENT for a missing or malformed profile or bad options, FAILED_PRECONDITION when
  // the profile (or both diff inputs) has no cycles, CANCELLED if the client went away while
  // streaming.
  grpc::Status Render(grpc::ServerContext* context, const v1::RenderRequest* request,
                      grpc::ServerWriter<v1::RenderChunk>* writer) override;

 private:
  const RendererServiceOptions options_;
};

}  // namespace flamefleet::renderer

#endif  // FLAMEFLEET_RENDERER_RENDERER_SERVICE_H_
