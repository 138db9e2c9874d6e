// End-to-end fleet benchmarks: the real renderer, coordinator and worker binaries on loopback
// (started once per benchmark as child processes), driven through the CLI's BatchClient.
//
//   BM_TinyJobs          1,000 tiny jobs, 2 workers: jobs/s from submit to the batch's end
//   BM_HeavyJobs/W       8 CPU-heavy jobs on W workers: compare the W=1 and W=2 times
//   BM_WireSize          the profile on the wire vs the same profile as folded text
//   BM_Makespan/fifo     a skewed batch (8 short jobs, then one 8x longer) on 2 workers in
//   BM_Makespan/longest  submission order vs longest first (by the cycles of a previous run)
//   BM_CachedBatch       the 8 heavy jobs again, answered from the result cache
//
//   ./build/bench/fleet_benchmark
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/folded_gen.h"
#include "benchmark/benchmark.h"
#include "cli/batch_client.h"
#include "common/channel.h"
#include "common/subprocess.h"
#include "profile/folded.h"
#include "profile/profile_proto.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;

class LocalFleet {
 public:
  LocalFleet(const fs::path& dir, int workers, const std::string& schedule = "longest-first") {
    fs::create_directories(dir / "state");
    auto renderer = Subprocess::Start(
        {*FindServiceBinary("flamefleet-renderer", "renderer"), "--listen", "127.0.0.1:0"});
    int rport = *(*renderer)->WaitForListeningPort(absl::Seconds(60));
    children_.push_back(std::move(*renderer));
    auto coordinator =
        Subprocess::Start({*FindServiceBinary("flamefleet-coordinator", "coordinator"), "--listen",
                           "127.0.0.1:0", "--state-dir", (dir / "state").string(), "--renderer",
                           absl::StrCat("127.0.0.1:", rport), "--schedule", schedule});
    int cport = *(*coordinator)->WaitForListeningPort(absl::Seconds(60));
    children_.push_back(std::move(*coordinator));
    address_ = absl::StrCat("127.0.0.1:", cport);
    for (int i = 0; i < workers; ++i) {
      auto w = Subprocess::Start({*FindServiceBinary("flamefleet-worker", "worker"),
                                  "--coordinator", address_, "--slots", "1"});
      children_.push_back(std::move(*w));
    }
  }
  ~LocalFleet() {
    for (auto& c : children_) c->Signal(SIGTERM);
    for (auto& c : children_) c->Stop(absl::Seconds(10));
  }
  const std::string& address() const { return address_; }

 private:
  std::vector<std::unique_ptr<Subprocess>> children_;
  std::string address_;
};

// A CPU-bound job of `iterations` loop turns (about 14 cycles each).
void AddJob(v1::SubmitBatchRequest* req, int i, int iterations) {
  v1::JobSpec* job = req->add_jobs();
  job->set_name(absl::StrCat("job", i, ".masm"));
  job->set_source(absl::StrCat(
      "proc.step dup.0 u32shl.3 u32xor u32wrapping_add.", i + 1, " end\nbegin push.1 push.",
      iterations,
      " dup.0 neq.0 while.true swap exec.step swap sub.1 dup.0 neq.0 end drop swap drop end\n"));
}

// `jobs` jobs; every submission runs them (no result cache) unless `cached`.
v1::SubmitBatchRequest Batch(int jobs, int iterations, bool cached = false) {
  v1::SubmitBatchRequest req;
  for (int i = 0; i < jobs; ++i) AddJob(&req, i, iterations);
  req.mutable_options()->set_no_cache(!cached);
  return req;
}

// Submits `req` and waits for it; false (with the benchmark skipped) on failure.
bool RunOnce(benchmark::State& state, cli::BatchClient& client, const v1::SubmitBatchRequest& req,
             uint64_t* cycles) {
  auto id = client.Submit(req);
  if (!id.ok()) {
    state.SkipWithError(std::string(id.status().message()).c_str());
    return false;
  }
  auto done = client.Watch(*id, [](const v1::Batch&) {});
  if (!done.ok() || done->state() != v1::BATCH_STATE_SUCCEEDED) {
    state.SkipWithError("batch did not succeed");
    return false;
  }
  *cycles += done->aggregate_cycles();
  return true;
}

void RunBatch(benchmark::State& state, int workers, int jobs, int iterations) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("fleet_bench_", getpid());
  fs::remove_all(dir);
  {
    LocalFleet fleet(dir, workers);
    cli::BatchClient client(MakeChannel(fleet.address()));
    v1::SubmitBatchRequest req = Batch(jobs, iterations);
    uint64_t cycles = 0;
    for (auto _ : state) {
      if (!RunOnce(state, client, req, &cycles)) break;
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * jobs);
    state.counters["vm_cycles"] = static_cast<double>(cycles);
  }
  fs::remove_all(dir);
}

void BM_TinyJobs(benchmark::State& state) { RunBatch(state, 2, 1000, 3); }
BENCHMARK(BM_TinyJobs)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_HeavyJobs(benchmark::State& state) {
  RunBatch(state, static_cast<int>(state.range(0)), 8, 1500000);
}
BENCHMARK(BM_HeavyJobs)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

// The makespan of a skewed batch: 8 short jobs submitted before one 8x longer job, on 2
// single-slot workers. In submission order the long job starts only when the short ones are
// done (about 4 + 8 = 12 short-job times); longest first starts it at once (about 8). The first,
// untimed run records the cycle counts that longest-first orders by.
void BM_Makespan(benchmark::State& state) {
  const std::string schedule = state.range(0) == 0 ? "fifo" : "longest-first";
  state.SetLabel(schedule);
  fs::path dir = fs::temp_directory_path() / absl::StrCat("fleet_bench_", getpid());
  fs::remove_all(dir);
  {
    LocalFleet fleet(dir, 2, schedule);
    cli::BatchClient client(MakeChannel(fleet.address()));
    v1::SubmitBatchRequest req;
    for (int i = 0; i < 8; ++i) AddJob(&req, i, 300000);
    AddJob(&req, 8, 2400000);
    req.mutable_options()->set_no_cache(true);
    uint64_t cycles = 0;
    if (RunOnce(state, client, req, &cycles)) {  // history for longest-first
      for (auto _ : state) {
        if (!RunOnce(state, client, req, &cycles)) break;
      }
    }
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_Makespan)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// The 8 heavy jobs of BM_HeavyJobs submitted again: every job is answered from the result
// cache (the first, untimed run fills it), so the batch ends without running anything.
void BM_CachedBatch(benchmark::State& state) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("fleet_bench_", getpid());
  fs::remove_all(dir);
  {
    LocalFleet fleet(dir, 2);
    cli::BatchClient client(MakeChannel(fleet.address()));
    v1::SubmitBatchRequest req = Batch(8, 1500000, /*cached=*/true);
    uint64_t cycles = 0;
    if (RunOnce(state, client, req, &cycles)) {
      for (auto _ : state) {
        if (!RunOnce(state, client, req, &cycles)) break;
      }
    }
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_CachedBatch)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_WireSize(benchmark::State& state) {
  bench::FoldedGenOptions options;
  options.lines = 20000;
  std::string folded;
  bench::GenerateFolded(
      options, [&](absl::string_view chunk) { folded.append(chunk.data(), chunk.size()); });
  profile::Profile p;
  profile::FoldedReader reader(&p);
  std::istringstream in(folded);
  (void)reader.ReadStream(in, "generated");
  std::string wire;
  for (auto _ : state) {
    wire = profile::SerializeProfile(p);
    benchmark::DoNotOptimize(wire.data());
  }
  state.counters["folded_bytes"] = static_cast<double>(folded.size());
  state.counters["wire_bytes"] = static_cast<double>(wire.size());
  state.counters["wire_over_folded"] = static_cast<double>(wire.size()) / folded.size();
}
BENCHMARK(BM_WireSize)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flamefleet

BENCHMARK_MAIN();
