// Persistent state of the coordinator: batches, their jobs, the attempts made
// at each job, and artifacts (serialized profiles, SVGs, folded text) stored by
// content digest.
//
// `JobStore` is the interface; `SqliteJobStore` keeps everything under a state
// directory and survives a SIGKILL; `InMemoryJobStore` is for tests. Layout of
// a state directory:
//
//   DIR/LOCK                   flock'ed by the one process that has the store
//                              open; holds its pid
//   DIR/state.db               SQLite (WAL): tables batches, batch_labels,
//                              jobs, attempts, artifacts (the index)
//   DIR/artifacts/<sha256>     artifact bytes, named by the hex SHA-256 of
//                              their contents; written to a temp file,
//                              fsync'd, renamed, directory fsync'd
//
// Opening a SqliteJobStore after a crash puts every RUNNING job back to QUEUED
// (its attempt stays counted, the attempt row is closed with outcome
// "coordinator restarted"); finished results are kept.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(auto store, SqliteJobStore::Open(dir));
//   FLAMEFLEET_RETURN_IF_ERROR(store->CreateBatch(batch));
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string digest, store->PutArtifact(svg));
//   FLAMEFLEET_RETURN_IF_ERROR(
//       store->IndexArtifact(batch.id, "", v1::ARTIFACT_FORMAT_SVG, digest));
//
// Thread-safety: every method of both implementations may be called from any
// thread; each call is atomic (one SQLite transaction).
#ifndef FLAMEFLEET_COORDINATOR_JOB_STORE_H_
#define FLAMEFLEET_COORDINATOR_JOB_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "flamefleet/v1/coordinator.pb.h"

struct sqlite3;

namespace flamefleet::coordinator {

// One job of a batch, as persisted.
struct JobRecord {
  uint32_t index = 0;  // position in the batch; the task id is "<batch>/<index>"
  v1::JobSpec spec;    // name, source, inputs
  v1::JobState state = v1::JOB_STATE_QUEUED;
  uint32_t attempts = 0;  // leases handed out so far
  uint64_t cycles = 0;
  std::vector<uint64_t> stack;  // final operand stack, top first
  std::string error;            // why it FAILED
  std::string profile_digest;   // artifact digest of the serialized profile ("" if none)
  // Artifact digest of the job's serialized flamefleet.v1.JobSummary ("" if none; jobs stored
  // before schema version 4 have none).
  std::string summary_digest;
  // internal::JobProgramDigest and internal::ResultCacheKey of the job (set at submission).
  std::string program_digest;
  std::string cache_key;
  // "<batch>/<job name>" whose result this job reused instead of running ("" if it ran).
  std::string cached_from;
};

// One batch, as persisted.
struct BatchRecord {
  std::string id;
  std::string request_id;  // idempotency key ("" if none)
  // internal::SubmitRequestDigest of the request that created the batch ("" for batches
  // stored before schema version 3).
  std::string request_digest;
  std::map<std::string, std::string> labels;
  v1::BatchOptions options;
  v1::LibrarySet libraries;  // with its digest set
  absl::Time created = absl::UnixEpoch();
  absl::Time finished = absl::UnixEpoch();  // UnixEpoch while not finished
  v1::BatchState state = v1::BATCH_STATE_RUNNING;
  std::vector<JobRecord> jobs;
};

// One lease of one job, for the attempts table (history; not read back by the
// coordinator).
struct AttemptRecord {
  std::string batch_id;
  uint32_t job_index = 0;
  uint32_t attempt = 0;  // 1-based
  std::string worker_id;
  std::string lease_id;
  absl::Time started = absl::UnixEpoch();
};

class JobStore {
 public:
  virtual ~JobStore() = default;

  // Persists a new batch with all its jobs. Returns AlreadyExists if the id (or
  // a non-empty request_id) is taken.
  virtual absl::Status CreateBatch(const BatchRecord& batch) = 0;

  // Returns every batch with its jobs, oldest first. With `with_sources` false,
  // job sources, inputs and library files of finished batches are left empty
  // (they are only needed to run jobs). Returns Internal/DataLoss on storage
  // errors.
  virtual absl::StatusOr<std::vector<BatchRecord>> LoadBatches(bool with_sources) = 0;

  // Returns the batch `id` with its jobs; NotFound if unknown.
  virtual absl::StatusOr<BatchRecord> GetBatch(absl::string_view id) = 0;

  // Overwrites the mutable fields of job `job.index` of batch `batch_id`
  // (state, attempts, cycles, stack, error, profile and summary digests, cached_from). NotFound
  // if there
  // is no such job.
  virtual absl::Status UpdateJob(absl::string_view batch_id, const JobRecord& job) = 0;

  // Records the state and finish time of batch `batch_id`. NotFound if unknown.
  virtual absl::Status UpdateBatchState(absl::string_view batch_id, v1::BatchState state,
                                        absl::Time finished) = 0;

  // Appends one attempt (lease) to the history.
  virtual absl::Status RecordAttempt(const AttemptRecord& attempt) = 0;

  // Closes an attempt with its outcome ("succeeded", "failed: ...", "lease
  // expired", ...).
  virtual absl::Status FinishAttempt(absl::string_view batch_id, uint32_t job_index,
                                     uint32_t attempt, absl::string_view outcome,
                                     absl::Time ended) = 0;

  // Stores `data` under its hex SHA-256 digest (idempotent) and returns the
  // digest.
  virtual absl::StatusOr<std::string> PutArtifact(absl::string_view data) = 0;

  // Returns the bytes stored under `digest`; NotFound if absent, DataLoss if
  // they no longer hash to `digest`.
  virtual absl::StatusOr<std::string> GetArtifact(absl::string_view digest) = 0;

  // Indexes `digest` as the `format` artifact of job `job_name` of batch
  // `batch_id` (job_name "" is the batch aggregate), replacing any earlier
  // entry.
  virtual absl::Status IndexArtifact(absl::string_view batch_id, absl::string_view job_name,
                                     v1::ArtifactFormat format, absl::string_view digest) = 0;

  // Returns the digest indexed by IndexArtifact; NotFound if none.
  virtual absl::StatusOr<std::string> FindArtifact(absl::string_view batch_id,
                                                   absl::string_view job_name,
                                                   v1::ArtifactFormat format) = 0;

  // Removes batch `batch_id` with its labels, jobs, attempts and artifact index entries (the
  // artifact bytes stay until CollectGarbage). NotFound if unknown.
  virtual absl::Status DeleteBatch(absl::string_view batch_id) = 0;

  // Deletes stored artifacts that no index entry and no job refers to any more and that are
  // older than `min_age` (so an artifact written just before it is indexed survives). Returns
  // the number deleted.
  virtual absl::StatusOr<size_t> CollectGarbage(absl::Duration min_age) = 0;
};

// The SQLite + digest-named files store. See the file comment for the layout.
class SqliteJobStore : public JobStore {
 public:
  // Opens (creating if needed) the store under `dir`, migrates the schema and
  // recovers from a crash (RUNNING jobs back to QUEUED). Takes an exclusive
  // lock on DIR/LOCK (flock, holding our pid) for the store's lifetime.
  // Returns FailedPrecondition naming the holder's pid if another process has
  // the directory open, DataLoss if state.db is missing or empty while
  // artifacts/ holds files (a lost database, not a new directory), Internal if
  // the directory or database cannot be created or opened.
  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(const std::string& dir);
  ~SqliteJobStore() override;

  absl::Status CreateBatch(const BatchRecord& batch) override;
  absl::StatusOr<std::vector<BatchRecord>> LoadBatches(bool with_sources) override;
  absl::StatusOr<BatchRecord> GetBatch(absl::string_view id) override;
  absl::Status UpdateJob(absl::string_view batch_id, const JobRecord& job) override;
  absl::Status UpdateBatchState(absl::string_view batch_id, v1::BatchState state,
                                absl::Time finished) override;
  absl::Status RecordAttempt(const AttemptRecord& attempt) override;
  absl::Status FinishAttempt(absl::string_view batch_id, uint32_t job_index, uint32_t attempt,
                             absl::string_view outcome, absl::Time ended) override;
  absl::StatusOr<std::string> PutArtifact(absl::string_view data) override;
  absl::StatusOr<std::string> GetArtifact(absl::string_view digest) override;
  absl::Status IndexArtifact(absl::string_view batch_id, absl::string_view job_name,
                             v1::ArtifactFormat format, absl::string_view digest) override;
  absl::StatusOr<std::string> FindArtifact(absl::string_view batch_id, absl::string_view job_name,
                                           v1::ArtifactFormat format) override;
  absl::Status DeleteBatch(absl::string_view batch_id) override;
  absl::StatusOr<size_t> CollectGarbage(absl::Duration min_age) override;

 private:
  SqliteJobStore(std::string dir, sqlite3* db, int lock_fd)
      : dir_(std::move(dir)), db_(db), lock_fd_(lock_fd) {}
  absl::Status Init() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status LoadJobs(BatchRecord* batch, bool with_sources) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string ArtifactPath(absl::string_view digest) const;

  const std::string dir_;
  absl::Mutex mu_;
  sqlite3* const db_ ABSL_PT_GUARDED_BY(mu_);  // owned; closed by the destructor
  const int lock_fd_;                          // holds flock(DIR/LOCK) until the store is destroyed
};

// Keeps everything in memory. For tests and for running without a state
// directory.
class InMemoryJobStore : public JobStore {
 public:
  absl::Status CreateBatch(const BatchRecord& batch) override;
  absl::StatusOr<std::vector<BatchRecord>> LoadBatches(bool with_sources) override;
  absl::StatusOr<BatchRecord> GetBatch(absl::string_view id) override;
  absl::Status UpdateJob(absl::string_view batch_id, const JobRecord& job) override;
  absl::Status UpdateBatchState(absl::string_view batch_id, v1::BatchState state,
                                absl::Time finished) override;
  absl::Status RecordAttempt(const AttemptRecord& attempt) override;
  absl::Status FinishAttempt(absl::string_view batch_id, uint32_t job_index, uint32_t attempt,
                             absl::string_view outcome, absl::Time ended) override;
  absl::StatusOr<std::string> PutArtifact(absl::string_view data) override;
  absl::StatusOr<std::string> GetArtifact(absl::string_view digest) override;
  absl::Status IndexArtifact(absl::string_view batch_id, absl::string_view job_name,
                             v1::ArtifactFormat format, absl::string_view digest) override;
  absl::StatusOr<std::string> FindArtifact(absl::string_view batch_id, absl::string_view job_name,
                                           v1::ArtifactFormat format) override;
  absl::Status DeleteBatch(absl::string_view batch_id) override;
  absl::StatusOr<size_t> CollectGarbage(absl::Duration min_age) override;

  // Returns the number of attempt rows recorded.
  size_t AttemptCountForTest() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<BatchRecord> batches_ ABSL_GUARDED_BY(mu_);
  std::vector<AttemptRecord> attempts_ ABSL_GUARDED_BY(mu_);
  struct Blob {
    std::string data;
    absl::Time stored;
  };
  absl::flat_hash_map<std::string, Blob> blobs_ ABSL_GUARDED_BY(mu_);
  std::map<std::tuple<std::string, std::string, int>, std::string> index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_JOB_STORE_H_
