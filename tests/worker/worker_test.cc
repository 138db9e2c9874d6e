#include "worker/worker.h"

#include <grpcpp/server_context.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/channel.h"
#include "common/server.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/profile.h"
#include "profile/profile_proto.h"
#include "runner/runner.h"
#include "tests/testing/test_programs.h"

namespace flamefleet::worker {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::Duration kTimeout = absl::Seconds(30);

// Runs forever: the condition is pushed again by every iteration.
constexpr char kRunaway[] = "begin\n  push.1\n  while.true\n    push.1\n  end\nend\n";

// One completed task as the fake coordinator received it.
struct Result {
  v1::TaskHeader header;
  std::string profile;
  std::string summary;  // the serialized JobSummary ("" if none was sent)
};

// A coordinator that serves queued tasks and records everything the worker
// sends.
class FakeCoordinator : public v1::Coordinator::Service {
 public:
  void AddTask(v1::Task task) {
    absl::MutexLock lock(&mu_);
    if (task.lease_id().empty()) task.set_lease_id(absl::StrCat("lease-", task.task_id()));
    tasks_.push_back(std::move(task));
  }
  // RenewLease answers ok=false for task `task_id` from its `n`-th renewal on
  // (1-based).
  void LoseLeaseAtRenewal(const std::string& task_id, int n) {
    absl::MutexLock lock(&mu_);
    lose_task_ = task_id;
    lose_at_renewal_ = n;
  }

  grpc::Status LeaseTask(grpc::ServerContext*, const v1::LeaseTaskRequest* request,
                         v1::LeaseTaskResponse* response) override {
    absl::MutexLock lock(&mu_);
    lease_requests_.push_back(*request);
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](std::deque<v1::Task>* tasks) { return !tasks->empty(); }, &tasks_),
                         absl::Milliseconds(request->wait_ms()));
    if (!tasks_.empty()) {
      *response->mutable_task() = std::move(tasks_.front());
      tasks_.pop_front();
    }
    return grpc::Status::OK;
  }

  grpc::Status RenewLease(grpc::ServerContext*, const v1::RenewLeaseRequest* request,
                          v1::RenewLeaseResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++renewals_;
    const int n = ++renewals_of_[request->task_id()];
    const bool lost = request->task_id() == lose_task_ && n >= lose_at_renewal_;
    response->set_ok(!lost);
    if (!lost) response->set_lease_ms(30);
    return grpc::Status::OK;
  }

  grpc::Status CompleteTask(grpc::ServerContext*, grpc::ServerReader<v1::CompleteTaskChunk>* reader,
                            v1::CompleteTaskResponse* response) override {
    Result result;
    v1::CompleteTaskChunk chunk;
    bool first = true;
    while (reader->Read(&chunk)) {
      if (first) {
        if (!chunk.has_header()) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "first chunk has no header");
        }
        result.header = chunk.header();
        first = false;
      } else if (chunk.has_summary_data()) {
        result.summary += chunk.summary_data();
      } else {
        result.profile += chunk.profile_data();
        absl::MutexLock lock(&mu_);
        ++data_chunks_;
      }
    }
    response->set_accepted(true);
    absl::MutexLock lock(&mu_);
    results_.push_back(std::move(result));
    return grpc::Status::OK;
  }

  // Waits until `n` results arrived; returns them.
  std::vector<Result> WaitForResults(size_t n) {
    absl::MutexLock lock(&mu_);
    n_ = n;
    mu_.AwaitWithTimeout(absl::Condition(this, &FakeCoordinator::HasResults), kTimeout);
    return results_;
  }
  // Waits until at least `n` renewals arrived; returns false on timeout.
  bool WaitForRenewals(int n) {
    absl::MutexLock lock(&mu_);
    renewals_wanted_ = n;
    return mu_.AwaitWithTimeout(absl::Condition(this, &FakeCoordinator::HasRenewals), kTimeout);
  }
  // Waits until `n` lease requests arrived after every queued task was handed
  // out.
  bool WaitForIdleLeases(size_t n) {
    absl::MutexLock lock(&mu_);
    idle_wanted_ = lease_requests_.size() + n;
    return mu_.AwaitWithTimeout(absl::Condition(this, &FakeCoordinator::HasIdleLeases), kTimeout);
  }

  int renewals() {
    absl::MutexLock lock(&mu_);
    return renewals_;
  }
  int data_chunks() {
    absl::MutexLock lock(&mu_);
    return data_chunks_;
  }
  std::vector<v1::LeaseTaskRequest> lease_requests() {
    absl::MutexLock lock(&mu_);
    return lease_requests_;
  }
  std::vector<Result> results() {
    absl::MutexLock lock(&mu_);
    return results_;
  }

 private:
  bool HasResults() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return results_.size() >= n_; }
  bool HasRenewals() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return renewals_ >= renewals_wanted_;
  }
  bool HasIdleLeases() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return tasks_.empty() && lease_requests_.size() >= idle_wanted_;
  }

  absl::Mutex mu_;
  std::deque<v1::Task> tasks_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::LeaseTaskRequest> lease_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<Result> results_ ABSL_GUARDED_BY(mu_);
  int renewals_ ABSL_GUARDED_BY(mu_) = 0;
  int data_chunks_ ABSL_GUARDED_BY(mu_) = 0;
  int lose_at_renewal_ ABSL_GUARDED_BY(mu_) = 0;
  std::string lose_task_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> renewals_of_ ABSL_GUARDED_BY(mu_);
  size_t n_ ABSL_GUARDED_BY(mu_) = 0;
  int renewals_wanted_ ABSL_GUARDED_BY(mu_) = 0;
  size_t idle_wanted_ ABSL_GUARDED_BY(mu_) = 0;
};

// A task running `source`, classic v0.16 MASM (as the coordinator names a job's dialect).
v1::Task MakeTask(const std::string& id, const std::string& name, const std::string& source) {
  v1::Task task;
  task.set_task_id(id);
  task.set_attempt(1);
  task.set_lease_ms(30);
  task.mutable_job()->set_name(name);
  task.mutable_job()->set_source(source);
  task.mutable_job()->set_dialect("v0.16");
  return task;
}

class WorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<GrpcServer>> server =
        GrpcServer::Start(options, {&coordinator_});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  void TearDown() override {
    if (worker_ != nullptr) worker_->Stop(absl::ZeroDuration());
    server_->Shutdown(absl::ZeroDuration());
  }

  Worker& StartWorker(int slots = 1, size_t chunk_bytes = size_t{1} << 20) {
    WorkerOptions options;
    options.worker_id = "test-worker";
    options.slots = slots;
    options.lease_wait = absl::Milliseconds(100);
    options.chunk_bytes = chunk_bytes;
    worker_ = std::make_unique<Worker>(
        v1::Coordinator::NewStub(MakeChannel(absl::StrCat("127.0.0.1:", server_->port()))),
        options);
    worker_->Start();
    return *worker_;
  }

  FakeCoordinator coordinator_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<Worker> worker_;
};

TEST_F(WorkerTest, AJobThatNamesNoDialectRunsAsCurrentMiden) {
  v1::Task task =
      MakeTask("b/0", "sq.masm",
               "proc square\n  dup mul\nend\n\nbegin\n  push.3 exec.square\n  swap drop\nend\n");
  task.mutable_job()->clear_dialect();
  coordinator_.AddTask(task);
  StartWorker(/*slots=*/1);
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  const v1::TaskHeader& header = results[0].header;
  ASSERT_TRUE(header.succeeded()) << header.error();
  ASSERT_FALSE(header.stack().empty());
  EXPECT_EQ(header.stack(0), 9u);
  EXPECT_EQ(header.cycles(), 11u);  // v0.25.7 (the model): with the entry prologue
}

// A job may carry its kernel (a Miden project's kernel package): `syscall` reaches it.
TEST_F(WorkerTest, AJobWithAKernelRunsItsSyscalls) {
  v1::Task task =
      MakeTask("b/0", "app/main", "begin\n  push.21\n  syscall.double\n  swap drop\nend\n");
  task.mutable_job()->clear_dialect();
  task.mutable_job()->mutable_kernel()->set_path("kernel/kern.masm");
  task.mutable_job()->mutable_kernel()->set_source("pub proc double\n  dup add\nend\n");
  v1::Task broken = MakeTask("b/1", "app/broken", "begin\n  syscall.double\nend\n");
  broken.mutable_job()->clear_dialect();
  broken.mutable_job()->mutable_kernel()->set_path("kernel/kern.masm");
  broken.mutable_job()->mutable_kernel()->set_source("pub proc double\n  dup nonsense\nend\n");
  coordinator_.AddTask(task);
  coordinator_.AddTask(broken);
  StartWorker(/*slots=*/1);
  std::vector<Result> results = coordinator_.WaitForResults(2);
  ASSERT_EQ(results.size(), 2u);
  std::sort(results.begin(), results.end(), [](const Result& a, const Result& b) {
    return a.header.task_id() < b.header.task_id();
  });
  const v1::TaskHeader& header = results[0].header;
  ASSERT_TRUE(header.succeeded()) << header.error();
  ASSERT_FALSE(header.stack().empty());
  EXPECT_EQ(header.stack(0), 42u);
  EXPECT_EQ(header.cycles(), 22u);  // v0.25.7 (the model, with the same kernel)
  // A kernel error is the job's error, at the kernel's file:line:col.
  EXPECT_FALSE(results[1].header.succeeded());
  EXPECT_THAT(results[1].header.error(), HasSubstr("kernel/kern.masm:2:7"));
}

TEST_F(WorkerTest, ReportsProfileWhoseTotalEqualsTheCycles) {
  coordinator_.AddTask(MakeTask("b/0", "suite/square.masm", R"(proc.square
  dup mul
end
begin
  push.0
  repeat.10
    push.3 exec.square add
  end
  swap drop
end
)"));
  // Small chunks, so the profile travels in several data messages.
  StartWorker(/*slots=*/1, /*chunk_bytes=*/16);
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  const v1::TaskHeader& header = results[0].header;
  EXPECT_TRUE(header.succeeded()) << header.error();
  EXPECT_EQ(header.task_id(), "b/0");
  EXPECT_EQ(header.lease_id(), "lease-b/0");
  EXPECT_GT(header.cycles(), 0u);
  ASSERT_FALSE(header.stack().empty());
  EXPECT_EQ(header.stack(0), 90u);
  EXPECT_EQ(header.profile_bytes(), results[0].profile.size());
  EXPECT_GT(coordinator_.data_chunks(), 1);
  absl::StatusOr<profile::Profile> profile = profile::ParseProfile(results[0].profile);
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_EQ(profile->total(), header.cycles());
}

TEST_F(WorkerTest, SendsTheJobsSummaryWithTheBatchsPhasesAlsoForATrap) {
  v1::Task task = MakeTask("b/0", "suite/phases.masm", R"(proc.f
  push.1 add
end
begin
  push.0 emit.1 exec.f emit.2 exec.f drop
end
)");
  task.mutable_options()->add_phases("1=2");
  coordinator_.AddTask(task);
  v1::Task trap = MakeTask("b/1", "suite/trap.masm", R"(proc.f
  push.0 assert
end
begin
  exec.f
end
)");
  coordinator_.AddTask(trap);
  // Small chunks, so the summary travels in several data messages too.
  StartWorker(/*slots=*/1, /*chunk_bytes=*/16);
  std::vector<Result> results = coordinator_.WaitForResults(2);
  ASSERT_EQ(results.size(), 2u);
  std::sort(results.begin(), results.end(), [](const Result& a, const Result& b) {
    return a.header.task_id() < b.header.task_id();
  });
  const Result& ok = results[0];
  ASSERT_TRUE(ok.header.succeeded()) << ok.header.error();
  EXPECT_EQ(ok.header.summary_bytes(), ok.summary.size());
  absl::StatusOr<runner::JobSummary> summary = runner::DecodeJobSummary(ok.summary);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->job, "suite/phases.masm");
  EXPECT_EQ(summary->cycles, ok.header.cycles());
  EXPECT_EQ(summary->dialect, "v0.16");
  ASSERT_EQ(summary->stats.phases.size(), 1u);
  EXPECT_EQ(summary->stats.phases[0].name, "1..2");
  EXPECT_EQ(summary->stats.phases[0].count, 1u);
  const auto f =
      std::find_if(summary->stats.procedures.begin(), summary->stats.procedures.end(),
                   [](const runner::ProcedureStats& p) { return p.name.ends_with("f"); });
  ASSERT_NE(f, summary->stats.procedures.end());
  EXPECT_EQ(f->calls, 2u);
  EXPECT_FALSE(summary->stats.trace_shape.has_value());  // v0.16: not modelled

  // A trap fails the job, and its summary records the run up to the trap.
  const Result& failed = results[1];
  EXPECT_FALSE(failed.header.succeeded());
  absl::StatusOr<runner::JobSummary> trapped = runner::DecodeJobSummary(failed.summary);
  ASSERT_TRUE(trapped.ok()) << trapped.status();
  EXPECT_FALSE(trapped->status.ok());
  EXPECT_EQ(std::string(trapped->status.message()), failed.header.error());
}

TEST_F(WorkerTest, ASnapshotJobSendsASummaryOfItsReplay) {
  runner::RecordOptions options;
  options.dialect = vm::Dialect::kV0_16;
  absl::StatusOr<runner::Recording> recording = runner::RecordSource(
      "rec.masm", "proc.f\n  push.2 mul\nend\nbegin\n  push.3 exec.f exec.f drop\nend\n", {},
      options);
  ASSERT_TRUE(recording.ok()) << recording.status();
  v1::Task task = MakeTask("b/0", "rec.mdsnap", "");
  task.mutable_job()->set_snapshot(runner::EncodeSnapshot(recording->snapshot));
  coordinator_.AddTask(task);
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(results[0].header.succeeded()) << results[0].header.error();
  absl::StatusOr<runner::JobSummary> summary = runner::DecodeJobSummary(results[0].summary);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->job, "rec.mdsnap");
  EXPECT_EQ(summary->cycles, recording->result.cycles);
  EXPECT_TRUE(summary->stats.phases.empty());
}

// Issue #18: a v0.25 job's summary carries the trace shape `profile --summary` writes, for a
// source and for a snapshot job alike.
TEST_F(WorkerTest, AV025JobsSummaryCarriesItsTraceShape) {
  constexpr char kSource[] =
      "proc h\n  hperm\nend\nbegin\n  exec.h exec.h dropw dropw dropw\nend\n";
  v1::Task task = MakeTask("b/0", "h.masm", kSource);
  task.mutable_job()->set_dialect("v0.25");
  coordinator_.AddTask(task);
  runner::RecordOptions options;
  options.dialect = vm::Dialect::kV0_25;
  absl::StatusOr<runner::Recording> recording =
      runner::RecordSource("rec.masm", kSource, {}, options);
  ASSERT_TRUE(recording.ok()) << recording.status();
  v1::Task replay = MakeTask("b/1", "rec.mdsnap", "");
  replay.mutable_job()->clear_dialect();
  replay.mutable_job()->set_snapshot(runner::EncodeSnapshot(recording->snapshot));
  coordinator_.AddTask(replay);
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(2);
  ASSERT_EQ(results.size(), 2u);

  // The same program profiled here, with the trace shape on.
  vm::AssemblerOptions assembler;
  assembler.dialect = vm::Dialect::kV0_25;
  absl::StatusOr<vm::Program> program = vm::Assembler(assembler).AssembleSource("h.masm", kSource);
  ASSERT_TRUE(program.ok()) << program.status();
  runner::StatsOptions stats;
  stats.trace_shape = true;
  absl::StatusOr<runner::StatsRun> local = runner::ProfileProgramWithStats(*program, {}, {}, stats);
  ASSERT_TRUE(local.ok()) << local.status();
  ASSERT_TRUE(local->stats.trace_shape.has_value());
  for (const Result& result : results) {
    ASSERT_TRUE(result.header.succeeded()) << result.header.error();
    absl::StatusOr<runner::JobSummary> summary = runner::DecodeJobSummary(result.summary);
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_TRUE(summary->stats.trace_shape.has_value()) << summary->job;
    const vm::TraceShape& t = summary->stats.trace_shape->totals;
    const vm::TraceShape& want = local->stats.trace_shape->totals;
    EXPECT_EQ(t.hasher_requests, want.hasher_requests) << summary->job;
    EXPECT_EQ(t.hasher_states, want.hasher_states) << summary->job;
    EXPECT_EQ(t.chiplets_rows, want.chiplets_rows) << summary->job;
    EXPECT_EQ(t.range_rows, want.range_rows) << summary->job;
    EXPECT_EQ(t.padded_len, want.padded_len) << summary->job;
    EXPECT_EQ(summary->stats.trace_shape->procedures.size(), summary->stats.procedures.size());
  }
}

TEST_F(WorkerTest, AssemblesAgainstInMemoryLibrariesAndCachesThemByDigest) {
  v1::Task first = MakeTask("b/0", "a.masm", R"(use.mylib::util::math
begin
  push.7 exec.math::square swap drop
end
)");
  first.set_library_digest("digest-1");
  v1::LibrarySet* libraries = first.mutable_libraries();
  libraries->set_digest("digest-1");
  v1::Library* library = libraries->add_libraries();
  library->set_namespace_("mylib");
  v1::LibraryFile* file = library->add_files();
  file->set_path("util/math.masm");
  file->set_source("export.square\n  dup mul\nend\n");
  coordinator_.AddTask(first);
  StartWorker();
  ASSERT_EQ(coordinator_.WaitForResults(1).size(), 1u);

  // The second task of the batch comes without the library set: the worker has
  // it cached.
  v1::Task second = MakeTask("b/1", "b.masm", first.job().source());
  second.set_library_digest("digest-1");
  coordinator_.AddTask(second);
  std::vector<Result> results = coordinator_.WaitForResults(2);
  ASSERT_EQ(results.size(), 2u);
  for (const Result& result : results) {
    EXPECT_TRUE(result.header.succeeded()) << result.header.error();
    ASSERT_FALSE(result.header.stack().empty());
    EXPECT_EQ(result.header.stack(0), 49u);
  }
  ASSERT_TRUE(coordinator_.WaitForIdleLeases(1));
  EXPECT_THAT(coordinator_.lease_requests().back().cached_library_digests(), Contains("digest-1"));
  EXPECT_EQ(coordinator_.lease_requests().back().worker_id(), "test-worker");
}

TEST_F(WorkerTest, ReportsAssemblyErrorWithItsLocation) {
  coordinator_.AddTask(MakeTask("b/0", "suite/broken.masm", "begin\n  push.1\n  bogus_op\nend\n"));
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].header.succeeded());
  EXPECT_THAT(results[0].header.error(), HasSubstr("suite/broken.masm:3:"));
  EXPECT_TRUE(results[0].profile.empty());
  EXPECT_TRUE(results[0].summary.empty());  // the program never ran: no summary
  EXPECT_EQ(results[0].header.summary_bytes(), 0u);
  worker_->Stop(absl::ZeroDuration());
  EXPECT_EQ(worker_->stats().tasks_failed, 1u);
}

// Issue #12: a module the batch's library set lacks is an assembly error naming
// the module; the worker never reads <ns>/<module>.masm from its own working
// directory (nor echoes its first line).
TEST_F(WorkerTest, Issue12MissingLibraryModuleIsAnErrorNotADiskRead) {
  const std::string ns = absl::StrCat("leak", getpid());
  std::filesystem::create_directories(ns);
  std::ofstream(std::filesystem::path(ns) / "secret.masm") << "worker-local secret first line\n";
  const std::string source = absl::StrCat("use.", ns, "::secret\nbegin\n  exec.secret::f\nend\n");
  for (const char* digest : {"", "digest-leak"}) {
    v1::Task task = MakeTask(absl::StrCat("b/", *digest == 0 ? 0 : 1), "a.masm", source);
    task.set_library_digest(digest);
    v1::Library* library = task.mutable_libraries()->add_libraries();
    library->set_namespace_(ns);
    v1::LibraryFile* file = library->add_files();
    file->set_path("other.masm");
    file->set_source("export.g\n  push.1 drop\nend\n");
    coordinator_.AddTask(task);
  }
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(2);
  std::filesystem::remove_all(ns);
  ASSERT_EQ(results.size(), 2u);
  for (const Result& result : results) {
    EXPECT_FALSE(result.header.succeeded());
    EXPECT_THAT(result.header.error(),
                HasSubstr(absl::StrCat("module '", ns, "::secret' not found")));
    EXPECT_THAT(result.header.error(), HasSubstr("a.masm:1:"));
    EXPECT_THAT(result.header.error(), Not(HasSubstr("secret first line")));
  }
}

TEST_F(WorkerTest, ReportsCycleCapAsFailure) {
  v1::Task task = MakeTask("b/0", "loop.masm", kRunaway);
  task.mutable_options()->set_max_cycles(10000);
  coordinator_.AddTask(task);
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].header.succeeded());
  EXPECT_THAT(results[0].header.error(), HasSubstr("cycle limit of 10000"));
}

TEST_F(WorkerTest, ReportsTheJobsMemoryBudgetAsFailure) {
  // One word per 32 KiB page, forever: stopped by the batch's budget, not the cycle cap.
  v1::Task task = MakeTask("b/0", "hog.masm", testutil::kPageHogProgram);
  task.mutable_options()->set_max_memory_bytes(uint64_t{8} << 20);
  coordinator_.AddTask(task);
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].header.succeeded());
  EXPECT_THAT(results[0].header.error(), HasSubstr("memory budget of 8388608 bytes exceeded"));
}

TEST_F(WorkerTest, ReportsTheJobsProgramOpsLimitAsFailure) {
  v1::Task task = MakeTask("b/0", "amp.masm", "begin repeat.1000 nop end end\n");
  task.mutable_options()->set_max_program_ops(999);
  coordinator_.AddTask(task);
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].header.succeeded());
  EXPECT_THAT(results[0].header.error(),
              HasSubstr("amp.masm:1:7: repeat.1000 expands to 1,000 operations, over the limit "
                        "of 999 operations (--max-program-ops)"));
}

TEST_F(WorkerTest, ReportsBadInputsAsFailure) {
  v1::Task task = MakeTask("b/0", "p.masm", "begin\n  push.1 drop\nend\n");
  task.mutable_job()->set_inputs("{ not json");
  task.mutable_job()->set_inputs_format(v1::INPUTS_FORMAT_JSON);
  coordinator_.AddTask(task);
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].header.succeeded());
  EXPECT_THAT(results[0].header.error(), HasSubstr("p.masm.inputs"));
}

TEST_F(WorkerTest, StopsAtTheWallDeadlineAndReportsIt) {
  v1::Task task = MakeTask("b/0", "loop.masm", kRunaway);
  task.mutable_options()->set_deadline_ms(100);
  coordinator_.AddTask(task);
  StartWorker();
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].header.succeeded());
  EXPECT_THAT(results[0].header.error(), HasSubstr("deadline of 100 ms exceeded"));
}

TEST_F(WorkerTest, RenewsLeaseWhileRunningAndAbandonsWhenItIsLost) {
  coordinator_.LoseLeaseAtRenewal("b/0", 3);
  coordinator_.AddTask(MakeTask("b/0", "loop.masm", kRunaway));
  coordinator_.AddTask(MakeTask("b/1", "ok.masm", "begin\n  push.1 drop\nend\n"));
  Worker& worker = StartWorker();
  // The runaway task is dropped after the third renewal; the worker goes on
  // with the next task and reports only that one.
  std::vector<Result> results = coordinator_.WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].header.task_id(), "b/1");
  EXPECT_TRUE(results[0].header.succeeded()) << results[0].header.error();
  EXPECT_GE(coordinator_.renewals(), 3);
  worker.Stop(absl::ZeroDuration());
  const WorkerStats stats = worker.stats();
  EXPECT_GE(stats.renewals, 2u);
  EXPECT_EQ(stats.tasks_abandoned, 1u);
  EXPECT_EQ(stats.tasks_succeeded, 1u);
}

TEST_F(WorkerTest, StopAbandonsRunningTasksAfterTheGracePeriod) {
  coordinator_.AddTask(MakeTask("b/0", "loop.masm", kRunaway));
  Worker& worker = StartWorker(/*slots=*/2);
  ASSERT_TRUE(coordinator_.WaitForRenewals(1));
  worker.Stop(absl::Milliseconds(50));
  EXPECT_EQ(worker.stats().tasks_abandoned, 1u);
  EXPECT_TRUE(coordinator_.results().empty());
}

TEST(LibraryAssemblerOptionsTest, RejectsPathsThatEscapeTheLibrary) {
  v1::LibrarySet set;
  v1::Library* library = set.add_libraries();
  library->set_namespace_("std");
  library->add_files()->set_path("../etc/passwd.masm");
  EXPECT_FALSE(LibraryAssemblerOptions(set).ok());
  library->mutable_files(0)->set_path("/abs.masm");
  EXPECT_FALSE(LibraryAssemblerOptions(set).ok());
  library->mutable_files(0)->set_path("math/u64.masm");
  absl::StatusOr<vm::AssemblerOptions> options = LibraryAssemblerOptions(set);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->virtual_files.contains("std/math/u64.masm"));
}

}  // namespace
}  // namespace flamefleet::worker
