#include "coordinator/job_store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "coordinator/internal/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flamefleet::coordinator {
namespace {

using ::flamefleet::testutil::StatusIs;

std::string MakeTempDir() {
  std::string pattern = ::testing::TempDir() + "/job_store_test.XXXXXX";
  char* dir = ::mkdtemp(pattern.data());
  EXPECT_NE(dir, nullptr);
  return pattern;
}

BatchRecord SampleBatch(const std::string& id) {
  BatchRecord batch;
  batch.id = id;
  batch.request_id = "req-" + id;
  batch.labels = {{"suite", "nightly"}, {"commit", "abc"}};
  batch.options.set_max_cycles(1000);
  batch.options.set_title("t");
  v1::Library* library = batch.libraries.add_libraries();
  library->set_namespace_("std");
  v1::LibraryFile* file = library->add_files();
  file->set_path("math/u64.masm");
  file->set_source("export.add\n  add\nend\n");
  batch.libraries.set_digest(internal::LibrarySetDigest(batch.libraries));
  batch.created = absl::FromUnixMillis(1700000000123);
  for (uint32_t i = 0; i < 3; ++i) {
    JobRecord job;
    job.index = i;
    job.spec.set_name("job" + std::to_string(i) + ".masm");
    job.spec.set_source("begin push.1 end");
    batch.jobs.push_back(job);
  }
  return batch;
}

TEST(SqliteJobStoreTest, RoundTripsBatchJobsAndLabels) {
  std::string dir = MakeTempDir();
  ASSERT_OK_AND_ASSIGN(auto store, SqliteJobStore::Open(dir));
  ASSERT_OK(store->CreateBatch(SampleBatch("1")));

  JobRecord done = SampleBatch("1").jobs[1];
  done.state = v1::JOB_STATE_SUCCEEDED;
  done.attempts = 2;
  done.cycles = 12345;
  done.stack = {7, 0, 18446744073709551615ull};
  done.profile_digest = std::string(64, 'a');
  ASSERT_OK(store->UpdateJob("1", done));

  ASSERT_OK_AND_ASSIGN(const BatchRecord batch, store->GetBatch("1"));
  EXPECT_EQ(batch.request_id, "req-1");
  EXPECT_EQ(batch.labels.at("suite"), "nightly");
  EXPECT_EQ(batch.options.max_cycles(), 1000u);
  EXPECT_EQ(batch.libraries.libraries(0).files(0).path(), "math/u64.masm");
  EXPECT_EQ(batch.created, absl::FromUnixMillis(1700000000123));
  ASSERT_EQ(batch.jobs.size(), 3u);
  const JobRecord& job = batch.jobs[1];
  EXPECT_EQ(job.spec.name(), "job1.masm");
  EXPECT_EQ(job.state, v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.attempts, 2u);
  EXPECT_EQ(job.cycles, 12345u);
  EXPECT_THAT(job.stack, ::testing::ElementsAre(7, 0, 18446744073709551615ull));
  EXPECT_EQ(job.profile_digest, std::string(64, 'a'));
}

TEST(SqliteJobStoreTest, RejectsDuplicateBatchIdAndRequestId) {
  ASSERT_OK_AND_ASSIGN(auto store, SqliteJobStore::Open(MakeTempDir()));
  ASSERT_OK(store->CreateBatch(SampleBatch("1")));
  EXPECT_THAT(store->CreateBatch(SampleBatch("1")), StatusIs(absl::StatusCode::kAlreadyExists));
  BatchRecord same_request = SampleBatch("2");
  same_request.request_id = "req-1";
  EXPECT_THAT(store->CreateBatch(same_request), StatusIs(absl::StatusCode::kAlreadyExists));
  // The failed insert left nothing behind.
  EXPECT_THAT(store->GetBatch("2"), StatusIs(absl::StatusCode::kNotFound));
}

TEST(SqliteJobStoreTest, ReopenAfterCrashRequeuesRunningJobsAndKeepsResults) {
  std::string dir = MakeTempDir();
  std::string digest;
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->CreateBatch(SampleBatch("5")).ok());
    auto put = (*store)->PutArtifact("profile bytes");
    ASSERT_TRUE(put.ok());
    digest = *put;
    JobRecord finished = SampleBatch("5").jobs[0];
    finished.state = v1::JOB_STATE_SUCCEEDED;
    finished.attempts = 1;
    finished.cycles = 99;
    finished.profile_digest = digest;
    ASSERT_TRUE((*store)->UpdateJob("5", finished).ok());
    ASSERT_TRUE(
        (*store)->IndexArtifact("5", "job0.masm", v1::ARTIFACT_FORMAT_PROFILE, digest).ok());
    JobRecord running = SampleBatch("5").jobs[1];
    running.state = v1::JOB_STATE_RUNNING;
    running.attempts = 1;
    ASSERT_TRUE((*store)->UpdateJob("5", running).ok());
    ASSERT_TRUE((*store)->RecordAttempt({"5", 1, 1, "worker-a", "lease-1", absl::Now()}).ok());
    // The store is dropped without any shutdown step, as a SIGKILL would.
  }
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto batches = (*store)->LoadBatches(/*with_sources=*/false);
  ASSERT_TRUE(batches.ok());
  ASSERT_EQ(batches->size(), 1u);
  const BatchRecord& batch = (*batches)[0];
  EXPECT_EQ(batch.state, v1::BATCH_STATE_RUNNING);
  EXPECT_EQ(batch.jobs[0].state, v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(batch.jobs[0].cycles, 99u);
  EXPECT_EQ(batch.jobs[1].state, v1::JOB_STATE_QUEUED);
  EXPECT_EQ(batch.jobs[1].attempts, 1u);  // the lost attempt stays counted
  EXPECT_EQ(batch.jobs[1].spec.source(),
            "begin push.1 end");  // running batch: sources kept
  EXPECT_EQ(batch.jobs[2].state, v1::JOB_STATE_QUEUED);
  auto found = (*store)->FindArtifact("5", "job0.masm", v1::ARTIFACT_FORMAT_PROFILE);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*(*store)->GetArtifact(*found), "profile bytes");
}

TEST(SqliteJobStoreTest, StoresArtifactsAsFilesNamedByDigest) {
  std::string dir = MakeTempDir();
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok());
  auto digest = (*store)->PutArtifact("hello");
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(*digest, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  EXPECT_TRUE(std::filesystem::exists(dir + "/artifacts/" + *digest));
  EXPECT_EQ(*(*store)->PutArtifact("hello"), *digest);  // idempotent
  EXPECT_EQ(*(*store)->GetArtifact(*digest), "hello");
  EXPECT_TRUE(absl::IsNotFound((*store)->GetArtifact(std::string(64, '0')).status()));
  EXPECT_TRUE(absl::IsNotFound((*store)->FindArtifact("1", "", v1::ARTIFACT_FORMAT_SVG).status()));
}

TEST(SqliteJobStoreTest, DetectsCorruptArtifact) {
  std::string dir = MakeTempDir();
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok());
  auto digest = (*store)->PutArtifact("original");
  ASSERT_TRUE(digest.ok());
  {
    std::FILE* f = std::fopen((dir + "/artifacts/" + *digest).c_str(), "w");
    std::fputs("tampered", f);
    std::fclose(f);
  }
  EXPECT_TRUE(absl::IsDataLoss((*store)->GetArtifact(*digest).status()));
}

TEST(SqliteJobStoreTest, FinishedBatchLoadsWithoutSources) {
  auto store = SqliteJobStore::Open(MakeTempDir());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->CreateBatch(SampleBatch("1")).ok());
  ASSERT_TRUE((*store)->UpdateBatchState("1", v1::BATCH_STATE_FAILED, absl::Now()).ok());
  auto batches = (*store)->LoadBatches(/*with_sources=*/false);
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ((*batches)[0].state, v1::BATCH_STATE_FAILED);
  EXPECT_EQ((*batches)[0].jobs[0].spec.name(), "job0.masm");
  EXPECT_EQ((*batches)[0].jobs[0].spec.source(), "");
  EXPECT_TRUE(
      absl::IsNotFound((*store)->UpdateBatchState("404", v1::BATCH_STATE_FAILED, absl::Now())));
}

TEST(SqliteJobStoreTest, KeepsCacheKeysDeletesBatchesAndCollectsUnreferencedArtifacts) {
  std::string dir = MakeTempDir();
  std::string kept_digest, dropped_digest;
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    BatchRecord a = SampleBatch("1");
    a.jobs[0].program_digest = std::string(64, 'p');
    a.jobs[0].cache_key = std::string(64, 'k');
    a.jobs[0].cached_from = "0/job0.masm";
    auto kept = (*store)->PutArtifact("shared profile");
    auto dropped = (*store)->PutArtifact("profile of batch 1 only");
    ASSERT_TRUE(kept.ok() && dropped.ok());
    kept_digest = *kept;
    dropped_digest = *dropped;
    a.jobs[0].state = v1::JOB_STATE_SUCCEEDED;
    a.jobs[0].profile_digest = dropped_digest;
    ASSERT_TRUE((*store)->CreateBatch(a).ok());
    BatchRecord b = SampleBatch("2");
    b.jobs[0].state = v1::JOB_STATE_SUCCEEDED;
    b.jobs[0].profile_digest = kept_digest;
    ASSERT_TRUE((*store)->CreateBatch(b).ok());
    ASSERT_TRUE((*store)->IndexArtifact("1", "", v1::ARTIFACT_FORMAT_FOLDED, kept_digest).ok());
  }
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto loaded = (*store)->GetBatch("1");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->jobs[0].program_digest, std::string(64, 'p'));
  EXPECT_EQ(loaded->jobs[0].cache_key, std::string(64, 'k'));
  EXPECT_EQ(loaded->jobs[0].cached_from, "0/job0.masm");

  // Nothing is old enough yet.
  EXPECT_EQ(*(*store)->CollectGarbage(absl::Hours(1)), 0u);
  ASSERT_TRUE((*store)->DeleteBatch("1").ok());
  EXPECT_TRUE(absl::IsNotFound((*store)->DeleteBatch("1")));
  EXPECT_TRUE(absl::IsNotFound((*store)->GetBatch("1").status()));
  EXPECT_TRUE(
      absl::IsNotFound((*store)->FindArtifact("1", "", v1::ARTIFACT_FORMAT_FOLDED).status()));
  EXPECT_EQ(*(*store)->CollectGarbage(absl::ZeroDuration()), 1u);
  EXPECT_TRUE(absl::IsNotFound((*store)->GetArtifact(dropped_digest).status()));
  EXPECT_TRUE((*store)->GetArtifact(kept_digest).ok());  // batch 2 still refers to it
  auto all = (*store)->LoadBatches(false);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, "2");
}

TEST(SqliteJobStoreTest, MigratesASchemaVersionOneStateDirectory) {
  std::string dir = MakeTempDir();
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->CreateBatch(SampleBatch("1")).ok());
  }
  {
    // Turn it back into what a version-1 build wrote.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir + "/state.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "ALTER TABLE jobs DROP COLUMN program_digest;"
                           "ALTER TABLE jobs DROP COLUMN cache_key;"
                           "ALTER TABLE jobs DROP COLUMN cached_from;"
                           "ALTER TABLE batches DROP COLUMN request_digest;"
                           "ALTER TABLE jobs DROP COLUMN summary_digest;"
                           "UPDATE schema_version SET version = 1;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto loaded = (*store)->GetBatch("1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->jobs.size(), 3u);
  EXPECT_EQ(loaded->jobs[0].cache_key, "");
  JobRecord job = loaded->jobs[0];
  job.cached_from = "x/y";
  ASSERT_TRUE((*store)->UpdateJob("1", job).ok());
}

TEST(SqliteJobStoreTest, MigratesASchemaVersionTwoStateDirectoryAndKeepsRequestDigests) {
  std::string dir = MakeTempDir();
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->CreateBatch(SampleBatch("1")).ok());
  }
  {
    // Turn it back into what a version-2 build wrote.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir + "/state.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "ALTER TABLE batches DROP COLUMN request_digest;"
                           "ALTER TABLE jobs DROP COLUMN summary_digest;"
                           "UPDATE schema_version SET version = 2;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    auto loaded = (*store)->GetBatch("1");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->request_id, "req-1");
    EXPECT_EQ(loaded->request_digest, "");  // unknown for old batches
    BatchRecord next = SampleBatch("2");
    next.request_digest = "d2";
    ASSERT_TRUE((*store)->CreateBatch(next).ok());
  }
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto loaded = (*store)->GetBatch("2");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->request_digest, "d2");
}

TEST(SqliteJobStoreTest, MigratesASchemaVersionThreeStateDirectoryAndKeepsJobSummaries) {
  std::string dir = MakeTempDir();
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok());
    BatchRecord batch = SampleBatch("1");
    batch.jobs[0].state = v1::JOB_STATE_SUCCEEDED;
    ASSERT_TRUE((*store)->CreateBatch(batch).ok());
  }
  {
    // Turn it back into what a version-3 build wrote.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir + "/state.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "ALTER TABLE jobs DROP COLUMN summary_digest;"
                           "UPDATE schema_version SET version = 3;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  std::string summary_digest;
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    auto loaded = (*store)->GetBatch("1");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->jobs[0].summary_digest, "");  // old jobs have none
    auto put = (*store)->PutArtifact("a job summary");
    ASSERT_TRUE(put.ok());
    summary_digest = *put;
    JobRecord job = loaded->jobs[1];
    job.state = v1::JOB_STATE_FAILED;
    job.summary_digest = summary_digest;
    ASSERT_TRUE((*store)->UpdateJob("1", job).ok());
    BatchRecord created = SampleBatch("2");
    created.jobs[2].summary_digest = summary_digest;
    ASSERT_TRUE((*store)->CreateBatch(created).ok());
  }
  auto store = SqliteJobStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto one = (*store)->GetBatch("1");
  auto two = (*store)->GetBatch("2");
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->jobs[1].summary_digest, summary_digest);
  EXPECT_EQ(two->jobs[2].summary_digest, summary_digest);
  // A summary only a job refers to is live until its batches are gone.
  EXPECT_EQ(*(*store)->CollectGarbage(absl::ZeroDuration()), 0u);
  ASSERT_TRUE((*store)->DeleteBatch("1").ok());
  EXPECT_EQ(*(*store)->CollectGarbage(absl::ZeroDuration()), 0u);
  ASSERT_TRUE((*store)->DeleteBatch("2").ok());
  EXPECT_EQ(*(*store)->CollectGarbage(absl::ZeroDuration()), 1u);
  EXPECT_TRUE(absl::IsNotFound((*store)->GetArtifact(summary_digest).status()));
}

TEST(SqliteJobStoreTest, SecondOpenOfALockedStateDirNamesTheHolder) {
  std::string dir = MakeTempDir();
  auto first = SqliteJobStore::Open(dir);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = SqliteJobStore::Open(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(),
              testing::HasSubstr(absl::StrCat("pid ", getpid(), " holds")));
  first->reset();  // the lock goes with the store
  EXPECT_TRUE(SqliteJobStore::Open(dir).ok());
}

TEST(SqliteJobStoreTest, EmptyDatabaseBesideArtifactsIsRefused) {
  std::string dir = MakeTempDir();
  {
    auto store = SqliteJobStore::Open(dir);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->CreateBatch(SampleBatch("1")).ok());
    ASSERT_TRUE((*store)->PutArtifact("profile bytes").ok());
  }
  std::filesystem::resize_file(dir + "/state.db", 0);
  std::filesystem::remove(dir + "/state.db-wal");
  auto reopened = SqliteJobStore::Open(dir);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(reopened.status().message(), testing::HasSubstr("state.db is empty"));
  std::filesystem::remove(dir + "/state.db");
  EXPECT_THAT(SqliteJobStore::Open(dir).status().message(), testing::HasSubstr("is missing"));
  // A brand-new directory is fine.
  EXPECT_TRUE(SqliteJobStore::Open(MakeTempDir()).ok());
}

TEST(InMemoryJobStoreTest, RoundTripsJobUpdates) {
  InMemoryJobStore store;
  ASSERT_TRUE(store.CreateBatch(SampleBatch("1")).ok());
  JobRecord job = SampleBatch("1").jobs[2];
  job.state = v1::JOB_STATE_FAILED;
  job.error = "boom";
  job.spec.clear_source();
  ASSERT_TRUE(store.UpdateJob("1", job).ok());
  auto batch = store.GetBatch("1");
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->jobs[2].error, "boom");
  EXPECT_EQ(batch->jobs[2].spec.source(),
            "begin push.1 end");  // the spec is not updated
  EXPECT_TRUE(absl::IsAlreadyExists(store.CreateBatch(SampleBatch("1"))));
}

}  // namespace
}  // namespace flamefleet::coordinator
