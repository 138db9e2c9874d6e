#include "worker/worker.h"

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/grpc_status.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "profile/profile_proto.h"

namespace flamefleet::worker {

struct Worker::RunningTask {
  // Polled by the VM between slices; set together with `reason`.
  std::atomic<bool> cancel{false};
  std::atomic<int> reason{static_cast<int>(StopReason::kNone)};
  // Set once the program has run: the watcher then only keeps the lease alive while the
  // result is delivered (the wall deadline no longer applies).
  std::atomic<bool> executed{false};
  // The wall-clock deadline of the task (enforced by Watch; also given to the assembler).
  absl::Time deadline = absl::InfiniteFuture();
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;

  // Records the first reason to stop and tells the VM.
  void Stop(StopReason why) {
    int expected = static_cast<int>(StopReason::kNone);
    reason.compare_exchange_strong(expected, static_cast<int>(why));
    cancel.store(true, std::memory_order_relaxed);
  }
  StopReason stop_reason() const { return static_cast<StopReason>(reason.load()); }
};

struct Worker::Outcome {
  bool abandon = false;  // report nothing
  std::string why;       // for abandon: the reason (logged)
  bool succeeded = false;
  uint64_t cycles = 0;
  std::vector<uint64_t> stack;
  std::string error;    // the program's own failure
  std::string profile;  // serialized flamefleet.v1.Profile
  std::string summary;  // serialized flamefleet.v1.JobSummary ("" if none)
};

namespace {

std::chrono::system_clock::time_point Deadline(absl::Duration d) {
  return absl::ToChronoTime(absl::Now() + d);
}

// The job's memory budget: its batch option, or the worker's default.
uint64_t MemoryBudget(const v1::Task& task, const WorkerOptions& options) {
  return task.options().max_memory_bytes() != 0 ? task.options().max_memory_bytes()
                                                : options.default_max_memory_bytes;
}

bool ValidRelativePath(absl::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

// The summary's phases and markers: the batch's (the coordinator has validated them). Every
// job counts its trace shape (ignored for a dialect without trace-shape rules: v0.16).
absl::StatusOr<runner::StatsOptions> SummaryOptions(const v1::BatchOptions& options) {
  runner::StatsOptions stats;
  stats.trace_shape = true;
  for (int i = 0; i < options.phases_size(); ++i) {
    absl::StatusOr<runner::PhasePair> pair = runner::ParsePhasePair(options.phases(i));
    if (!pair.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("options.phases[", i, "]: ", pair.status().message()));
    }
    stats.phases.push_back(*std::move(pair));
  }
  stats.marker_prefixes.assign(options.markers().begin(), options.markers().end());
  return stats;
}

// Keeps the summary of `run` in `summary` and returns its profile, or the program's own error
// (the summary then describes the run up to it). A run that did not end by itself (cancelled,
// bad inputs) has no summary, and neither has one whose summary is over the coordinator's limit
// (runner::kMaxSummaryBytes; it would refuse the whole result).
absl::StatusOr<runner::ProfiledRun> KeepSummary(const std::string& job, const vm::Program& program,
                                                const vm::ProgramInputs& inputs,
                                                absl::StatusOr<runner::StatsRun> run,
                                                std::string& summary) {
  if (!run.ok()) return run.status();
  summary = runner::JobSummaryToProto(
                runner::MakeJobSummary(
                    {.job = job, .program = &program, .inputs = &inputs, .run = &*run}))
                .SerializeAsString();
  if (summary.size() > runner::kMaxSummaryBytes) {
    LOG(WARNING) << job << ": summary of " << summary.size() << " bytes is over the limit of "
                 << runner::kMaxSummaryBytes << " bytes; the job is reported without it";
    summary.clear();
  }
  if (!run->status.ok()) return run->status;
  return runner::ProfiledRun{std::move(run->result), std::move(run->profile)};
}

}  // namespace

absl::StatusOr<vm::AssemblerOptions> LibraryAssemblerOptions(const v1::LibrarySet& libraries) {
  vm::AssemblerOptions options;
  // A worker assembles only what the task carries: a module missing from the library set is
  // an assembly error naming the module, never a read of the worker's own files.
  options.read_disk = false;
  for (const v1::Library& library : libraries.libraries()) {
    const std::string& ns = library.namespace_();
    // "miden::core" is fine: the namespace names a virtual directory, so only '/' could alias
    // another library's files.
    if (ns.empty() || absl::StrContains(ns, "/")) {
      return absl::InvalidArgumentError(
          absl::StrCat("library set: invalid library namespace '", ns, "'"));
    }
    options.libraries.emplace_back(ns, ns);
    for (const std::string& callee : library.static_links()) {
      options.static_links.emplace_back(ns, callee);
    }
    for (const v1::LibraryFile& file : library.files()) {
      if (!ValidRelativePath(file.path())) {
        return absl::InvalidArgumentError(absl::StrCat("library set: library '", ns,
                                                       "': invalid file path '", file.path(),
                                                       "' (must be relative, without '..')"));
      }
      options.virtual_files[absl::StrCat(ns, "/", file.path())] = file.source();
    }
  }
  return options;
}

Worker::Worker(std::shared_ptr<v1::Coordinator::StubInterface> stub, WorkerOptions options)
    : stub_(std::move(stub)), options_(std::move(options)) {
  CHECK(stub_ != nullptr);
  CHECK_GE(options_.slots, 1);
}

Worker::~Worker() { Stop(absl::ZeroDuration()); }

void Worker::Start() {
  CHECK(!started_) << "Worker::Start called twice";
  started_ = true;
  slots_.reserve(static_cast<size_t>(options_.slots));
  for (int i = 0; i < options_.slots; ++i) slots_.emplace_back([this] { SlotLoop(); });
}

void Worker::Stop(absl::Duration grace) {
  if (!started_ || stopped_) return;
  stopped_ = true;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (grpc::ClientContext* poll : polls_) poll->TryCancel();
    auto idle = [](absl::flat_hash_set<RunningTask*>* running) { return running->empty(); };
    mu_.AwaitWithTimeout(absl::Condition(+idle, &running_), grace);
    abandon_all_ = true;
    for (RunningTask* running : running_) running->Stop(StopReason::kShutdown);
  }
  for (std::thread& slot : slots_) slot.join();
  slots_.clear();
}

WorkerStats Worker::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Worker::Count(uint64_t WorkerStats::*counter) {
  absl::MutexLock lock(&mu_);
  ++(stats_.*counter);
}

bool Worker::WaitOrStop(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&stopping_), d);
}

std::vector<std::string> Worker::CachedDigests() {
  absl::MutexLock lock(&cache_mu_);
  std::vector<std::string> digests;
  digests.reserve(cache_.size());
  for (const CachedLibrary& entry : cache_) digests.push_back(entry.digest);
  return digests;
}

void Worker::SlotLoop() {
  const auto wait_ms = static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.lease_wait));
  while (true) {
    v1::LeaseTaskRequest request;
    request.set_worker_id(options_.worker_id);
    request.set_wait_ms(wait_ms);
    for (std::string& digest : CachedDigests()) {
      request.add_cached_library_digests(std::move(digest));
    }
    grpc::ClientContext context;
    context.set_deadline(Deadline(options_.lease_wait + options_.rpc_timeout));
    // Wait for the coordinator to be reachable instead of failing fast (it may
    // be starting).
    context.set_wait_for_ready(true);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      polls_.insert(&context);
    }
    v1::LeaseTaskResponse response;
    const grpc::Status status = stub_->LeaseTask(&context, request, &response);
    {
      absl::MutexLock lock(&mu_);
      polls_.erase(&context);
    }
    if (!status.ok()) {
      if (WaitOrStop(absl::ZeroDuration())) return;
      LOG(WARNING) << "LeaseTask failed: " << FromGrpcStatus(status);
      if (WaitOrStop(options_.retry_backoff)) return;
      continue;
    }
    if (!response.has_task()) continue;
    Count(&WorkerStats::tasks_leased);
    RunTask(response.task());
  }
}

void Worker::RunTask(const v1::Task& task) {
  const absl::Time start = absl::Now();
  RunningTask running;
  running.deadline =
      start + (task.options().deadline_ms() != 0 ? absl::Milliseconds(task.options().deadline_ms())
                                                 : options_.default_deadline);
  {
    absl::MutexLock lock(&mu_);
    running_.insert(&running);
    if (abandon_all_) running.Stop(StopReason::kShutdown);
  }
  std::thread watcher([&] { Watch(task, running); });
  Outcome outcome;
  // Our code throws nothing, but the standard library reports a failed allocation by throwing
  // std::bad_alloc (the VM's memory budget normally stops a job long before that). This slot
  // boundary is the one place where it can be contained to the job that caused it: catching it
  // here fails that job instead of terminating the process and the jobs of the other slots.
  try {
    outcome = Execute(task, running);
  } catch (const std::bad_alloc&) {
    outcome = Outcome{};
    outcome.succeeded = false;
    outcome.error = absl::StrCat(task.job().name(),
                                 ": out of memory (an allocation failed in the worker; lower "
                                 "--max-memory or give the worker more memory)");
  }
  running.executed.store(true);
  if (!outcome.abandon && running.stop_reason() == StopReason::kLeaseLost) {
    outcome.abandon = true;
    outcome.why = "lease lost";
  }
  // The watcher keeps renewing the lease while the result is delivered (retries included).
  absl::Status status = absl::OkStatus();
  if (!outcome.abandon) {
    status = Complete(task, outcome);
    if (!status.ok()) {
      outcome.abandon = true;
      outcome.why = absl::StrCat("result not delivered: ", status.ToString());
    }
  }
  {
    absl::MutexLock lock(&running.mu);
    running.done = true;
  }
  watcher.join();
  if (outcome.abandon) {
    Count(&WorkerStats::tasks_abandoned);
    LOG(WARNING) << "task " << task.task_id() << " attempt " << task.attempt()
                 << " abandoned: " << outcome.why;
  } else {
    Count(outcome.succeeded ? &WorkerStats::tasks_succeeded : &WorkerStats::tasks_failed);
    LOG(INFO) << "task " << task.task_id() << " (" << task.job().name() << ") "
              << (outcome.succeeded ? "succeeded" : "failed") << " cycles=" << outcome.cycles
              << " latency_ms=" << absl::ToInt64Milliseconds(absl::Now() - start);
  }
  absl::MutexLock lock(&mu_);
  running_.erase(&running);
}

absl::StatusOr<std::shared_ptr<const vm::Assembler>> Worker::AssemblerFor(const v1::Task& task,
                                                                          vm::Dialect dialect) {
  std::string digest = task.library_digest();
  if (digest.empty()) digest = task.libraries().digest();
  if (digest.empty()) {
    // With or without libraries: the options never read the disk.
    FLAMEFLEET_ASSIGN_OR_RETURN(vm::AssemblerOptions options,
                                LibraryAssemblerOptions(task.libraries()));
    options.dialect = dialect;
    return std::make_shared<const vm::Assembler>(std::move(options));
  }
  {
    absl::MutexLock lock(&cache_mu_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if (it->digest == digest && it->dialect == dialect) {
        cache_.splice(cache_.begin(), cache_, it);
        return cache_.front().assembler;
      }
    }
  }
  if (!task.has_libraries()) {
    return absl::NotFoundError(
        absl::StrCat("library set ", digest, " is neither cached nor sent with the task"));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::AssemblerOptions options,
                              LibraryAssemblerOptions(task.libraries()));
  options.dialect = dialect;
  auto assembler = std::make_shared<const vm::Assembler>(std::move(options));
  absl::MutexLock lock(&cache_mu_);
  cache_.push_front(CachedLibrary{digest, dialect, assembler});
  while (cache_.size() > std::max<size_t>(options_.max_cached_library_sets, 1)) cache_.pop_back();
  return assembler;
}

Worker::Outcome Worker::Execute(const v1::Task& task, RunningTask& running) {
  Outcome out;
  auto fail = [&out](absl::string_view error) {
    out.succeeded = false;
    out.error = std::string(error);
    return out;
  };
  const v1::JobSpec& job = task.job();
  const runner::StackMode mode =
      task.options().flat() ? runner::StackMode::kFlat : runner::StackMode::kNested;
  const uint64_t max_cycles =
      task.options().max_cycles() != 0 ? task.options().max_cycles() : options_.default_max_cycles;

  // The coordinator names every job's dialect; a job from one that predates dialects names none.
  absl::StatusOr<vm::Dialect> dialect =
      job.dialect().empty() ? vm::kDefaultDialect : vm::ParseDialect(job.dialect());
  if (!dialect.ok()) {
    return fail(absl::StrCat(job.name(), ": dialect: ", dialect.status().message()));
  }
  absl::StatusOr<runner::ProfiledRun> run;
  if (!job.snapshot().empty()) {
    // A replay: everything comes from the snapshot; the batch's libraries are not used.
    absl::StatusOr<v1::ReplaySnapshot> snapshot = runner::DecodeSnapshot(job.snapshot());
    if (!snapshot.ok()) {
      return fail(absl::StrCat(job.name(), ": ", snapshot.status().message()));
    }
    absl::StatusOr<vm::Dialect> recorded = runner::SnapshotDialect(*snapshot);
    if (!recorded.ok()) return fail(absl::StrCat(job.name(), ": ", recorded.status().message()));
    if (!job.dialect().empty() && *recorded != *dialect) {
      return fail(absl::StrCat(job.name(), ": the job names dialect ", job.dialect(),
                               " but the snapshot was recorded under ",
                               vm::DialectName(*recorded)));
    }
    // The recorded budget, never above this job's.
    const uint64_t budget =
        snapshot->options().has_max_memory_bytes()
            ? std::min(MemoryBudget(task, options_), snapshot->options().max_memory_bytes())
            : MemoryBudget(task, options_);
    const uint64_t cap = std::min(max_cycles, snapshot->options().max_cycles());
    if (mode == runner::StackMode::kFlat) {
      run = runner::ProfileReplay(*snapshot, cap, mode, &running.cancel, budget);
    } else {
      // As ProfileReplay, with the job's summary and trace shape. No markers: the replay host
      // must see every recorded event, so a snapshot job's summary has no phases.
      absl::StatusOr<runner::ReplayPlan> plan = runner::PrepareReplay(*snapshot, cap, budget);
      if (!plan.ok()) {
        run = plan.status();
      } else {
        runner::ReplayHost host(&*snapshot);
        runner::StatsOptions stats;
        stats.trace_shape = true;
        absl::StatusOr<runner::StatsRun> replayed = runner::ProfileProgramWithStats(
            plan->program, plan->inputs, plan->options, stats, &running.cancel, &host);
        absl::Status diverged = absl::OkStatus();
        if (replayed.ok() && replayed->status.ok()) {
          diverged = host.CheckFinished(replayed->result.cycles);
        }
        run = diverged.ok() ? KeepSummary(job.name(), plan->program, plan->inputs,
                                          std::move(replayed), out.summary)
                            : absl::StatusOr<runner::ProfiledRun>(diverged);
      }
    }
  } else {
    run = ProfileSource(task, running, *dialect, max_cycles, mode, out);
    if (out.abandon || !out.error.empty()) return out;
  }
  return Finish(task, running, std::move(run), out);
}

absl::StatusOr<runner::ProfiledRun> Worker::ProfileSource(const v1::Task& task,
                                                          RunningTask& running, vm::Dialect dialect,
                                                          uint64_t max_cycles,
                                                          runner::StackMode mode, Outcome& out) {
  const v1::JobSpec& job = task.job();
  auto fail = [&out](absl::string_view error) -> absl::StatusOr<runner::ProfiledRun> {
    out.succeeded = false;
    out.error = std::string(error);
    return absl::CancelledError(error);
  };
  vm::ProgramInputs inputs;
  if (job.inputs_format() == v1::INPUTS_FORMAT_TOML) {
    absl::StatusOr<vm::ProgramInputs> parsed =
        vm::ParseTomlInputs(job.inputs(), absl::StrCat(job.name(), ".toml"));
    if (!parsed.ok()) return fail(parsed.status().message());
    inputs = *std::move(parsed);
  } else if (job.inputs_format() == v1::INPUTS_FORMAT_JSON || !job.inputs().empty()) {
    absl::StatusOr<vm::ProgramInputs> parsed =
        vm::ParseJsonInputs(job.inputs(), absl::StrCat(job.name(), ".inputs"),
                            vm::GetDialectSpec(dialect).json_stack_order);
    if (!parsed.ok()) return fail(parsed.status().message());
    inputs = *std::move(parsed);
  }

  absl::StatusOr<std::shared_ptr<const vm::Assembler>> assembler = AssemblerFor(task, dialect);
  if (!assembler.ok()) {
    if (absl::IsNotFound(assembler.status())) {
      out.abandon = true;
      out.why = std::string(assembler.status().message());
      return absl::CancelledError(out.why);
    }
    return fail(assembler.status().message());
  }
  vm::AssembleLimits limits;
  if (task.options().max_program_ops() != 0) {
    limits.max_program_ops = task.options().max_program_ops();
  }
  limits.deadline = running.deadline;
  std::vector<vm::SourceText> kernel;
  if (job.has_kernel()) {
    kernel.push_back({job.kernel().path(), job.kernel().source()});
    for (const v1::LibraryFile& file : job.kernel_modules()) {
      kernel.push_back({file.path(), file.source()});
    }
  }
  // The program's own static links (its project package's) make a per-job copy of the options.
  std::shared_ptr<const vm::Assembler> job_assembler = *assembler;
  if (job.static_libraries_size() > 0) {
    vm::AssemblerOptions options = (*assembler)->options();
    for (const std::string& ns : job.static_libraries()) options.static_links.emplace_back("", ns);
    job_assembler = std::make_shared<const vm::Assembler>(std::move(options));
  }
  absl::StatusOr<vm::Program> program =
      job.has_kernel()
          ? job_assembler->AssembleSourceWithKernel(job.name(), job.source(), kernel, limits)
          : job_assembler->AssembleSource(job.name(), job.source(), limits);
  if (!program.ok()) return fail(program.status().message());

  vm::ExecutionOptions execution;
  execution.max_cycles = max_cycles;
  execution.max_memory_bytes = MemoryBudget(task, options_);
  // Flat stacks have no calls or inclusive cycles: such a batch has no summaries.
  if (mode == runner::StackMode::kFlat) {
    return runner::ProfileProgram(*program, inputs, execution, mode, &running.cancel);
  }
  absl::StatusOr<runner::StatsOptions> stats = SummaryOptions(task.options());
  if (!stats.ok()) return fail(absl::StrCat(job.name(), ": ", stats.status().message()));
  return KeepSummary(
      job.name(), *program, inputs,
      runner::ProfileProgramWithStats(*program, inputs, execution, *stats, &running.cancel),
      out.summary);
}

Worker::Outcome Worker::Finish(const v1::Task& task, RunningTask& running,
                               absl::StatusOr<runner::ProfiledRun> run, Outcome out) {
  auto fail = [&out](absl::string_view error) {
    out.succeeded = false;
    out.error = std::string(error);
    return out;
  };
  const v1::JobSpec& job = task.job();
  if (!run.ok()) {
    switch (running.stop_reason()) {
      case StopReason::kDeadline:
        return fail(absl::StrCat(job.name(), ": wall-clock deadline of ",
                                 task.options().deadline_ms() != 0
                                     ? absl::StrCat(task.options().deadline_ms(), " ms")
                                     : absl::FormatDuration(options_.default_deadline),
                                 " exceeded (", run.status().message(), ")"));
      case StopReason::kLeaseLost:
        out.abandon = true;
        out.why = "lease lost";
        return out;
      case StopReason::kShutdown:
        out.abandon = true;
        out.why = "worker shutting down";
        return out;
      case StopReason::kNone:
        break;
    }
    return fail(run.status().message());
  }
  out.succeeded = true;
  out.cycles = run->result.cycles;
  out.stack.reserve(run->result.stack.size());
  for (const vm::Felt& felt : run->result.stack) out.stack.push_back(felt.value());
  out.profile = profile::SerializeProfile(run->profile);
  return out;
}

void Worker::Watch(const v1::Task& task, RunningTask& running) {
  const absl::Time deadline = running.deadline;
  auto interval_for = [](uint32_t lease_ms) {
    if (lease_ms == 0) return absl::Seconds(5);
    return std::max(absl::Milliseconds(lease_ms) / 3, absl::Milliseconds(5));
  };
  absl::Duration interval = interval_for(task.lease_ms());
  absl::Time next_renewal = absl::Now() + interval;
  while (true) {
    {
      absl::MutexLock lock(&running.mu);
      const absl::Time wake =
          running.executed.load() ? next_renewal : std::min(deadline, next_renewal);
      if (running.mu.AwaitWithDeadline(absl::Condition(&running.done), wake)) {
        return;
      }
    }
    if (!running.executed.load() && absl::Now() >= deadline) {
      running.Stop(StopReason::kDeadline);
      return;
    }
    v1::RenewLeaseRequest request;
    request.set_task_id(task.task_id());
    request.set_lease_id(task.lease_id());
    v1::RenewLeaseResponse response;
    grpc::ClientContext context;
    context.set_deadline(Deadline(std::min(options_.rpc_timeout, interval * 3)));
    const grpc::Status status = stub_->RenewLease(&context, request, &response);
    if (status.ok() && response.ok()) {
      Count(&WorkerStats::renewals);
      if (response.lease_ms() != 0) interval = interval_for(response.lease_ms());
    } else if (status.ok() || status.error_code() == grpc::StatusCode::NOT_FOUND ||
               status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      LOG(WARNING) << "task " << task.task_id() << ": lease lost"
                   << (status.ok() ? ""
                                   : absl::StrCat(" (", FromGrpcStatus(status).ToString(), ")"));
      running.Stop(StopReason::kLeaseLost);
      return;
    } else {
      // Transient (coordinator restarting, network): keep running and try
      // again; the lease may still be valid, and the coordinator decides when
      // the result arrives.
      LOG(WARNING) << "task " << task.task_id()
                   << ": RenewLease failed: " << FromGrpcStatus(status);
    }
    next_renewal = absl::Now() + interval;
  }
}

absl::Status Worker::Complete(const v1::Task& task, const Outcome& outcome) {
  constexpr int kAttempts = 3;
  // RESOURCE_EXHAUSTED answers retried with exponential backoff (from retry_backoff, at most
  // 30 s apart; about 3 minutes in all with the defaults).
  constexpr int kBusyRetries = 8;
  int busy_retries = 0;
  absl::Duration backoff = std::max(options_.retry_backoff, absl::Milliseconds(100));
  const size_t chunk_bytes = std::max<size_t>(options_.chunk_bytes, 1);
  absl::Status last = absl::OkStatus();
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(options_.rpc_timeout));
    context.set_wait_for_ready(true);
    v1::CompleteTaskResponse response;
    std::unique_ptr<grpc::ClientWriterInterface<v1::CompleteTaskChunk>> writer =
        stub_->CompleteTask(&context, &response);
    v1::CompleteTaskChunk chunk;
    v1::TaskHeader* header = chunk.mutable_header();
    header->set_task_id(task.task_id());
    header->set_lease_id(task.lease_id());
    header->set_succeeded(outcome.succeeded);
    header->set_cycles(outcome.cycles);
    for (uint64_t value : outcome.stack) header->add_stack(value);
    header->set_error(outcome.error);
    header->set_profile_bytes(outcome.profile.size());
    header->set_summary_bytes(outcome.summary.size());
    bool ok = writer->Write(chunk);
    for (size_t offset = 0; ok && offset < outcome.profile.size(); offset += chunk_bytes) {
      chunk.set_profile_data(outcome.profile.data() + offset,
                             std::min(chunk_bytes, outcome.profile.size() - offset));
      ok = writer->Write(chunk);
    }
    for (size_t offset = 0; ok && offset < outcome.summary.size(); offset += chunk_bytes) {
      chunk.set_summary_data(outcome.summary.data() + offset,
                             std::min(chunk_bytes, outcome.summary.size() - offset));
      ok = writer->Write(chunk);
    }
    if (ok) writer->WritesDone();
    last = FromGrpcStatus(writer->Finish());
    if (last.ok()) {
      if (!response.accepted()) {
        LOG(INFO) << "task " << task.task_id()
                  << ": result not accepted (duplicate or stale lease)";
      }
      return absl::OkStatus();
    }
    if (absl::IsResourceExhausted(last)) {
      // The coordinator is short of room for results (its in-flight budget): not a lost
      // task. Back off (the lease is renewed meanwhile) and send it again.
      if (busy_retries++ >= kBusyRetries) break;
      LOG(WARNING) << "task " << task.task_id() << ": CompleteTask: " << last << "; retrying in "
                   << absl::FormatDuration(backoff);
      if (WaitOrStop(backoff)) break;
      backoff = std::min(backoff * 2, absl::Seconds(30));
      --attempt;  // does not use up a transport retry
      continue;
    }
    if (!absl::IsUnavailable(last) && !absl::IsDeadlineExceeded(last)) break;
  }
  return last;
}

}  // namespace flamefleet::worker
