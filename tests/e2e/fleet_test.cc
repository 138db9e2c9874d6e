// Multi-process end-to-end tests of the fleet on loopback: the real flamefleet-renderer,
// flamefleet-coordinator and flamefleet-worker binaries as child processes with OS-chosen ports
// (each service prints "LISTENING <port>" once serving), driven through the CLI's BatchClient.
// Faults are real: SIGKILL of a worker or of the coordinator in the middle of a batch.
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/batch_client.h"
#include "common/channel.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "tests/testing/test_files.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using testutil::ReadFile;
using testutil::WriteFile;

// Parses folded text into stack -> count.
std::map<std::string, uint64_t> ParseFolded(const std::string& text) {
  std::map<std::string, uint64_t> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    size_t sp = line.rfind(' ');
    uint64_t n = 0;
    EXPECT_TRUE(absl::SimpleAtoi(line.substr(sp + 1), &n)) << line;
    out[std::string(line.substr(0, sp))] += n;
  }
  return out;
}

// A program that loops `iterations` times through nested procedures (~30 cycles per iteration).
std::string Program(int id, int iterations) {
  return absl::StrCat(R"(
proc mix
  dup.0 u32shl.3 u32xor u32wrapping_add.)",
                      id + 7, R"(
end
proc step
  exec.mix
  dup.0 is_odd
  if.true add.1 else add.3 end
  u32and.65535
end
begin
  push.)",
                      id + 1, " push.", iterations, R"(
  dup.0 neq.0
  while.true
    swap exec.step swap sub.1 dup.0 neq.0
  end
  drop swap drop
end
)");
}

class Fleet {
 public:
  explicit Fleet(const fs::path& state_dir, int lease_ms = 1500) : state_dir_(state_dir) {
    lease_ms_ = lease_ms;
    StartRenderer();
    StartCoordinator();
  }

  // Starts the renderer on `port` (0: OS-chosen; else the port of a renderer that died).
  void StartRenderer(int port = 0) {
    renderer_ = Start({FLAMEFLEET_RENDERER, "--listen", absl::StrCat("127.0.0.1:", port)});
    absl::StatusOr<int> chosen = renderer_->WaitForListeningPort(absl::Seconds(60));
    ASSERT_TRUE(chosen.ok()) << chosen.status();
    renderer_port_ = *chosen;
  }

  // Starts the coordinator on `port` (0: OS-chosen; else the port of one that died).
  void StartCoordinator(int listen_port = 0) {
    coordinator_ =
        Start({FLAMEFLEET_COORDINATOR, "--listen", absl::StrCat("127.0.0.1:", listen_port),
               "--state-dir", state_dir_.string(), "--renderer",
               absl::StrCat("127.0.0.1:", renderer_port_), "--lease-ms", absl::StrCat(lease_ms_)});
    absl::StatusOr<int> port = coordinator_->WaitForListeningPort(absl::Seconds(60));
    ASSERT_TRUE(port.ok()) << port.status();
    address_ = absl::StrCat("127.0.0.1:", *port);
    coordinator_port_ = *port;
  }

  void KillCoordinator() {
    coordinator_->Signal(SIGKILL);
    coordinator_->Wait();
  }

  // Starts a worker against the current coordinator; returns its index.
  size_t AddWorker() {
    workers_.push_back(Start({FLAMEFLEET_WORKER, "--coordinator", address_, "--slots", "1",
                              "--worker-id", absl::StrCat("w", workers_.size())}));
    return workers_.size() - 1;
  }

  Subprocess& worker(size_t i) { return *workers_[i]; }
  Subprocess& renderer() { return *renderer_; }
  int renderer_port() const { return renderer_port_; }
  int coordinator_port() const { return coordinator_port_; }
  const std::string& address() const { return address_; }
  cli::BatchClient Client() { return cli::BatchClient(MakeChannel(address_)); }

 private:
  static std::unique_ptr<Subprocess> Start(const std::vector<std::string>& argv) {
    auto p = Subprocess::Start(argv);
    EXPECT_TRUE(p.ok()) << p.status();
    return std::move(*p);
  }

  fs::path state_dir_;
  int lease_ms_;
  std::unique_ptr<Subprocess> renderer_;
  int renderer_port_ = 0;
  std::unique_ptr<Subprocess> coordinator_;
  int coordinator_port_ = 0;
  std::vector<std::unique_ptr<Subprocess>> workers_;
  std::string address_;
};

class FleetTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) /
            absl::StrCat("fleet_", testing::UnitTest::GetInstance()->current_test_info()->name(),
                         "_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ / "state");
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes `n` programs under root/programs (two `main.masm` in different folders on purpose).
  fs::path WritePrograms(int n, int iterations) {
    fs::path dir = root_ / "programs";
    for (int i = 0; i < n; ++i) {
      fs::path p = dir / absl::StrCat("group", i % 5) / absl::StrCat("p", i) / "main.masm";
      WriteFile(p, Program(i, iterations));
    }
    return dir;
  }

  // Checks the fetched output: every succeeded job has SVG + folded, and the aggregate is the
  // exact sum of the job profiles.
  void CheckOutput(const v1::Batch& batch, const fs::path& out) {
    std::map<std::string, uint64_t> sum;
    uint64_t cycles = 0;
    for (const v1::JobStatus& job : batch.jobs()) {
      if (job.state() != v1::JOB_STATE_SUCCEEDED) continue;
      fs::path base = out / "jobs" / job.name();
      ASSERT_TRUE(fs::exists(base.string() + ".svg")) << base;
      std::map<std::string, uint64_t> f = ParseFolded(ReadFile(base.string() + ".folded"));
      uint64_t job_total = 0;
      for (const auto& [k, v] : f) {
        sum[k] += v;
        job_total += v;
      }
      EXPECT_EQ(job_total, job.cycles()) << job.name();
      cycles += job.cycles();
    }
    EXPECT_TRUE(fs::exists(out / "aggregate.svg"));
    EXPECT_EQ(ParseFolded(ReadFile(out / "aggregate.folded")), sum);
    EXPECT_EQ(batch.aggregate_cycles(), cycles);
  }

  fs::path root_;
};

TEST_F(FleetTest, FiftyProgramsOverTwoWorkersAggregateExactly) {
  Fleet fleet(root_ / "state");
  fleet.AddWorker();
  fleet.AddWorker();
  auto req = cli::BuildSubmitRequest({WritePrograms(50, 20).string()}, {}, {"suite=e2e"});
  ASSERT_TRUE(req.ok()) << req.status();
  auto client = fleet.Client();
  auto id = client.Submit(*req);
  ASSERT_TRUE(id.ok()) << id.status();
  auto final_batch = client.Watch(*id, [](const v1::Batch&) {});
  ASSERT_TRUE(final_batch.ok()) << final_batch.status();
  EXPECT_EQ(final_batch->state(), v1::BATCH_STATE_SUCCEEDED);
  auto batch = client.Get(*id);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->jobs_succeeded(), 50u);
  ASSERT_TRUE(client.FetchAll(*id, (root_ / "out").string()).ok());
  CheckOutput(*batch, root_ / "out");
}

TEST_F(FleetTest, KilledWorkerLosesNoJobAndCountsNoneTwice) {
  Fleet fleet(root_ / "state", /*lease_ms=*/1000);
  size_t victim = fleet.AddWorker();
  fleet.AddWorker();
  auto req = cli::BuildSubmitRequest({WritePrograms(12, 200000).string()}, {}, {});
  ASSERT_TRUE(req.ok()) << req.status();
  auto client = fleet.Client();
  auto id = client.Submit(*req);
  ASSERT_TRUE(id.ok()) << id.status();
  bool killed = false;
  auto final_batch = client.Watch(*id, [&](const v1::Batch& b) {
    if (!killed && b.jobs_succeeded() >= 1 && b.jobs_running() >= 1) {
      fleet.worker(victim).Signal(SIGKILL);
      killed = true;
    }
  });
  ASSERT_TRUE(final_batch.ok()) << final_batch.status();
  EXPECT_TRUE(killed);
  EXPECT_EQ(final_batch->state(), v1::BATCH_STATE_SUCCEEDED);
  auto batch = client.Get(*id);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->jobs_succeeded(), 12u);
  ASSERT_TRUE(client.FetchAll(*id, (root_ / "out").string()).ok());
  CheckOutput(*batch, root_ / "out");
}

TEST_F(FleetTest, RestartedCoordinatorKeepsResultsAndFinishesTheBatch) {
  Fleet fleet(root_ / "state", /*lease_ms=*/1000);
  fleet.AddWorker();
  auto req = cli::BuildSubmitRequest({WritePrograms(8, 150000).string()}, {}, {});
  ASSERT_TRUE(req.ok()) << req.status();
  std::string id;
  uint32_t done_before = 0;
  {
    auto client = fleet.Client();
    auto submitted = client.Submit(*req);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    id = *submitted;
    // Kill the coordinator as soon as some (not all) jobs are done.
    auto watched = client.Watch(
        id,
        [&](const v1::Batch& b) {
          if (done_before == 0 && b.jobs_succeeded() >= 2) {
            done_before = b.jobs_succeeded();
            fleet.KillCoordinator();
          }
        },
        cli::BatchClient::WatchRetry{});  // no reconnect
    EXPECT_FALSE(watched.ok());           // the stream broke
  }
  ASSERT_GE(done_before, 2u);
  fleet.StartCoordinator();
  fleet.AddWorker();  // the old worker keeps dialing the old port; start one on the new one
  auto client = fleet.Client();
  auto before = client.Get(id);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GE(before->jobs_succeeded(), done_before);
  auto final_batch = client.Watch(id, [](const v1::Batch&) {});
  ASSERT_TRUE(final_batch.ok()) << final_batch.status();
  EXPECT_EQ(final_batch->state(), v1::BATCH_STATE_SUCCEEDED);
  auto batch = client.Get(id);
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE(client.FetchAll(id, (root_ / "out").string()).ok());
  CheckOutput(*batch, root_ / "out");
}

// Polls `client` until batch `id` has ended or `timeout` passed; returns its last state.
v1::BatchState WaitForEnd(cli::BatchClient& client, const std::string& id, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  v1::BatchState state = v1::BATCH_STATE_UNSPECIFIED;
  while (absl::Now() < deadline) {
    absl::StatusOr<v1::Batch> batch = client.Get(id);
    if (batch.ok()) {
      state = batch->state();
      if (state != v1::BATCH_STATE_RUNNING) return state;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return state;
}

// Issue #12: `flamefleet watch` rides out a coordinator restart (kill -9, then the same
// --state-dir on the same port): it says it is reconnecting, resumes, and ends with the
// batch's final state.
TEST_F(FleetTest, Issue12WatchReconnectsAcrossACoordinatorRestart) {
  Fleet fleet(root_ / "state", /*lease_ms=*/1000);
  auto req = cli::BuildSubmitRequest({WritePrograms(3, 1000).string()}, {}, {});
  ASSERT_TRUE(req.ok()) << req.status();
  auto id = fleet.Client().Submit(*req);  // no worker yet: the batch stays RUNNING
  ASSERT_TRUE(id.ok()) << id.status();
  const fs::path err = root_ / "watch.err";
  auto watch = Subprocess::Start(
      {"/bin/sh", "-c",
       absl::StrCat("exec '", FLAMEFLEET_CLI, "' watch ", *id, " --coordinator ", fleet.address(),
                    " --reconnect-for 120 2>'", err.string(), "'")});
  ASSERT_TRUE(watch.ok()) << watch.status();
  // The watch has its stream once it printed the first progress line.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!absl::StrContains(ReadFile(err), "0/3") && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_TRUE(absl::StrContains(ReadFile(err), "0/3")) << ReadFile(err);
  const int port = fleet.coordinator_port();
  fleet.KillCoordinator();
  fleet.StartCoordinator(port);
  fleet.AddWorker();
  auto final_state = (*watch)->WaitForLine("", absl::Seconds(120));
  ASSERT_TRUE(final_state.ok()) << final_state.status() << "\n" << ReadFile(err);
  EXPECT_EQ(*final_state, "SUCCEEDED") << ReadFile(err);
  const int status = (*watch)->Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(err);
  EXPECT_TRUE(absl::StrContains(ReadFile(err), "reconnecting")) << ReadFile(err);
  EXPECT_TRUE(absl::StrContains(ReadFile(err), "3/3")) << ReadFile(err);
}

// Issue #12: with the renderer stopped, a fetch that needs a render fails naming the
// renderer; once it is back on its port the next fetch renders at once (the render client
// retries UNAVAILABLE through the channel's reconnect backoff).
TEST_F(FleetTest, Issue12FetchErrorNamesAStoppedRendererAndRecoversOnRestart) {
  Fleet fleet(root_ / "state");
  fleet.AddWorker();
  auto req = cli::BuildSubmitRequest({WritePrograms(3, 100).string()}, {}, {});
  ASSERT_TRUE(req.ok()) << req.status();
  auto client = fleet.Client();
  auto id = client.Submit(*req);
  ASSERT_TRUE(id.ok()) << id.status();
  auto batch = client.Watch(*id, [](const v1::Batch&) {});
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->state(), v1::BATCH_STATE_SUCCEEDED);
  ASSERT_EQ(batch->jobs_size(), 3);
  const int rport = fleet.renderer_port();
  fleet.renderer().Signal(SIGKILL);
  fleet.renderer().Wait();
  // Per-job SVGs are rendered on the first fetch.
  auto svg = client.Fetch(*id, batch->jobs(0).name(), v1::ARTIFACT_FORMAT_SVG);
  ASSERT_FALSE(svg.ok());
  EXPECT_TRUE(absl::IsUnavailable(svg.status())) << svg.status();
  EXPECT_TRUE(absl::StrContains(svg.status().message(),
                                absl::StrCat("renderer at 127.0.0.1:", rport, ": unavailable")))
      << svg.status();
  // The CLI shows the same message.
  const fs::path err = root_ / "fetch.err";
  const std::string cmd =
      absl::StrCat("'", FLAMEFLEET_CLI, "' fetch ", *id, " -o '", (root_ / "out").string(),
                   "' --coordinator ", fleet.address(), " 2>'", err.string(), "'");
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_TRUE(absl::StrContains(ReadFile(err), absl::StrCat("renderer at 127.0.0.1:", rport)))
      << ReadFile(err);
  fleet.StartRenderer(rport);
  for (int i = 1; i < 3; ++i) {
    auto again = client.Fetch(*id, batch->jobs(i).name(), v1::ARTIFACT_FORMAT_SVG);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(absl::StrContains(*again, "<svg")) << *again;
  }
}

// Issue #12: a renderer that hangs (SIGSTOP) does not hold up the end of a batch: the batch
// ends (its aggregate SVG render has a deadline and runs after the end), and once the renderer
// answers again a fetch renders the aggregate.
TEST_F(FleetTest, Issue12HungRendererDoesNotDelayTheEndOfABatch) {
  Fleet fleet(root_ / "state");
  fleet.AddWorker();
  auto client = fleet.Client();
  auto first = cli::BuildSubmitRequest({WritePrograms(2, 100).string()}, {}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  auto first_id = client.Submit(*first);
  ASSERT_TRUE(first_id.ok()) << first_id.status();
  ASSERT_EQ(WaitForEnd(client, *first_id, absl::Seconds(120)), v1::BATCH_STATE_SUCCEEDED);
  // The coordinator's renderer channel is connected; now the renderer stops answering.
  fleet.renderer().Signal(SIGSTOP);
  fs::remove_all(root_ / "programs");
  auto second = cli::BuildSubmitRequest({WritePrograms(2, 200).string()}, {}, {});
  ASSERT_TRUE(second.ok()) << second.status();
  auto second_id = client.Submit(*second);
  ASSERT_TRUE(second_id.ok()) << second_id.status();
  // Generous, but well under the 120 s Render deadline an aggregate render used to wait.
  const v1::BatchState state = WaitForEnd(client, *second_id, absl::Seconds(40));
  fleet.renderer().Signal(SIGCONT);
  EXPECT_EQ(state, v1::BATCH_STATE_SUCCEEDED);
  auto svg = client.Fetch(*second_id, "", v1::ARTIFACT_FORMAT_SVG);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_TRUE(absl::StrContains(*svg, "<svg")) << svg->substr(0, 200);
}

TEST_F(FleetTest, BrokenAndRunawayProgramsFailAndTheRestSucceed) {
  Fleet fleet(root_ / "state");
  fleet.AddWorker();
  fs::path dir = root_ / "programs";
  WriteFile(dir / "good.masm", Program(1, 10));
  WriteFile(dir / "broken.masm", "begin\n  push.1\n  frobnicate\nend\n");
  WriteFile(dir / "runaway.masm", "begin push.1 while.true push.1 end end\n");
  auto req = cli::BuildSubmitRequest({dir.string()}, {}, {});
  ASSERT_TRUE(req.ok()) << req.status();
  req->mutable_options()->set_max_cycles(100000);
  auto client = fleet.Client();
  auto id = client.Submit(*req);
  ASSERT_TRUE(id.ok()) << id.status();
  auto final_batch = client.Watch(*id, [](const v1::Batch&) {});
  ASSERT_TRUE(final_batch.ok()) << final_batch.status();
  EXPECT_EQ(final_batch->state(), v1::BATCH_STATE_FAILED);
  auto batch = client.Get(*id);
  ASSERT_TRUE(batch.ok());
  std::map<std::string, v1::JobStatus> jobs;
  for (const auto& j : batch->jobs()) jobs[j.name()] = j;
  EXPECT_EQ(jobs["good.masm"].state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(jobs["broken.masm"].state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(jobs["broken.masm"].error().find("3:3"), std::string::npos)
      << jobs["broken.masm"].error();
  EXPECT_EQ(jobs["runaway.masm"].state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(jobs["runaway.masm"].error().find("cycle"), std::string::npos)
      << jobs["runaway.masm"].error();
  EXPECT_EQ(jobs["broken.masm"].attempts(), 1u);  // a program's own failure is not retried
}

// Issue #12: the per-job limits given to `flamefleet submit` reach the worker: a runaway job
// stops at --deadline-ms (long before the 2^32-cycle default), a memory hog at --max-memory.
TEST_F(FleetTest, SubmitLimitFlagsReachTheWorker) {
  Fleet fleet(root_ / "state");
  fleet.AddWorker();
  auto submit = [&](const fs::path& program, const std::string& flags) {
    auto cli = Subprocess::Start(
        {"/bin/sh", "-c",
         absl::StrCat("exec '", FLAMEFLEET_CLI, "' submit '", program.string(), "' ", flags,
                      " --no-cache --coordinator ", fleet.address())});
    EXPECT_TRUE(cli.ok()) << cli.status();
    auto id = (*cli)->WaitForLine("", absl::Seconds(60));
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_EQ((*cli)->Wait(), 0);
    auto client = fleet.Client();
    auto final_batch = client.Watch(*id, [](const v1::Batch&) {});
    EXPECT_TRUE(final_batch.ok()) << final_batch.status();
    auto batch = client.Get(*id);
    EXPECT_TRUE(batch.ok() && batch->jobs_size() == 1);
    return batch->jobs(0);
  };
  const fs::path runaway = root_ / "runaway.masm";
  WriteFile(runaway, "begin push.1 while.true push.1 end end\n");
  v1::JobStatus job = submit(runaway, "--deadline-ms 300");
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(job.error(), "deadline of 300 ms")) << job.error();

  // One element on each of 16 fresh 4096-element pages (32 KiB each): about 640 KiB in all
  // with the stacks, over a 256 KiB budget and within a 4 MiB one.
  const fs::path hog = root_ / "hog.masm";
  WriteFile(hog, "begin push.0 repeat.16 push.4096 add push.1 dup.1 mem_store end drop end\n");
  job = submit(hog, "--max-memory 262144");
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(job.error(), "memory budget of 262144 bytes")) << job.error();
  job = submit(hog, "--max-memory 4194304");
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error();
}

TEST_F(FleetTest, BatchOfSnapshotsRunsWithoutSharedFiles) {
  // Record three programs (one using a library, in the classic dialect) with the CLI, profile
  // them live, then delete every program and library file: the workers only get the snapshots'
  // bytes, and each snapshot carries its dialect.
  fs::path src = root_ / "src";
  WriteFile(src / "lib" / "util.masm", "export.triple\n  dup.0 dup.0 add add\nend\n");
  WriteFile(src / "a.masm", Program(1, 30));
  WriteFile(src / "b.masm", Program(2, 40));
  WriteFile(src / "c.masm",
            "use.mylib::util\nbegin\n  push.5 exec.util::triple\n"
            "  emit.42 swap drop\nend\n");
  fs::path snaps = root_ / "snaps";
  fs::create_directories(snaps);
  std::vector<std::string> snapshot_paths;
  std::map<std::string, std::map<std::string, uint64_t>> live;
  for (const char* name : {"a", "b", "c"}) {
    const std::string program = (src / absl::StrCat(name, ".masm")).string();
    const std::string lib = absl::StrCat("mylib=", (src / "lib").string());
    const std::string snap = (snaps / absl::StrCat(name, ".snap")).string();
    const std::string folded = (root_ / absl::StrCat(name, ".folded")).string();
    const std::string flags =
        std::string(name) == "c" ? absl::StrCat(" --dialect v0.16 --lib ", lib) : "";
    ASSERT_EQ(std::system(absl::StrCat(FLAMEFLEET_CLI, " record ", program, flags, " -o ", snap,
                                       " 2>/dev/null")
                              .c_str()),
              0)
        << name;
    ASSERT_EQ(std::system(absl::StrCat(FLAMEFLEET_CLI, " profile ", program, flags, " -o ", folded,
                                       " 2>/dev/null")
                              .c_str()),
              0)
        << name;
    live[absl::StrCat(name, ".snap")] = ParseFolded(ReadFile(folded));
    snapshot_paths.push_back(snap);
  }
  fs::remove_all(src);
  // A batch may mix programs and snapshots.
  fs::path programs = root_ / "programs";
  WriteFile(programs / "plain.masm", Program(3, 10));

  auto req = cli::BuildSubmitRequest({programs.string()}, {}, {}, snapshot_paths);
  ASSERT_TRUE(req.ok()) << req.status();
  ASSERT_EQ(req->jobs_size(), 4);
  fs::remove_all(snaps);
  fs::remove_all(programs);

  Fleet fleet(root_ / "state");
  fleet.AddWorker();
  auto client = fleet.Client();
  auto id = client.Submit(*req);
  ASSERT_TRUE(id.ok()) << id.status();
  auto final_batch = client.Watch(*id, [](const v1::Batch&) {});
  ASSERT_TRUE(final_batch.ok()) << final_batch.status();
  auto batch = client.Get(*id);
  ASSERT_TRUE(batch.ok());
  for (const v1::JobStatus& job : batch->jobs()) {
    EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.name() << ": " << job.error();
  }
  EXPECT_EQ(final_batch->state(), v1::BATCH_STATE_SUCCEEDED);
  ASSERT_TRUE(client.FetchAll(*id, (root_ / "out").string()).ok());
  CheckOutput(*batch, root_ / "out");
  for (const auto& [name, folded] : live) {
    EXPECT_EQ(ParseFolded(ReadFile(root_ / "out" / "jobs" / (name + ".folded"))), folded) << name;
  }
}

TEST_F(FleetTest, CancelAndBadRequests) {
  Fleet fleet(root_ / "state");
  auto client = fleet.Client();
  // No worker: the batch stays queued until cancelled.
  auto req = cli::BuildSubmitRequest({WritePrograms(3, 10).string()}, {}, {});
  ASSERT_TRUE(req.ok());
  auto id = client.Submit(*req);
  ASSERT_TRUE(id.ok()) << id.status();
  auto cancelled = client.Cancel(*id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  auto watched = client.Watch(*id, [](const v1::Batch&) {});
  ASSERT_TRUE(watched.ok());
  EXPECT_EQ(watched->state(), v1::BATCH_STATE_CANCELLED);

  v1::SubmitBatchRequest empty;
  EXPECT_EQ(client.Submit(empty).status().code(), absl::StatusCode::kInvalidArgument);
  v1::SubmitBatchRequest unnamed = *req;
  unnamed.mutable_jobs(0)->set_name("");
  EXPECT_EQ(client.Submit(unnamed).status().code(), absl::StatusCode::kInvalidArgument);
  v1::SubmitBatchRequest huge = *req;
  huge.mutable_jobs(0)->set_source(std::string(2 << 20, ' '));
  EXPECT_EQ(client.Submit(huge).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(client.Get("no-such-batch").status().code(), absl::StatusCode::kNotFound);
}

// Returns the pids of the processes whose parent is `parent`.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    std::string stat = ReadFile(entry.path() / "stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
    int ppid = 0;
    if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &ppid) && ppid == parent) {
      out.push_back(pid);
    }
  }
  return out;
}

bool Alive(pid_t pid) {
  std::string stat = ReadFile(fs::path("/proc") / std::to_string(pid) / "stat");
  if (stat.empty()) return false;
  size_t close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

TEST_F(FleetTest, InterruptedRunLeavesNoChildProcess) {
  fs::path dir = root_ / "programs";
  WriteFile(dir / "slow.masm", Program(1, 20000000));
  auto run = Subprocess::Start(
      {FLAMEFLEET_CLI, "run", dir.string(), "-o", (root_ / "out").string(), "--workers", "2"});
  ASSERT_TRUE(run.ok()) << run.status();
  auto batch = (*run)->WaitForLine("BATCH ", absl::Seconds(120));
  ASSERT_TRUE(batch.ok()) << batch.status();
  std::vector<pid_t> children = ChildrenOf((*run)->pid());
  EXPECT_GE(children.size(), 4u);  // renderer, coordinator, 2 workers
  (*run)->Signal(SIGINT);
  int status = (*run)->Wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  for (pid_t child : children) EXPECT_FALSE(Alive(child)) << "child " << child << " outlived run";
}

}  // namespace
}  // namespace flamefleet
