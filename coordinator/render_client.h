// Turns profiles into SVG flame graphs for the coordinator, behind an interface so that the
// coordinator runs with a remote renderer service (`GrpcRenderClient`, Renderer.Render over gRPC)
// or without one (`InProcessRenderClient`, renderer/flamegraph.h in this process; also what
// tests use).
//
//   std::unique_ptr<RenderClient> client;
//   if (address.empty()) {
//     client = std::make_unique<InProcessRenderClient>();
//   } else {
//     client = std::make_unique<GrpcRenderClient>(MakeChannel(address));
//   }
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string svg, client->RenderSvg(profile, options));
//
// Thread-safety: both implementations may be called concurrently.
#ifndef FLAMEFLEET_COORDINATOR_RENDER_CLIENT_H_
#define FLAMEFLEET_COORDINATOR_RENDER_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "flamefleet/v1/renderer.grpc.pb.h"
#include "profile/profile.h"

namespace grpc {
class Channel;
}  // namespace grpc

namespace flamefleet::coordinator {

class RenderClient {
 public:
  virtual ~RenderClient() = default;
  // Returns the SVG flame graph of `profile`. Returns InvalidArgument for bad options,
  // FailedPrecondition for an empty profile, Unavailable / DeadlineExceeded when a remote renderer
  // cannot be reached in time.
  virtual absl::StatusOr<std::string> RenderSvg(const profile::Profile& profile,
                                                const v1::RenderOptions& options) = 0;
  // Like RenderSvg, but gives up after `deadline` in total (retries included) with DeadlineExceeded
  // or Unavailable. The default ignores `deadline` (an in-process render cannot hang on a peer).
  virtual absl::StatusOr<std::string> RenderSvgWithin(const profile::Profile& profile,
                                                      const v1::RenderOptions& options,
                                                      absl::Duration deadline) {
    (void)deadline;
    return RenderSvg(profile, options);
  }
};

// Calls flamefleet::renderer::RenderSvg directly.
class InProcessRenderClient : public RenderClient {
 public:
  absl::StatusOr<std::string> RenderSvg(const profile::Profile& profile,
                                        const v1::RenderOptions& options) override;
};

// How long GrpcRenderClient retries a Render call that fails with UNAVAILABLE (renderer restarting,
// channel in reconnect backoff) before giving up, by default; always within the call's deadline.
// Coordinator flag --render-retry-ms.
inline constexpr absl::Duration kDefaultRenderRetryFor = absl::Seconds(5);

// Calls Renderer.Render on `channel` and concatenates the streamed chunks; each call has `deadline`
// to finish. UNAVAILABLE is retried with backoff (50 ms doubling to 1 s) for up to `retry_for`;
// every error names the renderer: "renderer at TARGET: unavailable: ...", with the original code.
class GrpcRenderClient : public RenderClient {
 public:
  // `channel` is shared with the caller (it may serve other stubs); `target` is its address, for
  // error messages.
  explicit GrpcRenderClient(std::shared_ptr<grpc::Channel> channel,
                            absl::Duration deadline = absl::Seconds(60), std::string target = "",
                            absl::Duration retry_for = kDefaultRenderRetryFor);
  absl::StatusOr<std::string> RenderSvg(const profile::Profile& profile,
                                        const v1::RenderOptions& options) override;
  absl::StatusOr<std::string> RenderSvgWithin(const profile::Profile& profile,
                                              const v1::RenderOptions& options,
                                              absl::Duration deadline) override;

 private:
  std::unique_ptr<v1::Renderer::Stub> stub_;
  absl::Duration deadline_;
  std::string target_;
  absl::Duration retry_for_;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_RENDER_CLIENT_H_
