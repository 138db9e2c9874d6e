// The gRPC worker: pulls tasks from the coordinator and runs them in the VM.
//
// A Worker runs `slots` threads. Each one long-polls Coordinator.LeaseTask, assembles the task's
// program under the job's dialect against the task's library set (held in memory, cached by
// digest and dialect), runs it with runner::ProfileProgramWithStats (the batch's phases and
// markers; runner::ProfileProgram for --flat batches, which have no summaries) under the task's
// cycle cap and wall deadline while a helper thread renews the lease, and streams the result
// back with Coordinator.CompleteTask (a TaskHeader, then the serialized flamefleet.v1.Profile
// and the job's serialized flamefleet.v1.JobSummary in chunks). A job whose program ran has a
// summary, also when it trapped; one that failed before (inputs, assembly) or was stopped has
// none. A snapshot job's summary has no phases (its replay must see every recorded event).
// A program's own failure (bad inputs, assembly error with file:line:col, trap, cycle cap, wall
// deadline) is reported as succeeded=false with the error text; it is final. If a renewal answers
// ok=false the task is abandoned: nothing is reported and the coordinator has already re-queued
// or cancelled it.
//
//   WorkerOptions options;
//   options.slots = 2;
//   Worker worker(v1::Coordinator::NewStub(MakeChannel("127.0.0.1:7000")), options);
//   worker.Start();
//   WaitForShutdownSignal();
//   worker.Stop(absl::Seconds(30));
//
// Thread-safety: Start and Stop are called from one thread (the owner); the counters may be read
// from any thread.
#ifndef FLAMEFLEET_WORKER_WORKER_H_
#define FLAMEFLEET_WORKER_WORKER_H_

#include <grpcpp/client_context.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"
#include "runner/runner.h"
#include "vm/vm.h"

namespace flamefleet::worker {

struct WorkerOptions {
  // Identifies this worker to the coordinator (logs, lease bookkeeping).
  std::string worker_id = "worker";
  // Tasks run at the same time (one thread each). Must be >= 1.
  int slots = 1;
  // Long-poll budget sent as LeaseTaskRequest.wait_ms.
  absl::Duration lease_wait = absl::Seconds(2);
  // Deadline of every RPC other than the long-poll (which gets lease_wait plus
  // this).
  absl::Duration rpc_timeout = absl::Seconds(10);
  // Pause after a failed LeaseTask before the next one (the channel also waits
  // for the connection, so this only bounds retries against a coordinator that
  // answers with errors).
  absl::Duration retry_backoff = absl::Milliseconds(250);
  // Size of each profile_data chunk of CompleteTask.
  size_t chunk_bytes = size_t{1} << 20;
  // Library sets kept in memory (least recently used evicted first).
  size_t max_cached_library_sets = 16;
  // Defaults when the task's options leave them 0.
  uint64_t default_max_cycles = uint64_t{1} << 32;
  absl::Duration default_deadline = absl::Minutes(10);
  // Memory budget of a job whose options leave max_memory_bytes 0 (vm::ExecutionOptions).
  uint64_t default_max_memory_bytes = vm::kDefaultMaxMemoryBytes;
};

// What a worker has done so far (monotonic counters).
struct WorkerStats {
  uint64_t tasks_leased = 0;
  uint64_t tasks_succeeded = 0;  // reported with succeeded=true
  uint64_t tasks_failed = 0;     // reported with succeeded=false (the program's own failure)
  uint64_t tasks_abandoned = 0;  // lease lost, shutdown or result undeliverable
  uint64_t renewals = 0;         // RenewLease calls answered ok=true
};

class Worker {
 public:
  // `stub` is shared with the caller (tests keep a second handle); it must be
  // non-null.
  Worker(std::shared_ptr<v1::Coordinator::StubInterface> stub, WorkerOptions options);
  // Stops (with no grace) if still running.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts the slot threads. Call once.
  void Start();

  // Stops leasing at once (pending long-polls are cancelled), lets running
  // tasks finish and report for up to `grace`, then abandons the rest (not
  // reported; their leases expire) and joins every thread. Idempotent.
  void Stop(absl::Duration grace);

  // Returns a snapshot of the counters. Thread-safe.
  WorkerStats stats() const;

 private:
  // Why a running task was stopped before it finished.
  enum class StopReason : int { kNone = 0, kDeadline, kLeaseLost, kShutdown };

  struct RunningTask;
  struct Outcome;

  void SlotLoop();
  void RunTask(const v1::Task& task);
  // Runs the program and returns what to report (or that the task must be
  // abandoned).
  Outcome Execute(const v1::Task& task, RunningTask& running);
  // Assembles (under `dialect`) and profiles the task's program source. On an input or
  // assembly error (final) or a missing library set (abandon) it fills `out` and returns a
  // non-OK status.
  absl::StatusOr<runner::ProfiledRun> ProfileSource(const v1::Task& task, RunningTask& running,
                                                    vm::Dialect dialect, uint64_t max_cycles,
                                                    runner::StackMode mode, Outcome& out);
  // Turns a run (of a program or a snapshot) into the task's outcome.
  Outcome Finish(const v1::Task& task, RunningTask& running,
                 absl::StatusOr<runner::ProfiledRun> run, Outcome out);
  // Renews the lease of `running` and enforces its deadline until it is done.
  void Watch(const v1::Task& task, RunningTask& running);
  absl::Status Complete(const v1::Task& task, const Outcome& outcome);
  // Returns the assembler for the task's library set under `dialect` (cached by both).
  absl::StatusOr<std::shared_ptr<const vm::Assembler>> AssemblerFor(const v1::Task& task,
                                                                    vm::Dialect dialect);
  std::vector<std::string> CachedDigests();
  void Count(uint64_t WorkerStats::*counter);
  // Waits up to `d` or until Stop begins; returns true if stopping.
  bool WaitOrStop(absl::Duration d);

  const std::shared_ptr<v1::Coordinator::StubInterface> stub_;
  const WorkerOptions options_;
  std::vector<std::thread> slots_;
  bool started_ = false;
  bool stopped_ = false;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set by Stop once the grace period is over: tasks still running are
  // abandoned.
  bool abandon_all_ ABSL_GUARDED_BY(mu_) = false;
  // Long-polls in flight, cancelled by Stop.
  absl::flat_hash_set<grpc::ClientContext*> polls_ ABSL_GUARDED_BY(mu_);
  // Tasks running now, abandoned by Stop after the grace period.
  absl::flat_hash_set<RunningTask*> running_ ABSL_GUARDED_BY(mu_);
  WorkerStats stats_ ABSL_GUARDED_BY(mu_);

  absl::Mutex cache_mu_;
  // Library sets by digest, most recently used at the front.
  struct CachedLibrary {
    std::string digest;
    vm::Dialect dialect;
    std::shared_ptr<const vm::Assembler> assembler;
  };
  std::list<CachedLibrary> cache_ ABSL_GUARDED_BY(cache_mu_);
};

// Returns the AssemblerOptions that serve `libraries` from memory: library (NS,
// "NS") and one virtual file "NS/<path>" per file, so locations read
// "std/math/u64.masm:3:5". Never reads the disk (read_disk = false): a module
// the set lacks is an assembly error naming it. Returns InvalidArgument for an
// empty namespace or a path that is absolute or contains "..".
absl::StatusOr<vm::AssemblerOptions> LibraryAssemblerOptions(const v1::LibrarySet& libraries);

}  // namespace flamefleet::worker

#endif  // FLAMEFLEET_WORKER_WORKER_H_
