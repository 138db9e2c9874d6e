#include "common/channel.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace flamefleet {

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target, const Security& security,
                                           int max_message_bytes, const std::string& lb_policy) {
  grpc::ChannelArguments args;
  if (!lb_policy.empty()) args.SetLoadBalancingPolicyName(lb_policy);
  args.SetMaxReceiveMessageSize(max_message_bytes);
  args.SetMaxSendMessageSize(max_message_bytes);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      target, MakeChannelCredentials(security), args, MakeTokenInterceptors(security.token));
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target, int max_message_bytes) {
  return MakeChannel(target, Security{}, max_message_bytes);
}

}  // namespace flamefleet
