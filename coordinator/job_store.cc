#include "coordinator/job_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "coordinator/internal/digest.h"

namespace flamefleet::coordinator {
namespace {

int64_t ToUnixMs(absl::Time t) { return absl::ToUnixMillis(t); }
absl::Time FromUnixMs(int64_t ms) { return absl::FromUnixMillis(ms); }

std::string JoinStack(const std::vector<uint64_t>& stack) { return absl::StrJoin(stack, ","); }

std::vector<uint64_t> SplitStack(absl::string_view text) {
  std::vector<uint64_t> stack;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    uint64_t value = 0;
    if (absl::SimpleAtoi(part, &value)) stack.push_back(value);
  }
  return stack;
}

bool IsTerminal(v1::BatchState state) {
  return state == v1::BATCH_STATE_SUCCEEDED || state == v1::BATCH_STATE_FAILED ||
         state == v1::BATCH_STATE_CANCELLED;
}

// A prepared statement, finalized on destruction.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  absl::Status status() const {
    if (rc_ == SQLITE_OK) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("sqlite prepare: ", sqlite3_errmsg(db_)));
  }
  Statement& Bind(int i, absl::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& BindBlob(int i, absl::string_view data) {
    sqlite3_bind_blob(stmt_, i, data.data(), static_cast<int>(data.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int i, int64_t value) {
    sqlite3_bind_int64(stmt_, i, value);
    return *this;
  }
  // Steps once: true if a row is available, false when done.
  absl::StatusOr<bool> Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if (rc == SQLITE_CONSTRAINT) {
      return absl::AlreadyExistsError(absl::StrCat("sqlite: ", sqlite3_errmsg(db_)));
    }
    return absl::InternalError(absl::StrCat("sqlite step: ", sqlite3_errmsg(db_)));
  }
  // Runs to completion, ignoring rows.
  absl::Status Run() {
    while (true) {
      FLAMEFLEET_ASSIGN_OR_RETURN(bool row, Step());
      if (!row) return absl::OkStatus();
    }
  }
  int64_t Int(int col) { return sqlite3_column_int64(stmt_, col); }
  std::string Text(int col) {
    const void* data = sqlite3_column_blob(stmt_, col);
    int size = sqlite3_column_bytes(stmt_, col);
    return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), size);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

absl::Status Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    return absl::InternalError(absl::StrCat("sqlite: ", message));
  }
  return absl::OkStatus();
}

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back if it fails.
template <typename Body>
absl::Status InTransaction(sqlite3* db, Body body) {
  FLAMEFLEET_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  absl::Status status = body();
  if (!status.ok()) {
    Exec(db, "ROLLBACK").IgnoreError();  // the original error is the one to report
    return status;
  }
  return Exec(db, "COMMIT");
}

constexpr int64_t kSchemaVersion = 4;

// Version 1; Init() migrates to kSchemaVersion.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
  id TEXT PRIMARY KEY,
  request_id TEXT NOT NULL,
  options BLOB NOT NULL,
  libraries BLOB NOT NULL,
  created_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  state INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS batches_request_id ON batches(request_id)
  WHERE request_id != '';
CREATE TABLE IF NOT EXISTS batch_labels (
  batch_id TEXT NOT NULL REFERENCES batches(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (batch_id, key)
);
CREATE TABLE IF NOT EXISTS jobs (
  batch_id TEXT NOT NULL REFERENCES batches(id),
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  spec BLOB NOT NULL,
  state INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  cycles INTEGER NOT NULL,
  stack TEXT NOT NULL,
  error TEXT NOT NULL,
  profile_digest TEXT NOT NULL,
  PRIMARY KEY (batch_id, idx)
);
CREATE TABLE IF NOT EXISTS attempts (
  batch_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  worker_id TEXT NOT NULL,
  lease_id TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  ended_ms INTEGER,
  outcome TEXT,
  PRIMARY KEY (batch_id, idx, attempt)
);
CREATE TABLE IF NOT EXISTS artifacts (
  batch_id TEXT NOT NULL,
  job_name TEXT NOT NULL,
  format INTEGER NOT NULL,
  digest TEXT NOT NULL,
  PRIMARY KEY (batch_id, job_name, format)
);
)sql";

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Takes DIR/LOCK with flock(LOCK_EX | LOCK_NB) and writes our pid into it; the returned fd
// holds the lock until it is closed (the process ends). FailedPrecondition naming the holder's
// pid if another process has it.
absl::StatusOr<int> LockStateDir(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "LOCK").string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("open", path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      errno = err;
      return ErrnoError("flock", path);
    }
    std::string holder(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return absl::FailedPreconditionError(
        absl::StrCat("state dir ", dir, " is in use by another coordinator (pid ",
                     holder.empty() ? "unknown" : holder, " holds ", path, ")"));
  }
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    absl::Status status = ErrnoError("write", path);
    ::close(fd);
    return status;
  }
  return fd;
}

// An existing state dir whose artifacts are there but whose database is missing or empty has
// lost its index: DataLoss rather than starting over with an empty store. A new (empty) dir
// is fine.
absl::Status CheckDatabaseNotLost(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path db = fs::path(dir) / "state.db";
  const fs::path wal = fs::path(dir) / "state.db-wal";
  auto has_bytes = [&](const fs::path& path) {
    std::error_code size_ec;
    const std::uintmax_t size = fs::file_size(path, size_ec);
    return !size_ec && size > 0;
  };
  if (has_bytes(db) || has_bytes(wal)) return absl::OkStatus();
  fs::directory_iterator it(fs::path(dir) / "artifacts", ec);
  if (ec || it == fs::directory_iterator()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "state dir ", dir, ": ", db.string(), fs::exists(db, ec) ? " is empty" : " is missing",
      " but artifacts/ holds results: the database was lost or truncated; restore it from a "
      "backup, or move the directory away to start with an empty store"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(dir) / "artifacts", ec);
  if (ec) return absl::InternalError(absl::StrCat("state dir ", dir, ": ", ec.message()));
  FLAMEFLEET_ASSIGN_OR_RETURN(int lock_fd, LockStateDir(dir));
  absl::Status intact = CheckDatabaseNotLost(dir);
  if (!intact.ok()) {
    ::close(lock_fd);
    return intact;
  }
  std::string path = (std::filesystem::path(dir) / "state.db").string();
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    ::close(lock_fd);
    return absl::InternalError(absl::StrCat("open ", path, ": ", message));
  }
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(dir, db, lock_fd));
  absl::MutexLock lock(&store->mu_);
  FLAMEFLEET_RETURN_IF_ERROR(store->Init());
  return store;
}

SqliteJobStore::~SqliteJobStore() {
  sqlite3_close(db_);
  ::close(lock_fd_);  // releases the state dir lock
}

absl::Status SqliteJobStore::Init() {
  sqlite3_busy_timeout(db_, 5000);
  FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, "PRAGMA journal_mode=WAL"));
  FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, "PRAGMA synchronous=NORMAL"));
  FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, "PRAGMA foreign_keys=ON"));
  return InTransaction(db_, [&]() -> absl::Status {
    FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, kSchema));
    Statement version(db_, "SELECT version FROM schema_version");
    FLAMEFLEET_RETURN_IF_ERROR(version.status());
    FLAMEFLEET_ASSIGN_OR_RETURN(bool has_version, version.Step());
    int64_t schema = has_version ? version.Int(0) : 1;
    if (!has_version) {
      FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, "INSERT INTO schema_version VALUES (1)"));
    }
    if (schema > kSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "state.db has schema version ", schema, "; this build reads up to ", kSchemaVersion));
    }
    if (schema < 2) {
      // 1 -> 2: result cache and history keys, cache provenance.
      FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, R"sql(
ALTER TABLE jobs ADD COLUMN program_digest TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN cache_key TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN cached_from TEXT NOT NULL DEFAULT '';
UPDATE schema_version SET version = 2;
)sql"));
    }
    if (schema < 3) {
      // 2 -> 3: the digest of the request a request_id was first used with (earlier batches
      // keep '': their request ids are honoured without a content check).
      FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, R"sql(
ALTER TABLE batches ADD COLUMN request_digest TEXT NOT NULL DEFAULT '';
UPDATE schema_version SET version = 3;
)sql"));
    }
    if (schema < 4) {
      // 3 -> 4: each job's summary (earlier jobs keep '': they have none).
      FLAMEFLEET_RETURN_IF_ERROR(Exec(db_, R"sql(
ALTER TABLE jobs ADD COLUMN summary_digest TEXT NOT NULL DEFAULT '';
UPDATE schema_version SET version = 4;
)sql"));
    }
    // Crash recovery: what was running is queued again (its attempt stays
    // counted).
    Statement requeue(db_, "UPDATE jobs SET state = ? WHERE state = ?");
    FLAMEFLEET_RETURN_IF_ERROR(requeue.status());
    FLAMEFLEET_RETURN_IF_ERROR(requeue.Bind(1, int64_t{v1::JOB_STATE_QUEUED})
                                   .Bind(2, int64_t{v1::JOB_STATE_RUNNING})
                                   .Run());
    Statement close(db_,
                    "UPDATE attempts SET outcome = 'coordinator restarted', ended_ms = ? "
                    "WHERE outcome IS NULL");
    FLAMEFLEET_RETURN_IF_ERROR(close.status());
    return close.Bind(1, ToUnixMs(absl::Now())).Run();
  });
}

absl::Status SqliteJobStore::CreateBatch(const BatchRecord& batch) {
  absl::MutexLock lock(&mu_);
  return InTransaction(db_, [&]() -> absl::Status {
    Statement insert(db_,
                     "INSERT INTO batches (id, request_id, options, libraries, created_ms, "
                     "finished_ms, state, request_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    FLAMEFLEET_RETURN_IF_ERROR(insert.status());
    FLAMEFLEET_RETURN_IF_ERROR(insert.Bind(1, batch.id)
                                   .Bind(2, batch.request_id)
                                   .BindBlob(3, batch.options.SerializeAsString())
                                   .BindBlob(4, batch.libraries.SerializeAsString())
                                   .Bind(5, ToUnixMs(batch.created))
                                   .Bind(6, ToUnixMs(batch.finished))
                                   .Bind(7, int64_t{batch.state})
                                   .Bind(8, batch.request_digest)
                                   .Run());
    for (const auto& [key, value] : batch.labels) {
      Statement label(db_, "INSERT INTO batch_labels (batch_id, key, value) VALUES (?, ?, ?)");
      FLAMEFLEET_RETURN_IF_ERROR(label.status());
      FLAMEFLEET_RETURN_IF_ERROR(label.Bind(1, batch.id).Bind(2, key).Bind(3, value).Run());
    }
    for (const JobRecord& job : batch.jobs) {
      Statement insert_job(db_,
                           "INSERT INTO jobs (batch_id, idx, name, spec, state, attempts, "
                           "cycles, stack, error, profile_digest, program_digest, cache_key, "
                           "cached_from, summary_digest) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      FLAMEFLEET_RETURN_IF_ERROR(insert_job.status());
      FLAMEFLEET_RETURN_IF_ERROR(insert_job.Bind(1, batch.id)
                                     .Bind(2, int64_t{job.index})
                                     .Bind(3, job.spec.name())
                                     .BindBlob(4, job.spec.SerializeAsString())
                                     .Bind(5, int64_t{job.state})
                                     .Bind(6, int64_t{job.attempts})
                                     .Bind(7, static_cast<int64_t>(job.cycles))
                                     .Bind(8, JoinStack(job.stack))
                                     .Bind(9, job.error)
                                     .Bind(10, job.profile_digest)
                                     .Bind(11, job.program_digest)
                                     .Bind(12, job.cache_key)
                                     .Bind(13, job.cached_from)
                                     .Bind(14, job.summary_digest)
                                     .Run());
    }
    return absl::OkStatus();
  });
}

absl::Status SqliteJobStore::LoadJobs(BatchRecord* batch, bool with_sources) {
  Statement select(
      db_,
      "SELECT idx, spec, state, attempts, cycles, stack, error, profile_digest, "
      "program_digest, cache_key, cached_from, summary_digest FROM jobs WHERE batch_id = ? "
      "ORDER BY idx");
  FLAMEFLEET_RETURN_IF_ERROR(select.status());
  select.Bind(1, batch->id);
  while (true) {
    FLAMEFLEET_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    JobRecord job;
    job.index = static_cast<uint32_t>(select.Int(0));
    if (!job.spec.ParseFromString(select.Text(1))) {
      return absl::DataLossError(
          absl::StrCat("batch ", batch->id, " job ", job.index, ": unreadable spec"));
    }
    if (!with_sources) {
      job.spec.clear_source();
      job.spec.clear_inputs();
      job.spec.clear_snapshot();
    }
    job.state = static_cast<v1::JobState>(select.Int(2));
    job.attempts = static_cast<uint32_t>(select.Int(3));
    job.cycles = static_cast<uint64_t>(select.Int(4));
    job.stack = SplitStack(select.Text(5));
    job.error = select.Text(6);
    job.profile_digest = select.Text(7);
    job.program_digest = select.Text(8);
    job.cache_key = select.Text(9);
    job.cached_from = select.Text(10);
    job.summary_digest = select.Text(11);
    batch->jobs.push_back(std::move(job));
  }
  Statement labels(db_, "SELECT key, value FROM batch_labels WHERE batch_id = ?");
  FLAMEFLEET_RETURN_IF_ERROR(labels.status());
  labels.Bind(1, batch->id);
  while (true) {
    FLAMEFLEET_ASSIGN_OR_RETURN(bool row, labels.Step());
    if (!row) break;
    batch->labels[labels.Text(0)] = labels.Text(1);
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<BatchRecord> ReadBatchRow(Statement& select) {
  BatchRecord batch;
  batch.id = select.Text(0);
  batch.request_id = select.Text(1);
  if (!batch.options.ParseFromString(select.Text(2)) ||
      !batch.libraries.ParseFromString(select.Text(3))) {
    return absl::DataLossError(absl::StrCat("batch ", batch.id, ": unreadable options"));
  }
  batch.created = FromUnixMs(select.Int(4));
  batch.finished = FromUnixMs(select.Int(5));
  batch.state = static_cast<v1::BatchState>(select.Int(6));
  batch.request_digest = select.Text(7);
  return batch;
}

constexpr const char* kSelectBatch =
    "SELECT id, request_id, options, libraries, created_ms, finished_ms, state, "
    "request_digest FROM batches";

}  // namespace

absl::StatusOr<std::vector<BatchRecord>> SqliteJobStore::LoadBatches(bool with_sources) {
  absl::MutexLock lock(&mu_);
  Statement select(db_, absl::StrCat(kSelectBatch, " ORDER BY created_ms, rowid").c_str());
  FLAMEFLEET_RETURN_IF_ERROR(select.status());
  std::vector<BatchRecord> batches;
  while (true) {
    FLAMEFLEET_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    FLAMEFLEET_ASSIGN_OR_RETURN(BatchRecord batch, ReadBatchRow(select));
    bool sources = with_sources || !IsTerminal(batch.state);
    if (!sources) {
      for (v1::Library& library : *batch.libraries.mutable_libraries()) {
        library.clear_files();
      }
    }
    FLAMEFLEET_RETURN_IF_ERROR(LoadJobs(&batch, sources));
    batches.push_back(std::move(batch));
  }
  return batches;
}

absl::StatusOr<BatchRecord> SqliteJobStore::GetBatch(absl::string_view id) {
  absl::MutexLock lock(&mu_);
  Statement select(db_, absl::StrCat(kSelectBatch, " WHERE id = ?").c_str());
  FLAMEFLEET_RETURN_IF_ERROR(select.status());
  select.Bind(1, id);
  FLAMEFLEET_ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("batch ", id, " not found"));
  FLAMEFLEET_ASSIGN_OR_RETURN(BatchRecord batch, ReadBatchRow(select));
  FLAMEFLEET_RETURN_IF_ERROR(LoadJobs(&batch, /*with_sources=*/true));
  return batch;
}

absl::Status SqliteJobStore::UpdateJob(absl::string_view batch_id, const JobRecord& job) {
  absl::MutexLock lock(&mu_);
  Statement update(db_,
                   "UPDATE jobs SET state = ?, attempts = ?, cycles = ?, stack "
                   "= ?, error = ?, "
                   "profile_digest = ?, cached_from = ?, summary_digest = ? "
                   "WHERE batch_id = ? AND idx = ?");
  FLAMEFLEET_RETURN_IF_ERROR(update.status());
  FLAMEFLEET_RETURN_IF_ERROR(update.Bind(1, int64_t{job.state})
                                 .Bind(2, int64_t{job.attempts})
                                 .Bind(3, static_cast<int64_t>(job.cycles))
                                 .Bind(4, JoinStack(job.stack))
                                 .Bind(5, job.error)
                                 .Bind(6, job.profile_digest)
                                 .Bind(7, job.cached_from)
                                 .Bind(8, job.summary_digest)
                                 .Bind(9, batch_id)
                                 .Bind(10, int64_t{job.index})
                                 .Run());
  if (sqlite3_changes(db_) == 0) {
    return absl::NotFoundError(absl::StrCat("job ", batch_id, "/", job.index, " not found"));
  }
  return absl::OkStatus();
}

absl::Status SqliteJobStore::UpdateBatchState(absl::string_view batch_id, v1::BatchState state,
                                              absl::Time finished) {
  absl::MutexLock lock(&mu_);
  Statement update(db_, "UPDATE batches SET state = ?, finished_ms = ? WHERE id = ?");
  FLAMEFLEET_RETURN_IF_ERROR(update.status());
  FLAMEFLEET_RETURN_IF_ERROR(
      update.Bind(1, int64_t{state}).Bind(2, ToUnixMs(finished)).Bind(3, batch_id).Run());
  if (sqlite3_changes(db_) == 0) {
    return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
  }
  return absl::OkStatus();
}

absl::Status SqliteJobStore::RecordAttempt(const AttemptRecord& attempt) {
  absl::MutexLock lock(&mu_);
  Statement insert(db_,
                   "INSERT OR REPLACE INTO attempts (batch_id, idx, attempt, worker_id, "
                   "lease_id, started_ms) VALUES (?, ?, ?, ?, ?, ?)");
  FLAMEFLEET_RETURN_IF_ERROR(insert.status());
  return insert.Bind(1, attempt.batch_id)
      .Bind(2, int64_t{attempt.job_index})
      .Bind(3, int64_t{attempt.attempt})
      .Bind(4, attempt.worker_id)
      .Bind(5, attempt.lease_id)
      .Bind(6, ToUnixMs(attempt.started))
      .Run();
}

absl::Status SqliteJobStore::FinishAttempt(absl::string_view batch_id, uint32_t job_index,
                                           uint32_t attempt, absl::string_view outcome,
                                           absl::Time ended) {
  absl::MutexLock lock(&mu_);
  Statement update(db_,
                   "UPDATE attempts SET outcome = ?, ended_ms = ? "
                   "WHERE batch_id = ? AND idx = ? AND attempt = ?");
  FLAMEFLEET_RETURN_IF_ERROR(update.status());
  return update.Bind(1, outcome)
      .Bind(2, ToUnixMs(ended))
      .Bind(3, batch_id)
      .Bind(4, int64_t{job_index})
      .Bind(5, int64_t{attempt})
      .Run();
}

std::string SqliteJobStore::ArtifactPath(absl::string_view digest) const {
  return (std::filesystem::path(dir_) / "artifacts" / std::string(digest)).string();
}

absl::StatusOr<std::string> SqliteJobStore::PutArtifact(absl::string_view data) {
  std::string digest = internal::Sha256Hex(data);
  std::string path = ArtifactPath(digest);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return digest;
  // Temp file beside it, fsync, rename to the digest, fsync of artifacts/.
  FLAMEFLEET_RETURN_IF_ERROR(WriteFileAtomically(path, data));
  return digest;
}

absl::StatusOr<std::string> SqliteJobStore::GetArtifact(absl::string_view digest) {
  if (!internal::IsSha256Hex(digest)) {
    return absl::InvalidArgumentError(absl::StrCat("not an artifact digest: ", digest));
  }
  std::string path = ArtifactPath(digest);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("artifact ", digest, " not found"));
  std::ostringstream data;
  data << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("read ", path));
  std::string bytes = std::move(data).str();
  if (internal::Sha256Hex(bytes) != digest) {
    return absl::DataLossError(absl::StrCat("artifact ", digest, " is corrupt"));
  }
  return bytes;
}

absl::Status SqliteJobStore::IndexArtifact(absl::string_view batch_id, absl::string_view job_name,
                                           v1::ArtifactFormat format, absl::string_view digest) {
  absl::MutexLock lock(&mu_);
  Statement insert(db_,
                   "INSERT OR REPLACE INTO artifacts (batch_id, job_name, format, digest) "
                   "VALUES (?, ?, ?, ?)");
  FLAMEFLEET_RETURN_IF_ERROR(insert.status());
  return insert.Bind(1, batch_id).Bind(2, job_name).Bind(3, int64_t{format}).Bind(4, digest).Run();
}

absl::StatusOr<std::string> SqliteJobStore::FindArtifact(absl::string_view batch_id,
                                                         absl::string_view job_name,
                                                         v1::ArtifactFormat format) {
  absl::MutexLock lock(&mu_);
  Statement select(db_,
                   "SELECT digest FROM artifacts WHERE batch_id = ? AND job_name = ? AND "
                   "format = ?");
  FLAMEFLEET_RETURN_IF_ERROR(select.status());
  select.Bind(1, batch_id).Bind(2, job_name).Bind(3, int64_t{format});
  FLAMEFLEET_ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) {
    return absl::NotFoundError(absl::StrCat("no ", v1::ArtifactFormat_Name(format),
                                            " artifact for ", batch_id, "/", job_name));
  }
  return select.Text(0);
}

absl::Status SqliteJobStore::DeleteBatch(absl::string_view batch_id) {
  absl::MutexLock lock(&mu_);
  return InTransaction(db_, [&]() -> absl::Status {
    for (const char* table : {"attempts", "artifacts", "jobs", "batch_labels"}) {
      Statement remove(db_, absl::StrCat("DELETE FROM ", table, " WHERE batch_id = ?").c_str());
      FLAMEFLEET_RETURN_IF_ERROR(remove.status());
      FLAMEFLEET_RETURN_IF_ERROR(remove.Bind(1, batch_id).Run());
    }
    Statement remove(db_, "DELETE FROM batches WHERE id = ?");
    FLAMEFLEET_RETURN_IF_ERROR(remove.status());
    FLAMEFLEET_RETURN_IF_ERROR(remove.Bind(1, batch_id).Run());
    if (sqlite3_changes(db_) == 0) {
      return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<size_t> SqliteJobStore::CollectGarbage(absl::Duration min_age) {
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<std::string> live;
  Statement select(db_,
                   "SELECT digest FROM artifacts UNION SELECT profile_digest FROM jobs "
                   "WHERE profile_digest != '' UNION SELECT summary_digest FROM jobs "
                   "WHERE summary_digest != ''");
  FLAMEFLEET_RETURN_IF_ERROR(select.status());
  while (true) {
    FLAMEFLEET_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    live.insert(select.Text(0));
  }
  const auto cutoff = std::filesystem::file_time_type::clock::now() -
                      std::chrono::nanoseconds(absl::ToInt64Nanoseconds(min_age));
  size_t deleted = 0;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(dir_) / "artifacts";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // Only finished artifacts (temp files are renamed to their digest when complete).
    if (!internal::IsSha256Hex(name) || live.contains(name)) continue;
    std::error_code time_ec;
    auto written = entry.last_write_time(time_ec);
    if (time_ec || written > cutoff) continue;
    if (std::filesystem::remove(entry.path(), time_ec)) ++deleted;
  }
  if (ec) return absl::InternalError(absl::StrCat("list ", dir.string(), ": ", ec.message()));
  return deleted;
}

// --- InMemoryJobStore ---

absl::Status InMemoryJobStore::CreateBatch(const BatchRecord& batch) {
  absl::MutexLock lock(&mu_);
  for (const BatchRecord& existing : batches_) {
    if (existing.id == batch.id ||
        (!batch.request_id.empty() && existing.request_id == batch.request_id)) {
      return absl::AlreadyExistsError(absl::StrCat("batch ", batch.id, " exists"));
    }
  }
  batches_.push_back(batch);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<BatchRecord>> InMemoryJobStore::LoadBatches(bool /*with_sources*/) {
  absl::MutexLock lock(&mu_);
  return batches_;
}

absl::StatusOr<BatchRecord> InMemoryJobStore::GetBatch(absl::string_view id) {
  absl::MutexLock lock(&mu_);
  for (const BatchRecord& batch : batches_) {
    if (batch.id == id) return batch;
  }
  return absl::NotFoundError(absl::StrCat("batch ", id, " not found"));
}

absl::Status InMemoryJobStore::UpdateJob(absl::string_view batch_id, const JobRecord& job) {
  absl::MutexLock lock(&mu_);
  for (BatchRecord& batch : batches_) {
    if (batch.id != batch_id) continue;
    if (job.index >= batch.jobs.size()) break;
    JobRecord& stored = batch.jobs[job.index];
    v1::JobSpec spec = std::move(stored.spec);
    stored = job;
    stored.spec = std::move(spec);
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("job ", batch_id, "/", job.index, " not found"));
}

absl::Status InMemoryJobStore::UpdateBatchState(absl::string_view batch_id, v1::BatchState state,
                                                absl::Time finished) {
  absl::MutexLock lock(&mu_);
  for (BatchRecord& batch : batches_) {
    if (batch.id != batch_id) continue;
    batch.state = state;
    batch.finished = finished;
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
}

absl::Status InMemoryJobStore::RecordAttempt(const AttemptRecord& attempt) {
  absl::MutexLock lock(&mu_);
  attempts_.push_back(attempt);
  return absl::OkStatus();
}

absl::Status InMemoryJobStore::FinishAttempt(absl::string_view, uint32_t, uint32_t,
                                             absl::string_view, absl::Time) {
  return absl::OkStatus();
}

absl::StatusOr<std::string> InMemoryJobStore::PutArtifact(absl::string_view data) {
  std::string digest = internal::Sha256Hex(data);
  absl::MutexLock lock(&mu_);
  blobs_.try_emplace(digest, Blob{std::string(data), absl::Now()});
  return digest;
}

absl::StatusOr<std::string> InMemoryJobStore::GetArtifact(absl::string_view digest) {
  absl::MutexLock lock(&mu_);
  auto it = blobs_.find(digest);
  if (it == blobs_.end()) {
    return absl::NotFoundError(absl::StrCat("artifact ", digest, " not found"));
  }
  return it->second.data;
}

absl::Status InMemoryJobStore::IndexArtifact(absl::string_view batch_id, absl::string_view job_name,
                                             v1::ArtifactFormat format, absl::string_view digest) {
  absl::MutexLock lock(&mu_);
  index_[{std::string(batch_id), std::string(job_name), format}] = std::string(digest);
  return absl::OkStatus();
}

absl::StatusOr<std::string> InMemoryJobStore::FindArtifact(absl::string_view batch_id,
                                                           absl::string_view job_name,
                                                           v1::ArtifactFormat format) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find({std::string(batch_id), std::string(job_name), format});
  if (it == index_.end()) {
    return absl::NotFoundError(absl::StrCat("no ", v1::ArtifactFormat_Name(format),
                                            " artifact for ", batch_id, "/", job_name));
  }
  return it->second;
}

absl::Status InMemoryJobStore::DeleteBatch(absl::string_view batch_id) {
  absl::MutexLock lock(&mu_);
  auto it = std::find_if(batches_.begin(), batches_.end(),
                         [&](const BatchRecord& b) { return b.id == batch_id; });
  if (it == batches_.end()) {
    return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
  }
  batches_.erase(it);
  std::erase_if(attempts_, [&](const AttemptRecord& a) { return a.batch_id == batch_id; });
  std::erase_if(index_, [&](const auto& entry) { return std::get<0>(entry.first) == batch_id; });
  return absl::OkStatus();
}

absl::StatusOr<size_t> InMemoryJobStore::CollectGarbage(absl::Duration min_age) {
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<std::string> live;
  for (const auto& [key, digest] : index_) live.insert(digest);
  for (const BatchRecord& batch : batches_) {
    for (const JobRecord& job : batch.jobs) {
      live.insert(job.profile_digest);
      live.insert(job.summary_digest);
    }
  }
  const absl::Time cutoff = absl::Now() - min_age;
  std::vector<std::string> dead;
  for (const auto& [digest, blob] : blobs_) {
    if (!live.contains(digest) && blob.stored <= cutoff) dead.push_back(digest);
  }
  for (const std::string& digest : dead) blobs_.erase(digest);
  return dead.size();
}

size_t InMemoryJobStore::AttemptCountForTest() const {
  absl::MutexLock lock(&mu_);
  return attempts_.size();
}

}  // namespace flamefleet::coordinator
