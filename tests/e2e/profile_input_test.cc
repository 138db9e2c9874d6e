// Multi-process tests of hostile profiles (issue #12): the real renderer and coordinator
// binaries on OS-chosen ports, driven by raw gRPC clients that send what no honest worker
// would: a Profile whose first frame name is empty (it crashed both processes) and a result
// whose cycles differ from its profile. Each process must answer with an error and stay up.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"
#include "flamefleet/v1/profile.pb.h"
#include "flamefleet/v1/renderer.grpc.pb.h"
#include "gtest/gtest.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;

std::chrono::system_clock::time_point Deadline() {
  return absl::ToChronoTime(absl::Now() + absl::Seconds(30));
}

// A wire profile: node 0 is the root, node i > 0 has parent parents[i-1] and
// frame frames_of[i-1], 5 self cycles each.
v1::Profile MakeProfile(const std::vector<std::string>& names, const std::vector<uint32_t>& parents,
                        const std::vector<uint32_t>& frames_of) {
  v1::Profile p;
  for (const std::string& name : names) p.add_frames(name);
  p.add_parent(0);
  p.add_frame(0);
  p.add_self_cycles(0);
  for (size_t i = 0; i < parents.size(); ++i) {
    p.add_parent(parents[i]);
    p.add_frame(frames_of[i]);
    p.add_self_cycles(5);
  }
  p.set_total_cycles(5 * parents.size());
  return p;
}

// Calls Render; returns the status and the SVG.
grpc::Status Render(v1::Renderer::Stub& stub, const v1::Profile& profile, std::string* svg) {
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  v1::RenderRequest request;
  request.set_profile(profile.SerializeAsString());
  auto reader = stub.Render(&context, request);
  v1::RenderChunk chunk;
  svg->clear();
  while (reader->Read(&chunk)) *svg += chunk.svg();
  return reader->Finish();
}

class ProfileInputTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::path(testing::TempDir()) /
        absl::StrCat("profile_input_",
                     testing::UnitTest::GetInstance()->current_test_info()->name(), "_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ / "state");
  }
  void TearDown() override {
    for (auto* p : {&coordinator_, &renderer_}) {
      if (*p != nullptr) (*p)->Stop(absl::Seconds(10));
    }
    fs::remove_all(root_);
  }

  // Starts `argv` and returns "127.0.0.1:<port>" from its LISTENING line.
  std::string Start(const std::vector<std::string>& argv, std::unique_ptr<Subprocess>* out) {
    auto p = Subprocess::Start(argv);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return "";
    *out = std::move(*p);
    absl::StatusOr<int> port = (*out)->WaitForListeningPort(absl::Seconds(60));
    EXPECT_TRUE(port.ok()) << port.status();
    return port.ok() ? absl::StrCat("127.0.0.1:", *port) : "";
  }

  fs::path root_;
  std::unique_ptr<Subprocess> renderer_;
  std::unique_ptr<Subprocess> coordinator_;
};

TEST_F(ProfileInputTest, RendererRefusesAnEmptyFrameNameAndStaysUp) {
  const std::string address = Start({FLAMEFLEET_RENDERER, "--listen", "127.0.0.1:0"}, &renderer_);
  ASSERT_FALSE(address.empty());
  auto stub =
      v1::Renderer::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  std::string svg;
  grpc::Status status = Render(*stub, MakeProfile({"", "main"}, {0, 1}, {0, 1}), &svg);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("frames[0] is empty"), std::string::npos)
      << status.error_message();
  // The same process answers a good request.
  status = Render(*stub, MakeProfile({"main", "leaf"}, {0, 1}, {0, 1}), &svg);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("leaf"), std::string::npos);
  EXPECT_FALSE(renderer_->Poll().has_value());  // still running
}

TEST_F(ProfileInputTest, CoordinatorRefusesBadResultsStaysUpAndCachesNone) {
  const std::string address = Start({FLAMEFLEET_COORDINATOR, "--listen", "127.0.0.1:0",
                                     "--state-dir", (root_ / "state").string()},
                                    &coordinator_);
  ASSERT_FALSE(address.empty());
  auto stub =
      v1::Coordinator::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  auto submit = [&] {
    v1::SubmitBatchRequest request;
    v1::JobSpec* job = request.add_jobs();
    job->set_name("main.masm");
    job->set_source("begin push.1 drop end");
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    v1::SubmitBatchResponse response;
    EXPECT_TRUE(stub->SubmitBatch(&context, request, &response).ok());
    return response.batch_id();
  };
  auto get = [&](const std::string& id) {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    v1::GetBatchRequest request;
    request.set_batch_id(id);
    v1::Batch batch;
    EXPECT_TRUE(stub->GetBatch(&context, request, &batch).ok());
    return batch;
  };
  // The fake worker: a result of `cycles` with `profile`.
  auto complete = [&](const v1::Task& task, uint64_t cycles, const v1::Profile& profile) {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    v1::CompleteTaskResponse response;
    auto writer = stub->CompleteTask(&context, &response);
    const std::string bytes = profile.SerializeAsString();
    v1::CompleteTaskChunk chunk;
    chunk.mutable_header()->set_task_id(task.task_id());
    chunk.mutable_header()->set_lease_id(task.lease_id());
    chunk.mutable_header()->set_succeeded(true);
    chunk.mutable_header()->set_cycles(cycles);
    chunk.mutable_header()->set_profile_bytes(bytes.size());
    writer->Write(chunk);
    v1::CompleteTaskChunk data;
    data.set_profile_data(bytes);
    writer->Write(data);
    writer->WritesDone();
    return writer->Finish();
  };

  const std::string first = submit();
  ASSERT_FALSE(first.empty());
  v1::Task task;
  {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    v1::LeaseTaskRequest request;
    request.set_worker_id("liar");
    request.set_wait_ms(10000);
    v1::LeaseTaskResponse response;
    ASSERT_TRUE(stub->LeaseTask(&context, request, &response).ok());
    ASSERT_TRUE(response.has_task());
    task = response.task();
  }
  // An empty first frame name (crashed the coordinator before).
  grpc::Status status = complete(task, 10, MakeProfile({"", "main"}, {0, 1}, {0, 1}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("frames[0] is empty"), std::string::npos)
      << status.error_message();
  // A lie: 5 cycles claimed, a profile of 10^15.
  v1::Profile huge = MakeProfile({"$exec::$main"}, {0}, {0});
  huge.set_self_cycles(1, 1000000000000000);
  huge.set_total_cycles(1000000000000000);
  status = complete(task, 5, huge);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("differs from header.cycles = 5"), std::string::npos)
      << status.error_message();

  // Still serving; nothing was recorded, and a second batch of the same program is queued,
  // not answered from the cache.
  v1::Batch batch = get(first);
  ASSERT_EQ(batch.jobs_size(), 1);
  EXPECT_EQ(batch.jobs(0).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(batch.jobs(0).cycles(), 0u);
  const std::string second = submit();
  batch = get(second);
  ASSERT_EQ(batch.jobs_size(), 1);
  EXPECT_EQ(batch.jobs(0).cached_from(), "");
  EXPECT_EQ(batch.jobs(0).state(), v1::JOB_STATE_QUEUED);
  EXPECT_FALSE(coordinator_->Poll().has_value());       // still running
  EXPECT_EQ(coordinator_->Stop(absl::Seconds(10)), 0);  // drains and exits cleanly
  coordinator_.reset();
}

}  // namespace
}  // namespace flamefleet
