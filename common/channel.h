// Client channel setup shared by the CLI, workers and the coordinator's render client.
//
//   auto channel = MakeChannel("127.0.0.1:7000");
//   auto stub = flamefleet::v1::Coordinator::NewStub(channel);
#ifndef FLAMEFLEET_COMMON_CHANNEL_H_
#define FLAMEFLEET_COMMON_CHANNEL_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>

namespace flamefleet {

// Creates an insecure channel to `target` ("host:port" or a gRPC name like "dns:///svc:1234")
// with a 64 MiB message limit and keepalive pings for long-polls. Never fails: connection errors
// surface on the first call (as UNAVAILABLE).
// `lb_policy` (e.g. "round_robin") spreads calls over every address a name
// resolves to; empty keeps gRPC's default (pick_first).
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           int max_message_bytes = 64 << 20,
                                           const std::string& lb_policy = "");

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_CHANNEL_H_
