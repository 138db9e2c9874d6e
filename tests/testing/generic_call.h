// Test helper: one call to any gRPC method by path, whatever its kind (unary or streaming), with
// raw bytes. Sends `request` as the only message, half-closes, reads every response and returns
// the final status. Used to reach every method of a service descriptor and reflection, and to
// prove what the server does before any handler runs.
#ifndef FLAMEFLEET_TESTS_TESTING_GENERIC_CALL_H_
#define FLAMEFLEET_TESTS_TESTING_GENERIC_CALL_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace flamefleet::testutil {

// `authorization` is sent as the "authorization" header unless empty.
inline grpc::Status GenericCall(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& method, const std::string& request,
                                const std::string& authorization = "", int* responses = nullptr) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  if (!authorization.empty()) context.AddMetadata("authorization", authorization);
  grpc::CompletionQueue cq;
  void* tag = nullptr;
  bool ok = false;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, method, &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  grpc::Slice slice(request);
  grpc::ByteBuffer buffer(&slice, 1);
  call->WriteLast(buffer, grpc::WriteOptions(), reinterpret_cast<void*>(2));
  cq.Next(&tag, &ok);
  int count = 0;
  grpc::ByteBuffer response;
  while (true) {
    call->Read(&response, reinterpret_cast<void*>(3));
    cq.Next(&tag, &ok);
    if (!ok) break;
    ++count;
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  if (responses != nullptr) *responses = count;
  return status;
}

}  // namespace flamefleet::testutil

#endif  // FLAMEFLEET_TESTS_TESTING_GENERIC_CALL_H_
