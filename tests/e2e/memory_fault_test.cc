// Issue #12, fleet fault test: a job that allocates without bound must fail alone. One worker
// process with two slots runs under a process memory limit (RLIMIT_AS, set with prlimit a few
// GiB above the worker's own footprint): the memory hog fails with the per-job budget error,
// the innocent job on the other slot succeeds, and the worker lives on to run a further job.
#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/batch_client.h"
#include "common/channel.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "tests/testing/test_files.h"
#include "tests/testing/test_programs.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using testutil::WriteFile;

// A busy loop of `iterations` (about 10 cycles each) that ends with a known stack.
std::string Innocent(int iterations) {
  return absl::StrCat("begin\n  push.", iterations,
                      "\n  dup.0 neq.0\n  while.true\n    sub.1 dup.0 neq.0\n  end\n  drop\nend\n");
}

// The virtual memory size of process `pid` in bytes (VmSize of /proc/PID/status), or 0.
uint64_t VirtualBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmSize:", 0) != 0) continue;
    // "VmSize:\t  123456 kB"; a large value (an ASan build's) follows the tab directly.
    std::vector<std::string> parts =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    uint64_t kb = 0;
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return kb * 1024;
  }
  return 0;
}

class MemoryFaultTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) / absl::StrCat("memory_fault_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ / "state");
#if defined(__SANITIZE_ADDRESS__)
    // An ASan build reserves terabytes of address space for its shadow and allocator and
    // aborts (instead of throwing std::bad_alloc) when an allocation fails, so a process
    // address-space limit tests nothing there. The VM budget itself runs under ASan in
    // tests/vm/resource_limits_test.cc; these fleet cases run in the Release build.
    GTEST_SKIP() << "RLIMIT_AS fault tests do not apply to an ASan build";
#endif
  }
  void TearDown() override {
    StopFleet();
    fs::remove_all(root_);
  }

  // Submits the programs in `dir` with `options` and waits (at most two minutes) for the batch
  // to end. Fails early when the worker process exits: then no one would run the jobs.
  absl::StatusOr<v1::Batch> RunBatch(const fs::path& dir, const v1::BatchOptions& options) {
    absl::StatusOr<v1::SubmitBatchRequest> req = cli::BuildSubmitRequest({dir.string()}, {}, {});
    if (!req.ok()) return req.status();
    *req->mutable_options() = options;
    req->mutable_options()->set_no_cache(true);
    absl::StatusOr<std::string> id = client_->Submit(*req);
    if (!id.ok()) return id.status();
    const absl::Time deadline = absl::Now() + absl::Minutes(2);
    while (absl::Now() < deadline) {
      absl::StatusOr<v1::Batch> batch = client_->Get(*id);
      if (!batch.ok()) return batch.status();
      if (batch->state() != v1::BATCH_STATE_RUNNING &&
          batch->state() != v1::BATCH_STATE_UNSPECIFIED) {
        return batch;
      }
      if (worker_->Poll().has_value()) {
        return absl::UnavailableError("the worker process exited while the batch ran");
      }
      absl::SleepFor(absl::Milliseconds(20));  // polling the batch, not waiting for a server
    }
    return absl::DeadlineExceededError("the batch did not end within two minutes");
  }

  // Starts the coordinator and one two-slot worker, runs a warm-up job (then both slots and
  // the gRPC threads exist, so the worker's footprint is its baseline) and limits the worker's
  // address space to 2 GiB above that baseline: far above the 256 MiB job budget the tests
  // pass, far below what a hog takes without a budget (its pages alone reach 32 GiB).
  void StartLimitedFleet() {
    absl::StatusOr<std::unique_ptr<Subprocess>> coordinator =
        Subprocess::Start({FLAMEFLEET_COORDINATOR, "--listen", "127.0.0.1:0", "--state-dir",
                           (root_ / "state").string(), "--lease-ms", "3000"});
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = std::move(*coordinator);
    absl::StatusOr<int> port = coordinator_->WaitForListeningPort(absl::Seconds(60));
    ASSERT_TRUE(port.ok()) << port.status();
    const std::string address = absl::StrCat("127.0.0.1:", *port);
    absl::StatusOr<std::unique_ptr<Subprocess>> worker = Subprocess::Start(
        {FLAMEFLEET_WORKER, "--coordinator", address, "--slots", "2", "--worker-id", "w0"});
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    client_ = std::make_unique<cli::BatchClient>(MakeChannel(address));

    WriteFile(root_ / "warmup" / "warm.masm", Innocent(1000));
    absl::StatusOr<v1::Batch> warm = RunBatch(root_ / "warmup", v1::BatchOptions{});
    ASSERT_TRUE(warm.ok()) << warm.status();
    ASSERT_EQ(warm->jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << warm->jobs(0).error();

    const uint64_t baseline = VirtualBytes(worker_->pid());
    ASSERT_GT(baseline, 0u);
    const uint64_t limit = baseline + (uint64_t{2} << 30);
    struct rlimit rl;
    rl.rlim_cur = limit;
    rl.rlim_max = limit;
    ASSERT_EQ(prlimit(worker_->pid(), RLIMIT_AS, &rl, nullptr), 0) << "prlimit failed";
  }

  // Checks that the same worker process is alive and runs a further job.
  void ExpectWorkerRunsAnotherJob() {
    EXPECT_FALSE(worker_->Poll().has_value()) << "the worker exited";
    WriteFile(root_ / "after" / "after.masm", Innocent(2000));
    absl::StatusOr<v1::Batch> after = RunBatch(root_ / "after", v1::BatchOptions{});
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(after->jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << after->jobs(0).error();
    EXPECT_EQ(after->jobs(0).attempts(), 1u);
    EXPECT_FALSE(worker_->Poll().has_value()) << "the worker exited";
  }

  void StopFleet() {
    if (worker_ != nullptr) worker_->Stop(absl::Seconds(30));
    if (coordinator_ != nullptr) coordinator_->Stop(absl::Seconds(30));
  }

  // Runs the programs of `dir` as one batch; returns the jobs by name.
  std::map<std::string, v1::JobStatus> Jobs(const fs::path& dir, const v1::BatchOptions& options) {
    absl::StatusOr<v1::Batch> batch = RunBatch(dir, options);
    EXPECT_TRUE(batch.ok()) << batch.status();
    std::map<std::string, v1::JobStatus> by_name;
    if (batch.ok()) {
      for (const v1::JobStatus& job : batch->jobs()) by_name[job.name()] = job;
    }
    return by_name;
  }

  std::unique_ptr<Subprocess> coordinator_;
  std::unique_ptr<Subprocess> worker_;
  std::unique_ptr<cli::BatchClient> client_;
  fs::path root_;
};

TEST_F(MemoryFaultTest, MemoryHogFailsAloneAndTheWorkerSurvives) {
  ASSERT_NO_FATAL_FAILURE(StartLimitedFleet());
  const fs::path jobs = root_ / "jobs";
  WriteFile(jobs / "hog.masm", testutil::kPageHogProgram);
  WriteFile(jobs / "innocent.masm", Innocent(300000));
  v1::BatchOptions options;
  const uint64_t budget = uint64_t{256} << 20;
  options.set_max_memory_bytes(budget);
  std::map<std::string, v1::JobStatus> by_name = Jobs(jobs, options);
  const v1::JobStatus& hog = by_name["hog.masm"];
  EXPECT_EQ(hog.state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(hog.error().find(absl::StrCat("memory budget of ", budget, " bytes exceeded")),
            std::string::npos)
      << hog.error();
  EXPECT_NE(hog.error().find("--max-memory"), std::string::npos) << hog.error();
  EXPECT_EQ(hog.attempts(), 1u) << "the worker was lost: " << hog.error();
  const v1::JobStatus& innocent = by_name["innocent.masm"];
  EXPECT_EQ(innocent.state(), v1::JOB_STATE_SUCCEEDED) << innocent.error();
  EXPECT_EQ(innocent.attempts(), 1u);
  ExpectWorkerRunsAnotherJob();
  StopFleet();
}

TEST_F(MemoryFaultTest, AllocationFailurePastTheProcessLimitFailsOnlyThatJob) {
  // A budget above the process limit: the allocation itself fails (std::bad_alloc), and the
  // slot turns it into a FAILED result instead of the process dying.
  ASSERT_NO_FATAL_FAILURE(StartLimitedFleet());
  const fs::path jobs = root_ / "jobs";
  WriteFile(jobs / "hog.masm", testutil::kPageHogProgram);
  v1::BatchOptions options;
  options.set_max_memory_bytes(uint64_t{64} << 30);
  std::map<std::string, v1::JobStatus> by_name = Jobs(jobs, options);
  const v1::JobStatus& hog = by_name["hog.masm"];
  EXPECT_EQ(hog.state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(hog.error().find("out of memory"), std::string::npos) << hog.error();
  EXPECT_EQ(hog.attempts(), 1u) << "the worker was lost: " << hog.error();
  ExpectWorkerRunsAnotherJob();
  StopFleet();
}

}  // namespace
}  // namespace flamefleet
