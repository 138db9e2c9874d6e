// Mapping between absl::Status and grpc::Status. gRPC 1.51 cannot build a grpc::Status from an
// absl::Status; the two code enums share numbers (both follow google.rpc.Code), so the code is
// cast and the message copied.
//
//   grpc::Status Handler(...) { return ToGrpcStatus(DoWork()); }
//   absl::Status s = FromGrpcStatus(stub->Call(&ctx, req, &resp));
#ifndef FLAMEFLEET_COMMON_GRPC_STATUS_H_
#define FLAMEFLEET_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace flamefleet {

// Converts an absl::Status to the grpc::Status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Converts a grpc::Status to the absl::Status with the same code and message.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_GRPC_STATUS_H_
