// Client channel setup shared by the CLI, workers and the coordinator's render client: message
// limits, keepalive, and the transport security and bearer token of common/security.h.
//
//   auto channel = MakeChannel("127.0.0.1:7000");            // plaintext, no token
//   auto secure = MakeChannel("coord:7000", security);       // TLS and/or token as configured
//   auto stub = flamefleet::v1::Coordinator::NewStub(secure);
#ifndef FLAMEFLEET_COMMON_CHANNEL_H_
#define FLAMEFLEET_COMMON_CHANNEL_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>

#include "common/security.h"

namespace flamefleet {

// The default send/receive message limit of channels and servers (64 MiB).
inline constexpr int kDefaultMaxMessageBytes = 64 << 20;

// Creates a channel to `target` ("host:port" or a gRPC name like "dns:///svc:1234") with a
// `max_message_bytes` limit both ways and keepalive pings for long-polls. TLS when `security`
// has a CA or a certificate (see common/security.h); its token, if any, is sent on every call.
// Never fails: connection and handshake errors surface on the first call (as UNAVAILABLE).
// `security` is copied; thread-safe.
// `lb_policy` (e.g. "round_robin") spreads calls over every address a name resolves to; empty
// keeps gRPC's default (pick_first).
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target, const Security& security,
                                           int max_message_bytes = kDefaultMaxMessageBytes,
                                           const std::string& lb_policy = "");

// Creates a plaintext channel without a token (the local fleet of `flamefleet run`, tests).
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           int max_message_bytes = kDefaultMaxMessageBytes);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_CHANNEL_H_
