// The coordinator's web view under a 1,000-job batch (issue #17: every page of such a batch must
// load in under 300 ms). A BatchManager (in-memory store, in-process renderer) holds two ended
// batches of 1,000 jobs each, with the same labels; each job carries a real profile and summary
// (bench::CallHeavy run through runner::ProfileProgramWithStats). A WebServer on a loopback port
// serves them, and each benchmark fetches one page over HTTP with cpp-httplib's client, so the
// figure includes the server's work, the socket and the transfer (no browser rendering).
//
//   build/bench/web_benchmark                       # all pages
//   build/bench/web_benchmark --benchmark_filter=BatchPage
//
// Each page is fetched once before timing (a job SVG is rendered on its first fetch and then
// stored; a batch page's summary tables are cached once the batch has ended), so BM_* are the
// repeat views; BM_BatchPageFirstView is a batch page's very first view (fresh server, nothing
// cached), which also builds the summary tables from the 1,000 job summaries.
#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_programs.h"
#include "benchmark/benchmark.h"
#include "coordinator/batch_manager.h"
#include "coordinator/clock.h"
#include "coordinator/job_store.h"
#include "coordinator/render_client.h"
#include "coordinator/scheduler.h"
#include "coordinator/web/web_server.h"
#include "profile/profile_proto.h"
#include "runner/run_stats.h"
#include "runner/summary.h"
#include "vm/vm.h"

namespace flamefleet {
namespace {

constexpr int kJobs = 1000;

class Fixture {
 public:
  Fixture() {
    scheduler_ =
        std::make_unique<coordinator::JobScheduler>(&clock_, coordinator::SchedulerOptions{});
    manager_ = std::make_unique<coordinator::BatchManager>(
        &store_, scheduler_.get(), &render_, &clock_,
        coordinator::BatchManagerOptions{.sweep_interval = {}});
    (void)manager_->Recover();
    vm::AssemblerOptions options;
    options.dialect = vm::Dialect::kV0_16;
    program_ = *vm::Assembler(options).AssembleSource("b.masm", bench::CallHeavy(200));
    run_ = *runner::ProfileProgramWithStats(program_, inputs_, vm::ExecutionOptions{},
                                            runner::StatsOptions{});
    profile_bytes_ = profile::SerializeProfile(run_.profile);
    before_ = RunBatch();
    after_ = RunBatch();
    web_ = *coordinator::WebServer::Start(manager_.get(), {});
  }
  ~Fixture() {
    web_->Shutdown();
    manager_->Shutdown();
  }

  int port() const { return web_->port(); }
  coordinator::BatchManager* manager() const { return manager_.get(); }
  const std::string& before() const { return before_; }
  const std::string& after() const { return after_; }

 private:
  std::string RunBatch() {
    v1::SubmitBatchRequest request;
    for (int i = 0; i < kJobs; ++i) {
      v1::JobSpec* job = request.add_jobs();
      job->set_name(absl::StrCat("suite/dir", i % 10, "/job", i, ".masm"));
      job->set_source(absl::StrCat("begin push.", i, " drop end"));
    }
    (*request.mutable_labels())["suite"] = "nightly";
    request.mutable_options()->set_no_cache(true);
    std::string id = *manager_->SubmitBatch(request);
    while (true) {
      auto task = manager_->LeaseTask("bench", absl::ZeroDuration(), {});
      if (!task.ok() || !task->has_value()) break;
      const v1::Task& t = **task;
      runner::JobSummary summary = runner::MakeJobSummary(
          {.job = t.job().name(), .program = &program_, .inputs = &inputs_, .run = &run_});
      const std::string summary_bytes = runner::JobSummaryToProto(summary).SerializeAsString();
      v1::TaskHeader header;
      header.set_task_id(t.task_id());
      header.set_lease_id(t.lease_id());
      header.set_succeeded(true);
      header.set_cycles(run_.result.cycles);
      header.set_profile_bytes(profile_bytes_.size());
      header.set_summary_bytes(summary_bytes.size());
      (void)manager_->CompleteTask(header, profile_bytes_, summary_bytes);
    }
    return id;
  }

  coordinator::FakeClock clock_;
  coordinator::InMemoryJobStore store_;
  coordinator::InProcessRenderClient render_;
  std::unique_ptr<coordinator::JobScheduler> scheduler_;
  std::unique_ptr<coordinator::BatchManager> manager_;
  vm::Program program_;
  vm::ProgramInputs inputs_;
  runner::StatsRun run_;
  std::string profile_bytes_;
  std::string before_, after_;
  std::unique_ptr<coordinator::WebServer> web_;
};

Fixture& TheFixture() {
  static Fixture* fixture = new Fixture();  // built once for every benchmark, never destroyed
  return *fixture;
}

void Fetch(benchmark::State& state, const std::string& path) {
  Fixture& f = TheFixture();
  httplib::Client client("127.0.0.1", f.port());
  client.set_read_timeout(60, 0);
  auto warm = client.Get(path.c_str());
  if (!warm || warm->status != 200) {
    state.SkipWithError(absl::StrCat(path, ": ", warm ? warm->status : -1).c_str());
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    auto res = client.Get(path.c_str());
    if (!res || res->status != 200) {
      state.SkipWithError(path.c_str());
      break;
    }
    bytes += res->body.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["page_bytes"] =
      static_cast<double>(bytes) / static_cast<double>(std::max<int64_t>(1, state.iterations()));
}

void BM_BatchList(benchmark::State& state) { Fetch(state, "/"); }

// A batch page as its first viewer sees it: a web server with nothing cached yet, so the page
// builds the batch's summary tables (from every job's summary) before it answers.
void BM_BatchPageFirstView(benchmark::State& state) {
  Fixture& f = TheFixture();
  const std::string path = "/batches/" + f.after();
  for (auto _ : state) {
    state.PauseTiming();
    auto web = coordinator::WebServer::Start(f.manager(), {});
    httplib::Client client("127.0.0.1", (*web)->port());
    client.set_read_timeout(60, 0);
    state.ResumeTiming();
    auto res = client.Get(path.c_str());
    if (!res || res->status != 200) {
      state.SkipWithError(path.c_str());
      break;
    }
    state.PauseTiming();
    (*web)->Shutdown();
    state.ResumeTiming();
  }
}
void BM_BatchPage(benchmark::State& state) { Fetch(state, "/batches/" + TheFixture().after()); }
void BM_BatchPageSortedByDelta(benchmark::State& state) {
  Fetch(state, "/batches/" + TheFixture().after() + "?sort=delta&order=desc&page=2");
}
void BM_AggregateSvg(benchmark::State& state) {
  Fetch(state, "/batches/" + TheFixture().after() + "/aggregate?format=svg");
}
void BM_JobPage(benchmark::State& state) {
  Fetch(state, "/batches/" + TheFixture().after() + "/jobs/suite/dir7/job517.masm");
}
void BM_JobSvg(benchmark::State& state) {
  Fetch(state, "/batches/" + TheFixture().after() + "/jobs/suite/dir7/job517.masm?format=svg");
}
void BM_DiffPage(benchmark::State& state) {
  Fetch(state, "/diff?before=" + TheFixture().before() + "&after=" + TheFixture().after());
}
void BM_DiffSvg(benchmark::State& state) {
  Fetch(state,
        "/diff?before=" + TheFixture().before() + "&after=" + TheFixture().after() + "&format=svg");
}
void BM_SummaryJson(benchmark::State& state) {
  Fetch(state, "/batches/" + TheFixture().after() + "/summary.json");
}

BENCHMARK(BM_BatchList)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BatchPageFirstView)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
BENCHMARK(BM_BatchPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BatchPageSortedByDelta)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AggregateSvg)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_JobPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_JobSvg)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DiffPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DiffSvg)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SummaryJson)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace flamefleet

BENCHMARK_MAIN();
