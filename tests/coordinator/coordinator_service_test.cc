#include "coordinator/coordinator_service.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/server.h"
#include "coordinator/clock.h"
#include "coordinator/internal/digest.h"
#include "coordinator/job_store.h"
#include "coordinator/render_client.h"
#include "coordinator/scheduler.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"
#include "gtest/gtest.h"
#include "profile/profile_proto.h"
#include "tests/testing/profile_helpers.h"

namespace flamefleet::coordinator {
namespace {

using testutil::FromFolded;
using testutil::ToFolded;

std::string MakeTempDir() {
  std::string pattern = ::testing::TempDir() + "/coordinator_service_test.XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

v1::SubmitBatchRequest MakeRequest(int jobs) {
  v1::SubmitBatchRequest request;
  for (int i = 0; i < jobs; ++i) {
    v1::JobSpec* job = request.add_jobs();
    job->set_name("suite/job" + std::to_string(i) + ".masm");
    job->set_source("begin push.1 drop end");
  }
  v1::Library* library = request.mutable_libraries()->add_libraries();
  library->set_namespace_("std");
  v1::LibraryFile* file = library->add_files();
  file->set_path("math/u64.masm");
  file->set_source("export.f\n  nop\nend\n");
  (*request.mutable_labels())["suite"] = "nightly";
  request.mutable_options()->set_title("nightly");
  return request;
}

class CoordinatorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(std::make_unique<InMemoryJobStore>()); }
  void TearDown() override { Stop(); }

  void Start(std::unique_ptr<JobStore> store) {
    store_ = std::move(store);
    scheduler_ = std::make_unique<JobScheduler>(
        &clock_, SchedulerOptions{.lease_duration = absl::Seconds(10), .max_lost_leases = 3});
    manager_ = std::make_unique<BatchManager>(store_.get(), scheduler_.get(), &render_, &clock_,
                                              manager_options_);
    ASSERT_TRUE(manager_->Recover().ok());
    CoordinatorServiceOptions options = options_;
    options.chunk_bytes = 1000;  // several chunks even for small artifacts
    service_ = std::make_unique<CoordinatorServiceImpl>(manager_.get(), options);
    ServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    auto server = GrpcServer::Start(server_options, {service_.get()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = v1::Coordinator::NewStub(server_->server()->InProcessChannel(grpc::ChannelArguments()));
  }

  // Tears everything down without any orderly step on the store (as a crash
  // would).
  void Stop() {
    if (manager_) manager_->Shutdown();
    if (server_) server_->Shutdown(absl::ZeroDuration());
    stub_.reset();
    server_.reset();
    service_.reset();
    manager_.reset();
    scheduler_.reset();
    store_.reset();
  }

  grpc::Status Submit(const v1::SubmitBatchRequest& request, std::string* id) {
    grpc::ClientContext context;
    v1::SubmitBatchResponse response;
    grpc::Status status = stub_->SubmitBatch(&context, request, &response);
    *id = response.batch_id();
    return status;
  }

  std::optional<v1::Task> Lease(std::vector<std::string> cached = {},
                                const std::string& worker_id = "w1") {
    grpc::ClientContext context;
    v1::LeaseTaskRequest request;
    request.set_worker_id(worker_id);
    request.set_wait_ms(0);
    for (const std::string& digest : cached) request.add_cached_library_digests(digest);
    v1::LeaseTaskResponse response;
    grpc::Status status = stub_->LeaseTask(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (!response.has_task()) return std::nullopt;
    return response.task();
  }

  // Sends a result in 7-byte chunks; returns the status and sets *accepted.
  grpc::Status Complete(const v1::Task& task, const profile::Profile* profile, bool* accepted,
                        const std::string& error = "", int64_t size_skew = 0) {
    std::string bytes = profile != nullptr ? profile::SerializeProfile(*profile) : "";
    grpc::ClientContext context;
    v1::CompleteTaskResponse response;
    auto writer = stub_->CompleteTask(&context, &response);
    v1::CompleteTaskChunk header;
    header.mutable_header()->set_task_id(task.task_id());
    header.mutable_header()->set_lease_id(task.lease_id());
    header.mutable_header()->set_succeeded(error.empty());
    header.mutable_header()->set_error(error);
    header.mutable_header()->set_cycles(profile != nullptr ? profile->total() : 0);
    header.mutable_header()->add_stack(42);
    header.mutable_header()->set_profile_bytes(bytes.size() + size_skew);
    writer->Write(header);
    for (size_t offset = 0; offset < bytes.size(); offset += 7) {
      v1::CompleteTaskChunk data;
      data.set_profile_data(bytes.substr(offset, 7));
      writer->Write(data);
    }
    writer->WritesDone();
    grpc::Status status = writer->Finish();
    *accepted = response.accepted();
    return status;
  }

  // Sends `bytes` as the profile of a result claiming `cycles`, in one chunk;
  // returns the status.
  grpc::Status CompleteRaw(const v1::Task& task, const std::string& bytes, uint64_t cycles,
                           bool* accepted) {
    grpc::ClientContext context;
    v1::CompleteTaskResponse response;
    auto writer = stub_->CompleteTask(&context, &response);
    v1::CompleteTaskChunk header;
    header.mutable_header()->set_task_id(task.task_id());
    header.mutable_header()->set_lease_id(task.lease_id());
    header.mutable_header()->set_succeeded(true);
    header.mutable_header()->set_cycles(cycles);
    header.mutable_header()->set_profile_bytes(bytes.size());
    writer->Write(header);
    if (!bytes.empty()) {
      v1::CompleteTaskChunk data;
      data.set_profile_data(bytes);
      writer->Write(data);
    }
    writer->WritesDone();
    grpc::Status status = writer->Finish();
    *accepted = response.accepted();
    return status;
  }

  v1::Batch Get(const std::string& id) {
    grpc::ClientContext context;
    v1::GetBatchRequest request;
    request.set_batch_id(id);
    v1::Batch batch;
    grpc::Status status = stub_->GetBatch(&context, request, &batch);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return batch;
  }

  grpc::Status Fetch(const std::string& id, const std::string& job, v1::ArtifactFormat format,
                     std::string* data, v1::AggregateView view = v1::AGGREGATE_VIEW_MERGED) {
    grpc::ClientContext context;
    v1::FetchArtifactRequest request;
    request.set_batch_id(id);
    request.set_job_name(job);
    request.set_format(format);
    request.set_view(view);
    auto reader = stub_->FetchArtifact(&context, request);
    v1::ArtifactChunk chunk;
    data->clear();
    while (reader->Read(&chunk)) *data += chunk.data();
    return reader->Finish();
  }

  // Aggregate RPC: the header and the artifact bytes.
  grpc::Status Aggregate(const v1::AggregateRequest& request, v1::AggregateHeader* header,
                         std::string* data) {
    grpc::ClientContext context;
    auto reader = stub_->Aggregate(&context, request);
    v1::AggregateChunk chunk;
    data->clear();
    while (reader->Read(&chunk)) {
      if (chunk.has_header()) {
        *header = chunk.header();
      } else {
        *data += chunk.data();
      }
    }
    return reader->Finish();
  }

  // Leases and completes every queued task with profile(task) until none is left; returns the
  // job names in lease order.
  std::vector<std::string> RunAll(
      const std::function<profile::Profile(const v1::Task&)>& profile_of) {
    std::vector<std::string> names;
    while (std::optional<v1::Task> task = Lease()) {
      names.push_back(task->job().name());
      profile::Profile p = profile_of(*task);
      bool accepted = false;
      EXPECT_TRUE(Complete(*task, &p, &accepted).ok());
      EXPECT_TRUE(accepted);
    }
    return names;
  }

  CoordinatorServiceOptions options_;  // used by Start()
  BatchManagerOptions manager_options_{.sweep_interval = absl::ZeroDuration()};
  FakeClock clock_;
  InProcessRenderClient render_;
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<JobScheduler> scheduler_;
  std::unique_ptr<BatchManager> manager_;
  std::unique_ptr<CoordinatorServiceImpl> service_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(CoordinatorServiceTest, BatchSucceedsAndAggregateIsTheExactSum) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(3), &id).ok());
  EXPECT_EQ(Get(id).state(), v1::BATCH_STATE_RUNNING);
  EXPECT_EQ(Get(id).jobs_queued(), 3u);

  std::vector<profile::Profile> profiles = {FromFolded("$main;a 10\n$main;b 3\n"),
                                            FromFolded("$main;a 5\n$main;c;d 100\n"),
                                            FromFolded("$main 1\n")};
  profile::Profile expected;
  for (int i = 0; i < 3; ++i) {
    std::optional<v1::Task> task = Lease();
    ASSERT_TRUE(task);
    EXPECT_EQ(task->attempt(), 1u);
    EXPECT_EQ(task->lease_ms(), 10000u);
    EXPECT_EQ(task->libraries().libraries_size(), 1);
    EXPECT_EQ(task->library_digest().size(), 64u);
    EXPECT_EQ(task->options().title(), "nightly");
    int index = task->task_id().back() - '0';
    EXPECT_EQ(task->job().name(), "suite/job" + std::to_string(index) + ".masm");
    bool accepted = false;
    ASSERT_TRUE(Complete(*task, &profiles[index], &accepted).ok());
    EXPECT_TRUE(accepted);
    expected.MergeFrom(profiles[index]);
  }
  EXPECT_FALSE(Lease().has_value());

  v1::Batch batch = Get(id);
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(batch.jobs_succeeded(), 3u);
  EXPECT_EQ(batch.aggregate_cycles(), 119u);
  EXPECT_GT(batch.finished_unix_ms(), 0);
  ASSERT_EQ(batch.jobs_size(), 3);
  EXPECT_EQ(batch.jobs(0).stack(0), 42u);
  EXPECT_EQ(batch.jobs(0).cycles(), 13u);

  std::string folded;
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &folded).ok());
  EXPECT_EQ(folded, ToFolded(expected));
  std::string bytes;
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_PROFILE, &bytes).ok());
  auto aggregate = profile::ParseProfile(bytes);
  ASSERT_TRUE(aggregate.ok());
  EXPECT_EQ(aggregate->total(), 119u);
  std::string svg;
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_SVG, &svg).ok());
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("nightly"), std::string::npos);

  std::string job_folded;
  ASSERT_TRUE(Fetch(id, "suite/job1.masm", v1::ARTIFACT_FORMAT_FOLDED, &job_folded).ok());
  EXPECT_EQ(job_folded, ToFolded(profiles[1]));
  std::string job_svg;
  ASSERT_TRUE(Fetch(id, "suite/job1.masm", v1::ARTIFACT_FORMAT_SVG, &job_svg).ok());
  EXPECT_NE(job_svg.find("suite/job1.masm"), std::string::npos);

  // The by-job aggregate: every job under its name, with the job's own stacks.
  std::string by_job;
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &by_job, v1::AGGREGATE_VIEW_BY_JOB).ok());
  EXPECT_EQ(by_job,
            "suite/job0.masm;$main;a 10\nsuite/job0.masm;$main;b 3\n"
            "suite/job1.masm;$main;a 5\nsuite/job1.masm;$main;c;d 100\n"
            "suite/job2.masm;$main 1\n");
  EXPECT_EQ(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &by_job, static_cast<v1::AggregateView>(7))
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(CoordinatorServiceTest, DuplicateCompletionIsIgnored) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  profile::Profile p = FromFolded("$main 5\n");
  bool accepted = false;
  ASSERT_TRUE(Complete(*task, &p, &accepted).ok());
  EXPECT_TRUE(accepted);
  ASSERT_TRUE(Complete(*task, &p, &accepted).ok());
  EXPECT_FALSE(accepted);
  std::string folded;
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &folded).ok());
  EXPECT_EQ(folded, "$main 5\n");
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &folded, v1::AGGREGATE_VIEW_BY_JOB).ok());
  EXPECT_EQ(folded, "suite/job0.masm;$main 5\n");  // counted once there too
}

TEST_F(CoordinatorServiceTest, ProgramFailureIsFinalAndTheBatchGoesOn) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(2), &id).ok());
  std::optional<v1::Task> first = Lease();
  std::optional<v1::Task> second = Lease();
  ASSERT_TRUE(first && second);
  bool accepted = false;
  ASSERT_TRUE(Complete(*first, nullptr, &accepted, "job0.masm:3:5: unknown instruction").ok());
  EXPECT_TRUE(accepted);
  EXPECT_FALSE(Lease().has_value());  // not retried
  profile::Profile p = FromFolded("$main;x 8\n");
  ASSERT_TRUE(Complete(*second, &p, &accepted).ok());

  v1::Batch batch = Get(id);
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_FAILED);
  EXPECT_EQ(batch.jobs_failed(), 1u);
  EXPECT_EQ(batch.jobs_succeeded(), 1u);
  EXPECT_EQ(batch.jobs(0).error(), "job0.masm:3:5: unknown instruction");
  EXPECT_EQ(batch.jobs(0).attempts(), 1u);
  std::string folded;
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &folded).ok());
  EXPECT_EQ(folded, "$main;x 8\n");
  grpc::Status status = Fetch(id, "suite/job0.masm", v1::ARTIFACT_FORMAT_SVG, &folded);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(CoordinatorServiceTest, ExpiredLeaseIsRetriedAndThreeLossesFailTheJob) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  std::optional<v1::Task> stale;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    std::optional<v1::Task> task = Lease();
    ASSERT_TRUE(task) << attempt;
    EXPECT_EQ(task->attempt(), static_cast<uint32_t>(attempt));
    EXPECT_EQ(Get(id).jobs_running(), 1u);
    clock_.Advance(absl::Seconds(11));
    manager_->SweepExpiredLeases();
    stale = task;
  }
  v1::Batch batch = Get(id);
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_FAILED);
  EXPECT_EQ(batch.jobs(0).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(batch.jobs(0).error(), "worker lost 3 times (last: lease expired)");
  EXPECT_EQ(batch.jobs(0).attempts(), 3u);
  // A result from a worker that lost its lease is ignored.
  profile::Profile p = FromFolded("$main 1\n");
  bool accepted = true;
  ASSERT_TRUE(Complete(*stale, &p, &accepted).ok());
  EXPECT_FALSE(accepted);
}

TEST_F(CoordinatorServiceTest, RenewLeaseKeepsTaskAndReportsGoneLeases) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(absl::Seconds(8));
    grpc::ClientContext context;
    v1::RenewLeaseRequest request;
    request.set_task_id(task->task_id());
    request.set_lease_id(task->lease_id());
    v1::RenewLeaseResponse response;
    ASSERT_TRUE(stub_->RenewLease(&context, request, &response).ok());
    EXPECT_TRUE(response.ok());
    EXPECT_EQ(response.lease_ms(), 10000u);
    manager_->SweepExpiredLeases();
  }
  EXPECT_EQ(Get(id).jobs_running(), 1u);
  grpc::ClientContext context;
  v1::RenewLeaseRequest request;
  request.set_task_id(task->task_id());
  request.set_lease_id("someone-else");
  v1::RenewLeaseResponse response;
  ASSERT_TRUE(stub_->RenewLease(&context, request, &response).ok());
  EXPECT_FALSE(response.ok());
}

TEST_F(CoordinatorServiceTest, ReleasedTaskIsQueuedAgainWithoutALostLease) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  auto task = manager_->LeaseTask("w1", absl::ZeroDuration(), {});
  ASSERT_TRUE(task.ok() && task->has_value());
  EXPECT_EQ(Get(id).jobs_running(), 1u);
  manager_->ReleaseTask((*task)->task_id(), (*task)->lease_id());
  EXPECT_EQ(Get(id).jobs_queued(), 1u);
  std::optional<v1::Task> again = Lease();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->task_id(), (*task)->task_id());
  bool accepted = false;
  profile::Profile p = FromFolded("$main 2\n");
  ASSERT_TRUE(Complete(**task, &p, &accepted).ok());
  EXPECT_FALSE(accepted);  // the released lease is dead
}

TEST_F(CoordinatorServiceTest, CachedLibrariesAreNotResent) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(2), &id).ok());
  std::optional<v1::Task> first = Lease();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->libraries().libraries_size(), 1);
  std::optional<v1::Task> second = Lease({first->library_digest()});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->library_digest(), first->library_digest());
  EXPECT_EQ(second->libraries().libraries_size(), 0);
}

TEST_F(CoordinatorServiceTest, SameRequestIdReturnsSameBatch) {
  v1::SubmitBatchRequest request = MakeRequest(2);
  request.set_request_id("nightly-2024-05-01");
  std::string first, second;
  ASSERT_TRUE(Submit(request, &first).ok());
  ASSERT_TRUE(Submit(request, &second).ok());
  EXPECT_EQ(first, second);
  EXPECT_EQ(Get(first).jobs_total(), 2u);
  ASSERT_TRUE(Lease());
  ASSERT_TRUE(Lease());
  EXPECT_FALSE(Lease().has_value());  // the jobs were queued once
}

TEST_F(CoordinatorServiceTest, InvalidRequestsNameTheField) {
  struct Case {
    v1::SubmitBatchRequest request;
    std::string field;
  };
  std::vector<Case> cases;
  cases.push_back({v1::SubmitBatchRequest(), "jobs"});
  cases.push_back({MakeRequest(2), "jobs[1].name"});
  cases.back().request.mutable_jobs(1)->clear_name();
  cases.push_back({MakeRequest(2), "jobs[1].name"});
  cases.back().request.mutable_jobs(1)->set_name("suite/job0.masm");
  cases.push_back({MakeRequest(2), "jobs[0].source"});
  cases.back().request.mutable_jobs(0)->clear_source();
  cases.push_back({MakeRequest(1), "jobs[0].name"});
  cases.back().request.mutable_jobs(0)->set_name("../escape.masm");
  cases.push_back({MakeRequest(1), "libraries.libraries[0].namespace"});
  cases.back().request.mutable_libraries()->mutable_libraries(0)->clear_namespace_();
  for (const Case& c : cases) {
    std::string id;
    grpc::Status status = Submit(c.request, &id);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_EQ(status.error_message().rfind(c.field + ":", 0), 0u)
        << status.error_message() << " should start with " << c.field;
  }
}

TEST_F(CoordinatorServiceTest, OversizedRequestsAreResourceExhausted) {
  std::string id;
  v1::SubmitBatchRequest many = MakeRequest(10001);
  grpc::Status status = Submit(many, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(status.error_message().find("10000"), std::string::npos);

  v1::SubmitBatchRequest big = MakeRequest(1);
  big.mutable_jobs(0)->set_source(std::string((1 << 20) + 1, 'x'));
  status = Submit(big, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message().rfind("jobs[0].source:", 0), 0u) << status.error_message();

  v1::SubmitBatchRequest huge = MakeRequest(60);
  for (v1::JobSpec& job : *huge.mutable_jobs()) job.set_source(std::string(1 << 20, 'x'));
  status = Submit(huge, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(CoordinatorServiceTest, CycleCapAboveTheCeilingIsRefusedAndNoCapGetsIt) {
  Stop();
  options_.submit_limits.max_cycle_cap = 1000;
  Start(std::make_unique<InMemoryJobStore>());
  v1::SubmitBatchRequest request = MakeRequest(1);
  request.mutable_options()->set_max_cycles(1001);
  std::string id;
  grpc::Status status = Submit(request, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(), "options.max_cycles: 1001 exceeds the limit of 1000 cycles");
  request.mutable_options()->set_max_cycles(0);  // no cap: gets the ceiling
  ASSERT_TRUE(Submit(request, &id).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  EXPECT_EQ(task->options().max_cycles(), 1000u);
}

TEST_F(CoordinatorServiceTest, MemoryBudgetAboveTheCeilingIsRefusedAndNoBudgetGetsIt) {
  Stop();
  options_.submit_limits.max_memory_cap = uint64_t{1} << 30;
  Start(std::make_unique<InMemoryJobStore>());
  v1::SubmitBatchRequest request = MakeRequest(1);
  request.mutable_options()->set_max_memory_bytes((uint64_t{1} << 30) + 1);
  std::string id;
  grpc::Status status = Submit(request, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(),
            "options.max_memory_bytes: 1073741825 exceeds the limit of 1073741824 bytes (the "
            "coordinator's --max-memory-cap)");
  request.mutable_options()->set_max_memory_bytes(0);  // no budget: gets the ceiling
  ASSERT_TRUE(Submit(request, &id).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  EXPECT_EQ(task->options().max_memory_bytes(), uint64_t{1} << 30);
}

TEST_F(CoordinatorServiceTest, WorkerAtTheLeaseLimitGetsNoMoreUntilOneEnds) {
  Stop();
  options_.max_leases_per_worker = 1;
  Start(std::make_unique<InMemoryJobStore>());
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(3), &id).ok());
  std::optional<v1::Task> first = Lease({}, "w1");
  ASSERT_TRUE(first);
  {
    grpc::ClientContext context;
    v1::LeaseTaskRequest request;
    request.set_worker_id("w1");
    v1::LeaseTaskResponse response;
    grpc::Status status = stub_->LeaseTask(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(status.error_message().find("max_leases_per_worker"), std::string::npos);
    EXPECT_FALSE(response.has_task());
  }
  EXPECT_EQ(Get(id).jobs_queued(), 2u);             // the refused call leased nothing
  std::optional<v1::Task> other = Lease({}, "w2");  // other workers are not affected
  ASSERT_TRUE(other);
  bool accepted = false;
  profile::Profile profile = FromFolded("$main 1\n");
  ASSERT_TRUE(Complete(*first, &profile, &accepted).ok());
  EXPECT_TRUE(accepted);
  EXPECT_TRUE(Lease({}, "w1"));  // the lease ended: w1 may lease again
}

TEST_F(CoordinatorServiceTest, CompleteTaskChecksProfileSize) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  profile::Profile p = FromFolded("$main 5\n");
  bool accepted = true;
  grpc::Status status = Complete(*task, &p, &accepted, "", /*size_skew=*/5);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("profile_bytes"), std::string::npos);
  // The lease is still live: a correct upload is accepted.
  ASSERT_TRUE(Complete(*task, &p, &accepted).ok());
  EXPECT_TRUE(accepted);
}

// Issue #12: a Profile whose first frame name is empty crashed the coordinator.
TEST_F(CoordinatorServiceTest, ProfileWithAnEmptyFrameNameIsRefused) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  v1::Profile bad;
  bad.add_frames("");
  for (uint32_t parent : {0u, 0u}) {
    bad.add_parent(parent);
    bad.add_frame(0);
    bad.add_self_cycles(3);
  }
  bad.set_total_cycles(6);
  bool accepted = true;
  grpc::Status status = CompleteRaw(*task, bad.SerializeAsString(), 6, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("frames[0] is empty"), std::string::npos)
      << status.error_message();
  // The service is alive and the lease still live: a good result is taken.
  profile::Profile good = FromFolded("$main 6\n");
  ASSERT_TRUE(Complete(*task, &good, &accepted).ok());
  EXPECT_TRUE(accepted);
  EXPECT_EQ(Get(id).state(), v1::BATCH_STATE_SUCCEEDED);
}

// Issue #12: a fake worker's lie (cycles that differ from its profile, totals
// past 2^64, a success without a profile) was accepted and then served from
// the result cache to later batches of the same program.
TEST_F(CoordinatorServiceTest, FabricatedResultIsRefusedAndNeverCached) {
  v1::SubmitBatchRequest request = MakeRequest(1);
  request.mutable_options()->set_max_cycles(1000000);
  std::string first;
  ASSERT_TRUE(Submit(request, &first).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  bool accepted = true;
  // cycles = 5 with a profile of 10^15 cycles.
  profile::Profile huge = FromFolded("$main 1000000000000000\n");
  grpc::Status status = CompleteRaw(*task, profile::SerializeProfile(huge), 5, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find(
                "total of 1000000000000000 cycles differs from header.cycles = 5"),
            std::string::npos)
      << status.error_message();
  // A consistent lie past the batch's cycle cap.
  status = CompleteRaw(*task, profile::SerializeProfile(huge), 1000000000000000, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("exceeds the batch's cycle cap"), std::string::npos)
      << status.error_message();
  // Self cycles summing past 2^64 (total_cycles set to the wrapped sum).
  v1::Profile wrapped;
  wrapped.add_frames("$main");
  for (uint64_t cycles : {uint64_t{0}, UINT64_MAX, uint64_t{6}}) {
    wrapped.add_parent(0);
    wrapped.add_frame(0);
    wrapped.add_self_cycles(cycles);
  }
  wrapped.set_total_cycles(5);
  status = CompleteRaw(*task, wrapped.SerializeAsString(), 5, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("overflow 64 bits"), std::string::npos)
      << status.error_message();
  // A success without a profile.
  status = CompleteRaw(*task, "", 5, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("must carry its profile"), std::string::npos)
      << status.error_message();
  v1::Batch batch = Get(first);
  EXPECT_EQ(batch.jobs(0).state(), v1::JOB_STATE_RUNNING);  // nothing recorded
  EXPECT_EQ(batch.aggregate_cycles(), 0u);

  // A later batch of the same program is not answered from the cache.
  std::string second;
  ASSERT_TRUE(Submit(request, &second).ok());
  batch = Get(second);
  EXPECT_EQ(batch.jobs(0).cached_from(), "");
  EXPECT_EQ(batch.jobs(0).state(), v1::JOB_STATE_QUEUED);

  // The liar's lease runs out and the job is retried under the usual attempt
  // rules; honest results then finish both batches.
  clock_.Advance(absl::Seconds(11));
  manager_->SweepExpiredLeases();
  profile::Profile honest = FromFolded("$main 12\n");
  std::vector<std::string> ran;
  while (std::optional<v1::Task> next = Lease()) {
    ran.push_back(next->task_id());
    if (next->task_id() == task->task_id()) {
      EXPECT_EQ(next->attempt(), 2u);
    }
    ASSERT_TRUE(Complete(*next, &honest, &accepted).ok());
    EXPECT_TRUE(accepted);
  }
  EXPECT_EQ(ran.size(), 2u);
  EXPECT_EQ(Get(first).jobs(0).cycles(), 12u);
  EXPECT_EQ(Get(second).jobs(0).cycles(), 12u);
  std::string third;
  ASSERT_TRUE(Submit(request, &third).ok());
  EXPECT_NE(Get(third).jobs(0).cached_from(), "");  // the honest result
  EXPECT_EQ(Get(third).jobs(0).cycles(), 12u);
}

TEST_F(CoordinatorServiceTest, CancelStopsTheBatch) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(3), &id).ok());
  std::optional<v1::Task> running = Lease();
  ASSERT_TRUE(running);
  grpc::ClientContext context;
  v1::CancelBatchRequest request;
  request.set_batch_id(id);
  v1::Batch cancelled;
  ASSERT_TRUE(stub_->CancelBatch(&context, request, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::BATCH_STATE_CANCELLED);
  EXPECT_EQ(cancelled.jobs_cancelled(), 3u);
  EXPECT_FALSE(Lease().has_value());
  profile::Profile p = FromFolded("$main 5\n");
  bool accepted = true;
  ASSERT_TRUE(Complete(*running, &p, &accepted).ok());
  EXPECT_FALSE(accepted);
  std::string data;
  EXPECT_EQ(Fetch(id, "", v1::ARTIFACT_FORMAT_SVG, &data).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(CoordinatorServiceTest, FetchReportsUnknownAndUnfinished) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  std::string data;
  EXPECT_EQ(Fetch("999", "", v1::ARTIFACT_FORMAT_SVG, &data).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Fetch(id, "nope.masm", v1::ARTIFACT_FORMAT_SVG, &data).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &data).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Fetch(id, "suite/job0.masm", v1::ARTIFACT_FORMAT_FOLDED, &data).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  grpc::ClientContext context;
  v1::GetBatchRequest request;
  request.set_batch_id("999");
  v1::Batch batch;
  EXPECT_EQ(stub_->GetBatch(&context, request, &batch).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorServiceTest, ListBatchesFiltersByLabelAndState) {
  std::string a, b;
  ASSERT_TRUE(Submit(MakeRequest(1), &a).ok());
  v1::SubmitBatchRequest other = MakeRequest(1);
  (*other.mutable_labels())["suite"] = "smoke";
  ASSERT_TRUE(Submit(other, &b).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  profile::Profile p = FromFolded("$main 5\n");
  bool accepted = false;
  ASSERT_TRUE(Complete(*task, &p, &accepted).ok());  // batch a ends

  auto list = [&](const v1::ListBatchesRequest& request) {
    grpc::ClientContext context;
    v1::ListBatchesResponse response;
    EXPECT_TRUE(stub_->ListBatches(&context, request, &response).ok());
    std::vector<std::string> ids;
    for (const v1::Batch& batch : response.batches()) {
      EXPECT_EQ(batch.jobs_size(), 0);
      ids.push_back(batch.batch_id());
    }
    return ids;
  };
  EXPECT_EQ(list({}), (std::vector<std::string>{b, a}));  // newest first
  v1::ListBatchesRequest by_label;
  (*by_label.mutable_labels())["suite"] = "smoke";
  EXPECT_EQ(list(by_label), std::vector<std::string>{b});
  v1::ListBatchesRequest by_state;
  by_state.set_state(v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(list(by_state), std::vector<std::string>{a});
  v1::ListBatchesRequest later;
  later.set_since_unix_ms(absl::ToUnixMillis(clock_.Now()) + 1);
  EXPECT_TRUE(list(later).empty());
}

// Issue #12: however many batches there are, one ListBatches answer stays bounded.
TEST_F(CoordinatorServiceTest, ListBatchesLimitIsClamped) {
  for (size_t i = 0; i <= kMaxListedBatches; ++i) {
    std::string id;
    ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  }
  grpc::ClientContext context;
  v1::ListBatchesRequest request;
  request.set_limit(1000000);
  v1::ListBatchesResponse response;
  ASSERT_TRUE(stub_->ListBatches(&context, request, &response).ok());
  EXPECT_EQ(static_cast<size_t>(response.batches_size()), kMaxListedBatches);
}

TEST_F(CoordinatorServiceTest, WatchStreamsProgressUntilTheBatchEnds) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(2), &id).ok());
  grpc::ClientContext context;
  v1::WatchBatchRequest request;
  request.set_batch_id(id);
  auto reader = stub_->WatchBatch(&context, request);
  v1::Batch event;
  ASSERT_TRUE(reader->Read(&event));  // the current state, at once
  EXPECT_EQ(event.state(), v1::BATCH_STATE_RUNNING);
  EXPECT_EQ(event.jobs_queued(), 2u);
  EXPECT_EQ(event.jobs_size(), 2);

  profile::Profile p = FromFolded("$main 5\n");
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::Task> task = Lease();
    ASSERT_TRUE(task);
    bool accepted = false;
    ASSERT_TRUE(Complete(*task, &p, &accepted).ok());
  }
  std::vector<v1::Batch> events;
  while (reader->Read(&event)) events.push_back(event);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(events.back().jobs_succeeded(), 2u);
  EXPECT_EQ(events.back().jobs_size(), 2);
  EXPECT_EQ(events.back().aggregate_cycles(), 10u);
}

TEST_F(CoordinatorServiceTest, WatchOfUnknownBatchIsNotFound) {
  grpc::ClientContext context;
  v1::WatchBatchRequest request;
  request.set_batch_id("404");
  auto reader = stub_->WatchBatch(&context, request);
  v1::Batch event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorServiceTest, RestartKeepsFinishedResultsAndCompletesTheRest) {
  Stop();
  std::string dir = MakeTempDir();
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok());
  Start(std::move(*store));

  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(2), &id).ok());
  std::optional<v1::Task> first = Lease();
  std::optional<v1::Task> second = Lease();
  ASSERT_TRUE(first && second);
  profile::Profile p0 = FromFolded("$main;a 10\n");
  profile::Profile p1 = FromFolded("$main;b 20\n");
  bool accepted = false;
  ASSERT_TRUE(Complete(*first, &p0, &accepted).ok());
  ASSERT_TRUE(accepted);
  Stop();  // the second task is still running: the "crash"

  store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok());
  Start(std::move(*store));
  v1::Batch batch = Get(id);
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_RUNNING);
  EXPECT_EQ(batch.jobs_succeeded(), 1u);
  EXPECT_EQ(batch.jobs_queued(), 1u);
  // The old worker's result is rejected (its lease died with the old
  // process)...
  ASSERT_TRUE(Complete(*second, &p1, &accepted).ok());
  EXPECT_FALSE(accepted);
  // ...and the job runs again as attempt 2.
  std::optional<v1::Task> retry = Lease();
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->task_id(), second->task_id());
  EXPECT_EQ(retry->attempt(), 2u);
  EXPECT_EQ(retry->job().source(), "begin push.1 drop end");
  EXPECT_EQ(retry->libraries().libraries_size(), 1);
  ASSERT_TRUE(Complete(*retry, &p1, &accepted).ok());
  EXPECT_TRUE(accepted);

  batch = Get(id);
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_SUCCEEDED);
  std::string folded;
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_FOLDED, &folded).ok());
  EXPECT_EQ(folded, "$main;a 10\n$main;b 20\n");

  // A later restart still serves the finished batch, and new ids do not
  // collide.
  Stop();
  store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok());
  Start(std::move(*store));
  EXPECT_EQ(Get(id).state(), v1::BATCH_STATE_SUCCEEDED);
  ASSERT_TRUE(Fetch(id, "suite/job0.masm", v1::ARTIFACT_FORMAT_FOLDED, &folded).ok());
  EXPECT_EQ(folded, "$main;a 10\n");
  std::string next;
  ASSERT_TRUE(Submit(MakeRequest(1), &next).ok());
  EXPECT_NE(next, id);
}

// A batch of `jobs` programs whose sources are distinct per `tag` (so that no result is reused
// across tags), labelled suite=`suite`.
v1::SubmitBatchRequest TaggedRequest(const std::string& tag, int jobs, const std::string& suite) {
  v1::SubmitBatchRequest request;
  for (int i = 0; i < jobs; ++i) {
    v1::JobSpec* job = request.add_jobs();
    job->set_name("job" + std::to_string(i) + ".masm");
    job->set_source("begin push." + std::to_string(i) + " drop end # " + tag);
  }
  (*request.mutable_labels())["suite"] = suite;
  return request;
}

profile::Profile ProfileFor(const v1::Task& task) {
  // Distinct per task: a frame named after the task and cycles from its id.
  std::string id = task.task_id();
  uint64_t cycles = 0;
  for (char c : id) cycles = cycles * 7 + static_cast<unsigned char>(c);
  return FromFolded("$main;" + task.job().name() + ";" + id + " " +
                    std::to_string(cycles % 1000 + 1) + "\n$main 3\n");
}

TEST_F(CoordinatorServiceTest, AggregateAcrossBatchesIsTheSumOfTheirJobProfiles) {
  profile::Profile expected;
  std::vector<std::string> nightly;
  for (const std::string tag : {"mon", "tue", "wed"}) {
    std::string id;
    ASSERT_TRUE(Submit(TaggedRequest(tag, 3, "nightly"), &id).ok());
    nightly.push_back(id);
    RunAll([&](const v1::Task& t) {
      profile::Profile p = ProfileFor(t);
      expected.MergeFrom(p);
      return p;
    });
    clock_.Advance(absl::Hours(24));
  }
  std::string other;
  ASSERT_TRUE(Submit(TaggedRequest("x", 2, "other"), &other).ok());
  RunAll(ProfileFor);
  std::string running;  // not ended: never merged
  ASSERT_TRUE(Submit(TaggedRequest("y", 1, "nightly"), &running).ok());

  v1::AggregateRequest request;
  (*request.mutable_labels())["suite"] = "nightly";
  request.set_format(v1::ARTIFACT_FORMAT_PROFILE);
  v1::AggregateHeader header;
  std::string data;
  grpc::Status status = Aggregate(request, &header, &data);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(std::vector<std::string>(header.batch_ids().begin(), header.batch_ids().end()),
            nightly);
  EXPECT_EQ(header.jobs(), 9u);
  EXPECT_EQ(header.cycles(), expected.total());
  absl::StatusOr<profile::Profile> merged = profile::ParseProfile(data);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(ToFolded(*merged), ToFolded(expected));

  request.set_format(v1::ARTIFACT_FORMAT_FOLDED);
  ASSERT_TRUE(Aggregate(request, &header, &data).ok());
  EXPECT_EQ(data, ToFolded(expected));
  request.set_format(v1::ARTIFACT_FORMAT_SVG);
  request.set_title("last nights");
  ASSERT_TRUE(Aggregate(request, &header, &data).ok());
  EXPECT_NE(data.find("<svg"), std::string::npos);
  EXPECT_NE(data.find("last nights"), std::string::npos);

  // The time window: only the last two nights.
  request.set_format(v1::ARTIFACT_FORMAT_PROFILE);
  request.set_since_unix_ms(absl::ToUnixMillis(clock_.Now() - absl::Hours(48)));
  ASSERT_TRUE(Aggregate(request, &header, &data).ok());
  EXPECT_EQ(std::vector<std::string>(header.batch_ids().begin(), header.batch_ids().end()),
            (std::vector<std::string>{nightly[1], nightly[2]}));

  (*request.mutable_labels())["suite"] = "nobody";
  EXPECT_EQ(Aggregate(request, &header, &data).error_code(), grpc::StatusCode::NOT_FOUND);
  request.set_format(static_cast<v1::ArtifactFormat>(99));
  EXPECT_EQ(Aggregate(request, &header, &data).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(CoordinatorServiceTest, CacheHitReturnsTheIdenticalProfileWithoutALease) {
  std::string first;
  ASSERT_TRUE(Submit(TaggedRequest("c", 2, "nightly"), &first).ok());
  RunAll(ProfileFor);
  ASSERT_EQ(Get(first).state(), v1::BATCH_STATE_SUCCEEDED);
  auto* store = static_cast<InMemoryJobStore*>(store_.get());
  const size_t attempts = store->AttemptCountForTest();

  std::string second;
  ASSERT_TRUE(Submit(TaggedRequest("c", 2, "nightly"), &second).ok());
  EXPECT_FALSE(Lease().has_value());  // nothing to run: no lease was issued
  EXPECT_EQ(store->AttemptCountForTest(), attempts);
  v1::Batch batch = Get(second);
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(batch.aggregate_cycles(), Get(first).aggregate_cycles());
  for (int i = 0; i < 2; ++i) {
    const std::string name = "job" + std::to_string(i) + ".masm";
    EXPECT_EQ(batch.jobs(i).cached_from(), first + "/" + name);
    EXPECT_EQ(batch.jobs(i).attempts(), 0u);
    std::string before, after;
    ASSERT_TRUE(Fetch(first, name, v1::ARTIFACT_FORMAT_PROFILE, &before).ok());
    ASSERT_TRUE(Fetch(second, name, v1::ARTIFACT_FORMAT_PROFILE, &after).ok());
    EXPECT_EQ(before, after);
  }
  std::string aggregate_before, aggregate_after;
  ASSERT_TRUE(Fetch(first, "", v1::ARTIFACT_FORMAT_FOLDED, &aggregate_before).ok());
  ASSERT_TRUE(Fetch(second, "", v1::ARTIFACT_FORMAT_FOLDED, &aggregate_after).ok());
  EXPECT_EQ(aggregate_before, aggregate_after);

  // --no-cache, another cycle cap or one changed byte of a program: the jobs run.
  v1::SubmitBatchRequest no_cache = TaggedRequest("c", 2, "nightly");
  no_cache.mutable_options()->set_no_cache(true);
  std::string third;
  ASSERT_TRUE(Submit(no_cache, &third).ok());
  EXPECT_EQ(RunAll(ProfileFor).size(), 2u);
  v1::SubmitBatchRequest capped = TaggedRequest("c", 2, "nightly");
  capped.mutable_options()->set_max_cycles(1000);
  ASSERT_TRUE(Submit(capped, &third).ok());
  EXPECT_EQ(RunAll(ProfileFor).size(), 2u);
  v1::SubmitBatchRequest changed = TaggedRequest("c", 2, "nightly");
  changed.mutable_jobs(1)->set_source(changed.jobs(1).source() + " ");
  ASSERT_TRUE(Submit(changed, &third).ok());
  EXPECT_EQ(RunAll(ProfileFor), (std::vector<std::string>{"job1.masm"}));
  EXPECT_EQ(Get(third).jobs(0).cached_from().empty(), false);
  EXPECT_EQ(Get(third).jobs(1).cached_from(), "");
}

TEST_F(CoordinatorServiceTest, JobsAreLeasedLongestFirstByEarlierRuns) {
  std::string first;
  ASSERT_TRUE(Submit(TaggedRequest("l", 4, "nightly"), &first).ok());
  const std::map<std::string, uint64_t> cycles = {
      {"job0.masm", 10}, {"job1.masm", 5000}, {"job2.masm", 70}, {"job3.masm", 900}};
  RunAll([&](const v1::Task& t) {
    return FromFolded("$main " + std::to_string(cycles.at(t.job().name())) + "\n");
  });
  // The same suite again (forced to run) plus one job never seen before.
  v1::SubmitBatchRequest again = TaggedRequest("l", 4, "nightly");
  again.mutable_options()->set_no_cache(true);
  v1::JobSpec* fresh = again.add_jobs();
  fresh->set_name("new.masm");
  fresh->set_source("begin push.9 drop end");
  std::string second;
  ASSERT_TRUE(Submit(again, &second).ok());
  EXPECT_EQ(RunAll(ProfileFor), (std::vector<std::string>{"new.masm", "job1.masm", "job3.masm",
                                                          "job2.masm", "job0.masm"}));
}

TEST_F(CoordinatorServiceTest, RetentionRemovesOldBatchesAndTheirUnsharedArtifacts) {
  Stop();
  manager_options_.keep_for = absl::Hours(24);
  manager_options_.garbage_min_age = absl::ZeroDuration();
  Start(std::make_unique<InMemoryJobStore>());
  std::string old_batch;
  ASSERT_TRUE(Submit(TaggedRequest("old", 2, "nightly"), &old_batch).ok());
  RunAll(ProfileFor);
  std::string old_profile;
  ASSERT_TRUE(Fetch(old_batch, "job0.masm", v1::ARTIFACT_FORMAT_PROFILE, &old_profile).ok());
  clock_.Advance(absl::Hours(30));
  std::string young;
  ASSERT_TRUE(Submit(TaggedRequest("young", 1, "nightly"), &young).ok());
  RunAll(ProfileFor);
  std::string running;
  ASSERT_TRUE(Submit(TaggedRequest("running", 1, "nightly"), &running).ok());
  clock_.Advance(absl::Hours(30));  // old ended 60 h ago, young 30 h ago: both past 24 h

  EXPECT_EQ(manager_->PruneExpiredBatches(), 2u);
  grpc::ClientContext context;
  v1::GetBatchRequest get;
  get.set_batch_id(old_batch);
  v1::Batch gone;
  EXPECT_EQ(stub_->GetBatch(&context, get, &gone).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Get(running).state(), v1::BATCH_STATE_RUNNING);  // unfinished: kept
  EXPECT_TRUE(absl::IsNotFound(store_->GetArtifact(internal::Sha256Hex(old_profile)).status()));
  EXPECT_EQ(manager_->PruneExpiredBatches(), 0u);
  // Its results are no longer reused: the same suite runs again.
  std::string again;
  ASSERT_TRUE(Submit(TaggedRequest("old", 2, "nightly"), &again).ok());
  EXPECT_EQ(RunAll(ProfileFor).size(), 3u);  // 2 jobs + the still running batch's job
}

// A job's summary travels after its profile in summary_data chunks, bounded by the header's
// summary_bytes, and is served back by FetchArtifact SUMMARY.
TEST_F(CoordinatorServiceTest, CompleteTaskTakesTheSummaryChunksAfterTheProfile) {
  std::string id;
  ASSERT_TRUE(Submit(MakeRequest(1), &id).ok());
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task);
  const std::string profile = profile::SerializeProfile(FromFolded("$main 6\n"));
  v1::JobSummary summary;
  summary.set_job(task->job().name());
  summary.set_program_digest("0x" + std::string(64, '0'));
  summary.set_dialect("v0.16");
  summary.set_inputs_digest("blake3:" + std::string(64, '0'));
  summary.set_cycles(6);
  v1::SummaryProcedure* main = summary.add_procedures();
  main->set_name("$main");
  main->set_self(6);
  main->set_inclusive(6);
  const std::string bytes = summary.SerializeAsString();
  // Sends the profile, then the summary in 5-byte chunks, claiming `claimed` summary bytes.
  auto complete = [&](uint64_t claimed, bool* accepted) {
    grpc::ClientContext context;
    v1::CompleteTaskResponse response;
    auto writer = stub_->CompleteTask(&context, &response);
    v1::CompleteTaskChunk chunk;
    v1::TaskHeader* header = chunk.mutable_header();
    header->set_task_id(task->task_id());
    header->set_lease_id(task->lease_id());
    header->set_succeeded(true);
    header->set_cycles(6);
    header->set_profile_bytes(profile.size());
    header->set_summary_bytes(claimed);
    writer->Write(chunk);
    chunk.set_profile_data(profile);
    writer->Write(chunk);
    for (size_t offset = 0; offset < bytes.size(); offset += 5) {
      chunk.set_summary_data(bytes.substr(offset, 5));
      writer->Write(chunk);
    }
    writer->WritesDone();
    grpc::Status status = writer->Finish();
    *accepted = response.accepted();
    return status;
  };
  bool accepted = false;
  grpc::Status status = complete(uint64_t{64} << 20, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(status.error_message().find("header.summary_bytes"), std::string::npos);
  status = complete(bytes.size() + 3, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("summary_data: received"), std::string::npos)
      << status.error_message();
  ASSERT_TRUE(complete(bytes.size(), &accepted).ok());
  EXPECT_TRUE(accepted);
  std::string fetched;
  ASSERT_TRUE(Fetch(id, task->job().name(), v1::ARTIFACT_FORMAT_SUMMARY, &fetched).ok());
  EXPECT_EQ(fetched, bytes);
  ASSERT_TRUE(Fetch(id, "", v1::ARTIFACT_FORMAT_SUMMARY, &fetched).ok());
  v1::BatchSummary batch;
  ASSERT_TRUE(batch.ParseFromString(fetched));
  ASSERT_EQ(batch.jobs_size(), 1);
  EXPECT_EQ(batch.jobs(0).summary().SerializeAsString(), bytes);
  EXPECT_EQ(Fetch("404", "", v1::ARTIFACT_FORMAT_SUMMARY, &fetched).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace flamefleet::coordinator
