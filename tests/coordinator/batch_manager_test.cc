// BatchManager driven directly, without gRPC: the batch lifecycle (submit, lease, complete,
// cancel, end of batch), retention, the result cache and artifact derivation, over an
// InMemoryJobStore, the in-process renderer and a FakeClock.
#include "coordinator/batch_manager.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "coordinator/clock.h"
#include "coordinator/job_store.h"
#include "coordinator/render_client.h"
#include "coordinator/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/profile_proto.h"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/status_matchers.h"

namespace flamefleet::coordinator {
namespace {

using ::testing::HasSubstr;
using testutil::FromFolded;
using testutil::StatusIs;
using testutil::ToFolded;

// A batch of `jobs` jobs named job<i>.masm. Jobs of the same index and `variant` are the
// same program (so the result cache knows them); other variants are other programs.
v1::SubmitBatchRequest Request(int jobs, int variant = 0) {
  v1::SubmitBatchRequest request;
  for (int i = 0; i < jobs; ++i) {
    v1::JobSpec* job = request.add_jobs();
    job->set_name(absl::StrCat("job", i, ".masm"));
    job->set_source(absl::StrCat("begin push.", variant * 100 + i, " drop end"));
  }
  (*request.mutable_labels())["suite"] = "nightly";
  return request;
}

class BatchManagerTest : public ::testing::Test {
 protected:
  BatchManagerTest() { Start({}); }
  ~BatchManagerTest() override { manager_->Shutdown(); }

  // (Re)creates the manager with `options` (no sweeper thread) over the same store.
  void Start(BatchManagerOptions options) {
    if (manager_) manager_->Shutdown();
    manager_.reset();
    options.sweep_interval = absl::ZeroDuration();
    scheduler_ = std::make_unique<JobScheduler>(
        &clock_, SchedulerOptions{.lease_duration = absl::Seconds(10), .max_lost_leases = 3});
    manager_ =
        std::make_unique<BatchManager>(&store_, scheduler_.get(), &render_, &clock_, options);
    ASSERT_OK(manager_->Recover());
  }

  std::optional<v1::Task> Lease() {
    absl::StatusOr<std::optional<v1::Task>> task =
        manager_->LeaseTask("w1", absl::ZeroDuration(), {});
    EXPECT_OK(task);
    return task.ok() ? *task : std::nullopt;
  }

  // Completes `task` as succeeded with the profile of `folded`.
  absl::StatusOr<bool> Complete(const v1::Task& task, const std::string& folded) {
    const std::string bytes = profile::SerializeProfile(FromFolded(folded));
    v1::TaskHeader header;
    header.set_task_id(task.task_id());
    header.set_lease_id(task.lease_id());
    header.set_succeeded(true);
    header.set_cycles(FromFolded(folded).total());
    header.add_stack(7);
    header.set_profile_bytes(bytes.size());
    return manager_->CompleteTask(header, bytes);
  }

  // Leases and completes every queued task, job i with "$main;<job name> <10 * (i + 1)>".
  void RunAll() {
    while (std::optional<v1::Task> task = Lease()) {
      const std::string& task_id = task->task_id();
      uint64_t index = 0;
      ASSERT_TRUE(absl::SimpleAtoi(task_id.substr(task_id.rfind('/') + 1), &index)) << task_id;
      ASSERT_OK_AND_ASSIGN(
          bool accepted,
          Complete(*task, absl::StrCat("$main;", task->job().name(), " ", 10 * (index + 1), "\n")));
      EXPECT_TRUE(accepted);
    }
  }

  FakeClock clock_;
  InMemoryJobStore store_;
  InProcessRenderClient render_;
  std::unique_ptr<JobScheduler> scheduler_;
  std::unique_ptr<BatchManager> manager_;
};

TEST_F(BatchManagerTest, SubmitLeaseCompleteEndsTheBatchWithTheMergedProfile) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(2)));
  ASSERT_OK_AND_ASSIGN(v1::Batch running, manager_->GetBatch(id, /*with_jobs=*/false));
  EXPECT_EQ(running.state(), v1::BATCH_STATE_RUNNING);
  EXPECT_EQ(running.jobs_queued(), 2u);
  EXPECT_THAT(manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_FOLDED),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is still running")));

  std::optional<v1::Task> first = Lease();
  std::optional<v1::Task> second = Lease();
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_FALSE(Lease().has_value());
  EXPECT_EQ(manager_->GetBatch(id, false)->jobs_running(), 2u);
  ASSERT_OK_AND_ASSIGN(bool accepted, Complete(*first, "$main;a 10\n"));
  EXPECT_TRUE(accepted);
  EXPECT_EQ(manager_->GetBatch(id, false)->state(), v1::BATCH_STATE_RUNNING);
  ASSERT_OK_AND_ASSIGN(accepted, Complete(*second, "$main;b 5\n"));
  EXPECT_TRUE(accepted);

  ASSERT_OK_AND_ASSIGN(v1::Batch ended, manager_->GetBatch(id, /*with_jobs=*/true));
  EXPECT_EQ(ended.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(ended.jobs_succeeded(), 2u);
  EXPECT_EQ(ended.aggregate_cycles(), 15u);
  ASSERT_EQ(ended.jobs_size(), 2);
  EXPECT_EQ(ended.jobs(0).attempts(), 1u);
  EXPECT_THAT(ended.jobs(0).stack(), ::testing::ElementsAre(7u));
  ASSERT_OK_AND_ASSIGN(std::string folded,
                       manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_FOLDED));
  EXPECT_EQ(folded, "$main;a 10\n$main;b 5\n");
  ASSERT_OK_AND_ASSIGN(std::string bytes,
                       manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_PROFILE));
  ASSERT_OK_AND_ASSIGN(profile::Profile aggregate, profile::ParseProfile(bytes));
  EXPECT_EQ(ToFolded(aggregate), folded);
  // Rendered when the batch ended, so the SVG is already indexed.
  EXPECT_OK(store_.FindArtifact(id, "", v1::ARTIFACT_FORMAT_SVG));
  ASSERT_OK_AND_ASSIGN(std::string svg, manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_SVG));
  EXPECT_THAT(svg, HasSubstr("<svg"));

  // The by-job aggregate, stored from the same merge: each job's name is a root frame whose
  // cycles are the job's.
  EXPECT_OK(store_.FindArtifact(id, kByJobArtifactKey, v1::ARTIFACT_FORMAT_PROFILE));
  ASSERT_OK_AND_ASSIGN(
      std::string by_job,
      manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_FOLDED, v1::AGGREGATE_VIEW_BY_JOB));
  EXPECT_EQ(by_job, absl::StrCat(ended.jobs(0).name(), ";$main;a 10\n", ended.jobs(1).name(),
                                 ";$main;b 5\n"));
  ASSERT_OK_AND_ASSIGN(
      std::string by_job_svg,
      manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_SVG, v1::AGGREGATE_VIEW_BY_JOB));
  EXPECT_THAT(by_job_svg, HasSubstr(" by job"));
  EXPECT_THAT(manager_->FetchArtifact(id, ended.jobs(0).name(), v1::ARTIFACT_FORMAT_FOLDED,
                                      v1::AGGREGATE_VIEW_BY_JOB),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("view")));
}

TEST_F(BatchManagerTest, LeasedJobsCarryTheDialectTheyRunUnder) {
  v1::SubmitBatchRequest request = Request(3);
  request.mutable_options()->set_dialect("0.16");  // the batch's, spelled without the v
  request.mutable_jobs(1)->set_dialect("v0.16");   // a job's own
  ASSERT_OK(manager_->SubmitBatch(request));
  v1::SubmitBatchRequest unnamed = Request(1, /*variant=*/1);  // no dialect anywhere
  ASSERT_OK(manager_->SubmitBatch(unnamed));
  int classic = 0;
  int current = 0;
  while (std::optional<v1::Task> task = Lease()) {
    // The batch that names none runs under the default, and its tasks say so.
    const bool unnamed_batch = task->job().source() == unnamed.jobs(0).source();
    EXPECT_EQ(task->job().dialect(), unnamed_batch ? "v0.25" : "v0.16") << task->task_id();
    ++(unnamed_batch ? current : classic);
  }
  EXPECT_EQ(classic, 3);
  EXPECT_EQ(current, 1);
}

TEST_F(BatchManagerTest, UnknownDialectIsRefusedNamingTheField) {
  v1::SubmitBatchRequest request = Request(2);
  request.mutable_jobs(1)->set_dialect("v0.99");
  EXPECT_THAT(manager_->SubmitBatch(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("jobs[1].dialect: unknown dialect 'v0.99'")));
  EXPECT_FALSE(Lease().has_value());  // nothing of the refused batch was queued
}

TEST_F(BatchManagerTest, DuplicateCompletionIsMergedExactlyOnce) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(2)));
  std::optional<v1::Task> first = Lease();
  std::optional<v1::Task> second = Lease();
  ASSERT_TRUE(first.has_value() && second.has_value());
  ASSERT_OK_AND_ASSIGN(bool accepted, Complete(*first, "$main;a 10\n"));
  EXPECT_TRUE(accepted);
  // The same result again (a retried upload): ignored, not counted twice.
  ASSERT_OK_AND_ASSIGN(accepted, Complete(*first, "$main;a 10\n"));
  EXPECT_FALSE(accepted);
  ASSERT_OK_AND_ASSIGN(accepted, Complete(*second, "$main;b 5\n"));
  EXPECT_TRUE(accepted);
  ASSERT_OK_AND_ASSIGN(accepted, Complete(*second, "$main;b 5\n"));
  EXPECT_FALSE(accepted);
  ASSERT_OK_AND_ASSIGN(v1::Batch batch, manager_->GetBatch(id, false));
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(batch.aggregate_cycles(), 15u);
  ASSERT_OK_AND_ASSIGN(std::string folded,
                       manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_FOLDED));
  EXPECT_EQ(folded, "$main;a 10\n$main;b 5\n");
}

TEST_F(BatchManagerTest, LateResultOfAnExpiredLeaseIsIgnored) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(1)));
  std::optional<v1::Task> lost = Lease();
  ASSERT_TRUE(lost.has_value());
  clock_.Advance(absl::Seconds(11));
  manager_->SweepExpiredLeases();
  EXPECT_EQ(manager_->GetBatch(id, false)->jobs_queued(), 1u);
  std::optional<v1::Task> retry = Lease();
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->attempt(), 2u);
  ASSERT_OK_AND_ASSIGN(bool accepted, Complete(*retry, "$main 4\n"));
  EXPECT_TRUE(accepted);
  ASSERT_OK_AND_ASSIGN(accepted, Complete(*lost, "$main 4\n"));
  EXPECT_FALSE(accepted);
  ASSERT_OK_AND_ASSIGN(v1::Batch batch, manager_->GetBatch(id, true));
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(batch.aggregate_cycles(), 4u);
  EXPECT_EQ(batch.jobs(0).attempts(), 2u);
}

TEST_F(BatchManagerTest, CancelEndsEveryUnfinishedJobAndLeavesNoAggregate) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(3)));
  std::optional<v1::Task> done = Lease();
  std::optional<v1::Task> running = Lease();
  ASSERT_TRUE(done.has_value() && running.has_value());
  ASSERT_OK_AND_ASSIGN(bool accepted, Complete(*done, "$main 3\n"));
  EXPECT_TRUE(accepted);

  ASSERT_OK_AND_ASSIGN(v1::Batch cancelled, manager_->CancelBatch(id));
  EXPECT_EQ(cancelled.state(), v1::BATCH_STATE_CANCELLED);
  EXPECT_EQ(cancelled.jobs_succeeded(), 1u);
  EXPECT_EQ(cancelled.jobs_cancelled(), 2u);
  EXPECT_NE(cancelled.finished_unix_ms(), 0);
  EXPECT_FALSE(Lease().has_value());
  // The running job's lease is gone: its result is not accepted.
  ASSERT_OK_AND_ASSIGN(accepted, Complete(*running, "$main 3\n"));
  EXPECT_FALSE(accepted);
  EXPECT_THAT(manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_FOLDED),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "batch " + id + " was cancelled; it has no aggregate"));
  // The job that finished first keeps its result.
  ASSERT_OK_AND_ASSIGN(std::string folded,
                       manager_->FetchArtifact(id, done->job().name(), v1::ARTIFACT_FORMAT_FOLDED));
  EXPECT_EQ(folded, "$main 3\n");
  // Cancelling again changes nothing.
  ASSERT_OK_AND_ASSIGN(v1::Batch again, manager_->CancelBatch(id));
  EXPECT_EQ(again.finished_unix_ms(), cancelled.finished_unix_ms());
  EXPECT_THAT(manager_->CancelBatch("404"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(BatchManagerTest, RetentionRemovesBatchesThatEndedBeforeKeepFor) {
  Start({.keep_for = absl::Hours(1)});
  v1::SubmitBatchRequest request = Request(1);
  request.set_request_id("nightly-1");
  ASSERT_OK_AND_ASSIGN(std::string old_id, manager_->SubmitBatch(request));
  RunAll();
  clock_.Advance(absl::Minutes(30));
  ASSERT_OK_AND_ASSIGN(std::string recent_id, manager_->SubmitBatch(Request(2, 1)));
  RunAll();
  ASSERT_OK_AND_ASSIGN(std::string running_id, manager_->SubmitBatch(Request(3, 2)));
  EXPECT_EQ(manager_->PruneExpiredBatches(), 0u);  // nothing ended an hour ago yet

  clock_.Advance(absl::Minutes(40));
  EXPECT_EQ(manager_->PruneExpiredBatches(), 1u);
  EXPECT_THAT(manager_->GetBatch(old_id, false), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store_.GetBatch(old_id), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_OK(manager_->GetBatch(recent_id, false));
  EXPECT_OK(manager_->GetBatch(running_id, false));
  // Its request id and its cached result are forgotten with it: the same request makes a new
  // batch whose job runs again.
  ASSERT_OK_AND_ASSIGN(std::string again, manager_->SubmitBatch(request));
  EXPECT_NE(again, old_id);
  ASSERT_OK_AND_ASSIGN(v1::Batch batch, manager_->GetBatch(again, true));
  EXPECT_EQ(batch.jobs(0).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(batch.jobs(0).cached_from(), "");

  clock_.Advance(absl::Hours(24));  // the running batch is never removed
  EXPECT_EQ(manager_->PruneExpiredBatches(), 1u);
  EXPECT_OK(manager_->GetBatch(running_id, false));
}

TEST_F(BatchManagerTest, RetentionIsOffWithoutKeepFor) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(1)));
  RunAll();
  clock_.Advance(absl::Hours(24 * 365));
  EXPECT_EQ(manager_->PruneExpiredBatches(), 0u);
  EXPECT_OK(manager_->GetBatch(id, false));
}

TEST_F(BatchManagerTest, IdenticalJobIsAnsweredFromTheResultCache) {
  ASSERT_OK_AND_ASSIGN(std::string first, manager_->SubmitBatch(Request(2)));
  RunAll();
  // Same jobs: both come from the cache, so the batch ends at once and nothing is leased.
  ASSERT_OK_AND_ASSIGN(std::string second, manager_->SubmitBatch(Request(2)));
  EXPECT_NE(second, first);
  EXPECT_FALSE(Lease().has_value());
  ASSERT_OK_AND_ASSIGN(v1::Batch cached, manager_->GetBatch(second, true));
  EXPECT_EQ(cached.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(cached.aggregate_cycles(), 30u);
  EXPECT_EQ(cached.jobs(0).cached_from(), first + "/job0.masm");
  EXPECT_EQ(cached.jobs(1).cached_from(), first + "/job1.masm");
  EXPECT_EQ(cached.jobs(1).cycles(), 20u);
  EXPECT_EQ(cached.jobs(1).attempts(), 0u);
  EXPECT_EQ(*manager_->FetchArtifact(second, "", v1::ARTIFACT_FORMAT_FOLDED),
            *manager_->FetchArtifact(first, "", v1::ARTIFACT_FORMAT_FOLDED));

  // A new job next to a known one: only the new one runs.
  v1::SubmitBatchRequest mixed = Request(3);
  ASSERT_OK_AND_ASSIGN(std::string third, manager_->SubmitBatch(mixed));
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->job().name(), "job2.masm");
  EXPECT_FALSE(Lease().has_value());

  // no_cache runs everything.
  v1::SubmitBatchRequest fresh = Request(2);
  fresh.mutable_options()->set_no_cache(true);
  ASSERT_OK_AND_ASSIGN(std::string fourth, manager_->SubmitBatch(fresh));
  EXPECT_EQ(manager_->GetBatch(fourth, false)->jobs_queued(), 2u);
}

TEST_F(BatchManagerTest, JobArtifactsAreDerivedOnFirstFetchAndStored) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(2)));
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task.has_value());
  const std::string name = task->job().name();
  EXPECT_THAT(manager_->FetchArtifact(id, name, v1::ARTIFACT_FORMAT_FOLDED),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "job \"" + name + "\" is JOB_STATE_RUNNING; no result yet"));
  ASSERT_OK_AND_ASSIGN(bool accepted, Complete(*task, "$main;f 6\n$main 1\n"));
  EXPECT_TRUE(accepted);
  EXPECT_OK(store_.FindArtifact(id, name, v1::ARTIFACT_FORMAT_PROFILE));
  EXPECT_THAT(store_.FindArtifact(id, name, v1::ARTIFACT_FORMAT_FOLDED),
              StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(std::string folded,
                       manager_->FetchArtifact(id, name, v1::ARTIFACT_FORMAT_FOLDED));
  EXPECT_EQ(folded, "$main 1\n$main;f 6\n");
  ASSERT_OK_AND_ASSIGN(std::string digest,
                       store_.FindArtifact(id, name, v1::ARTIFACT_FORMAT_FOLDED));
  ASSERT_OK_AND_ASSIGN(std::string stored, store_.GetArtifact(digest));
  EXPECT_EQ(stored, folded);
  ASSERT_OK_AND_ASSIGN(std::string svg, manager_->FetchArtifact(id, name, v1::ARTIFACT_FORMAT_SVG));
  EXPECT_THAT(svg, HasSubstr(name));  // titled with the job name
  EXPECT_OK(store_.FindArtifact(id, name, v1::ARTIFACT_FORMAT_SVG));
  EXPECT_THAT(manager_->FetchArtifact(id, "nope.masm", v1::ARTIFACT_FORMAT_SVG),
              StatusIs(absl::StatusCode::kNotFound, "batch " + id + " has no job \"nope.masm\""));
}

TEST_F(BatchManagerTest, AggregateMergesEndedBatchesWithTheLabels) {
  ASSERT_OK_AND_ASSIGN(std::string a, manager_->SubmitBatch(Request(1)));
  RunAll();
  v1::SubmitBatchRequest other = Request(2);
  other.mutable_options()->set_no_cache(true);
  ASSERT_OK_AND_ASSIGN(std::string b, manager_->SubmitBatch(other));
  RunAll();
  v1::SubmitBatchRequest unlabelled = Request(1);
  unlabelled.clear_labels();
  unlabelled.mutable_options()->set_no_cache(true);
  ASSERT_OK_AND_ASSIGN(std::string c, manager_->SubmitBatch(unlabelled));
  RunAll();
  ASSERT_OK_AND_ASSIGN(std::string running, manager_->SubmitBatch(Request(4)));

  v1::AggregateRequest request;
  (*request.mutable_labels())["suite"] = "nightly";
  request.set_format(v1::ARTIFACT_FORMAT_FOLDED);
  ASSERT_OK_AND_ASSIGN(AggregateResult result, manager_->Aggregate(request));
  EXPECT_THAT(result.batch_ids, ::testing::ElementsAre(a, b));
  EXPECT_EQ(result.jobs, 3u);
  EXPECT_EQ(result.cycles, 40u);
  EXPECT_EQ(result.data, "$main;job0.masm 20\n$main;job1.masm 20\n");

  (*request.mutable_labels())["suite"] = "weekly";
  EXPECT_THAT(
      manager_->Aggregate(request),
      StatusIs(absl::StatusCode::kNotFound, "no ended batch matches the labels and time window"));
  request.set_format(static_cast<v1::ArtifactFormat>(99));
  EXPECT_THAT(manager_->Aggregate(request),
              StatusIs(absl::StatusCode::kInvalidArgument, "format: unknown value 99"));
}

TEST_F(BatchManagerTest, ListBatchesIsNewestFirstAndFiltersByState) {
  ASSERT_OK_AND_ASSIGN(std::string a, manager_->SubmitBatch(Request(1)));
  RunAll();
  ASSERT_OK_AND_ASSIGN(std::string b, manager_->SubmitBatch(Request(2)));
  v1::ListBatchesRequest request;
  std::vector<v1::Batch> all = manager_->ListBatches(request);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].batch_id(), b);
  EXPECT_EQ(all[1].batch_id(), a);
  EXPECT_EQ(all[0].jobs_size(), 0);  // no job lists
  request.set_state(v1::BATCH_STATE_SUCCEEDED);
  std::vector<v1::Batch> ended = manager_->ListBatches(request);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].batch_id(), a);
}

TEST_F(BatchManagerTest, RecoverRequeuesUnfinishedJobsWithTheirAttempts) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(2)));
  std::optional<v1::Task> done = Lease();
  ASSERT_TRUE(done.has_value());
  ASSERT_OK_AND_ASSIGN(bool accepted, Complete(*done, "$main 9\n"));
  EXPECT_TRUE(accepted);
  ASSERT_TRUE(Lease().has_value());  // RUNNING when the coordinator goes away
  Start({});
  ASSERT_OK_AND_ASSIGN(v1::Batch batch, manager_->GetBatch(id, true));
  EXPECT_EQ(batch.jobs_succeeded(), 1u);
  EXPECT_EQ(batch.jobs_queued(), 1u);
  std::optional<v1::Task> again = Lease();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->attempt(), 2u);
  ASSERT_OK_AND_ASSIGN(accepted, Complete(*again, "$main 1\n"));
  EXPECT_TRUE(accepted);
  ASSERT_OK_AND_ASSIGN(batch, manager_->GetBatch(id, false));
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(batch.aggregate_cycles(), 10u);
  // A new batch gets an id after the recovered ones.
  ASSERT_OK_AND_ASSIGN(std::string next, manager_->SubmitBatch(Request(1)));
  EXPECT_NE(next, id);
}

// ---- job summaries (FetchArtifact SUMMARY)

// A valid summary of job `name` that ran `cycles` cycles in one procedure.
v1::JobSummary Summary(const std::string& name, uint64_t cycles) {
  v1::JobSummary s;
  s.set_job(name);
  s.set_program_digest("0x" + std::string(64, 'a'));
  s.set_dialect("v0.16");
  s.set_inputs_digest("blake3:" + std::string(64, 'b'));
  s.set_cycles(cycles);
  s.add_final_stack(7);
  v1::SummaryProcedure* p = s.add_procedures();
  p->set_name("$main");
  p->set_calls(1);
  p->set_self(cycles);
  p->set_inclusive(cycles);
  return s;
}

v1::TaskHeader Header(const v1::Task& task, uint64_t cycles, const std::string& profile) {
  v1::TaskHeader header;
  header.set_task_id(task.task_id());
  header.set_lease_id(task.lease_id());
  header.set_succeeded(true);
  header.set_cycles(cycles);
  header.set_profile_bytes(profile.size());
  return header;
}

TEST_F(BatchManagerTest, SummariesAreServedPerJobAndPerBatchAndCopiedForCacheHits) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(2)));
  // While it runs: every job listed, none with a summary.
  ASSERT_OK_AND_ASSIGN(std::string running,
                       manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_SUMMARY));
  v1::BatchSummary batch;
  ASSERT_TRUE(batch.ParseFromString(running));
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_RUNNING);
  ASSERT_EQ(batch.jobs_size(), 2);
  EXPECT_EQ(batch.jobs(1).state(), v1::JOB_STATE_QUEUED);
  EXPECT_FALSE(batch.jobs(1).has_summary());
  EXPECT_THAT(manager_->FetchArtifact(id, "job0.masm", v1::ARTIFACT_FORMAT_SUMMARY),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no result yet")));

  while (std::optional<v1::Task> task = Lease()) {
    const std::string profile = profile::SerializeProfile(FromFolded("$main 10\n"));
    const bool first = task->job().name() == "job0.masm";
    const std::string summary =
        first ? Summary(task->job().name(), 10).SerializeAsString() : std::string();
    ASSERT_OK_AND_ASSIGN(bool accepted,
                         manager_->CompleteTask(Header(*task, 10, profile), profile, summary));
    EXPECT_TRUE(accepted);
  }
  ASSERT_OK_AND_ASSIGN(std::string one,
                       manager_->FetchArtifact(id, "job0.masm", v1::ARTIFACT_FORMAT_SUMMARY));
  v1::JobSummary job;
  ASSERT_TRUE(job.ParseFromString(one));
  EXPECT_EQ(job.SerializeAsString(), Summary("job0.masm", 10).SerializeAsString());
  EXPECT_THAT(manager_->FetchArtifact(id, "job1.masm", v1::ARTIFACT_FORMAT_SUMMARY),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("has no summary")));
  EXPECT_THAT(manager_->FetchArtifact(id, "nope.masm", v1::ARTIFACT_FORMAT_SUMMARY),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("has no job")));
  EXPECT_THAT(manager_->FetchArtifact("999", "", v1::ARTIFACT_FORMAT_SUMMARY),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(
      manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_SUMMARY, v1::AGGREGATE_VIEW_BY_JOB),
      StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(std::string ended,
                       manager_->FetchArtifact(id, "", v1::ARTIFACT_FORMAT_SUMMARY));
  ASSERT_TRUE(batch.ParseFromString(ended));
  EXPECT_EQ(batch.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_TRUE(batch.jobs(0).has_summary());
  EXPECT_FALSE(batch.jobs(1).has_summary());

  // The same program under another name comes from the cache with the same summary, named
  // after the job that reused it.
  v1::SubmitBatchRequest renamed = Request(1);
  renamed.mutable_jobs(0)->set_name("renamed.masm");
  ASSERT_OK_AND_ASSIGN(std::string cached, manager_->SubmitBatch(renamed));
  EXPECT_FALSE(Lease().has_value());
  ASSERT_OK_AND_ASSIGN(std::string hit, manager_->FetchArtifact(cached, "renamed.masm",
                                                                v1::ARTIFACT_FORMAT_SUMMARY));
  ASSERT_TRUE(job.ParseFromString(hit));
  EXPECT_EQ(job.SerializeAsString(), Summary("renamed.masm", 10).SerializeAsString());
  EXPECT_THAT(manager_->Aggregate([] {
    v1::AggregateRequest r;
    r.set_format(v1::ARTIFACT_FORMAT_SUMMARY);
    return r;
  }()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("SUMMARY is per batch")));
}

TEST_F(BatchManagerTest, ASummaryThatDoesNotFitTheResultIsRefusedAndTheLeaseStaysLive) {
  ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(Request(1)));
  std::optional<v1::Task> task = Lease();
  ASSERT_TRUE(task.has_value());
  const std::string profile = profile::SerializeProfile(FromFolded("$main 10\n"));
  const v1::TaskHeader header = Header(*task, 10, profile);
  v1::JobSummary bad = Summary("job0.masm", 10);
  bad.mutable_procedures(0)->set_self(9);
  EXPECT_THAT(manager_->CompleteTask(header, profile, bad.SerializeAsString()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("summary_data: summary: procedures: self cycles sum to 9")));
  EXPECT_THAT(manager_->CompleteTask(header, profile, Summary("other", 10).SerializeAsString()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("names job \"other\"")));
  EXPECT_THAT(
      manager_->CompleteTask(header, profile, Summary("job0.masm", 11).SerializeAsString()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("differs from header.cycles")));
  EXPECT_THAT(manager_->CompleteTask(header, profile, "\xff\xff"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JobSummary")));
  ASSERT_OK_AND_ASSIGN(
      bool accepted,
      manager_->CompleteTask(header, profile, Summary("job0.masm", 10).SerializeAsString()));
  EXPECT_TRUE(accepted);
  EXPECT_OK(manager_->FetchArtifact(id, "job0.masm", v1::ARTIFACT_FORMAT_SUMMARY).status());
}

TEST_F(BatchManagerTest, PhasesAndMarkersArePartOfTheResultCacheKey) {
  v1::SubmitBatchRequest request = Request(1);
  request.mutable_options()->add_phases("a=b");
  ASSERT_OK_AND_ASSIGN(std::string first, manager_->SubmitBatch(request));
  RunAll();
  ASSERT_OK_AND_ASSIGN(std::string same, manager_->SubmitBatch(request));
  EXPECT_EQ(manager_->GetBatch(same, false)->jobs_queued(), 0u);  // from the cache
  for (auto change : {+[](v1::BatchOptions& o) { o.set_phases(0, "a=c"); },
                      +[](v1::BatchOptions& o) { o.clear_phases(); },
                      +[](v1::BatchOptions& o) { o.add_markers("app::"); }}) {
    v1::SubmitBatchRequest other = request;
    change(*other.mutable_options());
    ASSERT_OK_AND_ASSIGN(std::string id, manager_->SubmitBatch(other));
    EXPECT_EQ(manager_->GetBatch(id, false)->jobs_queued(), 1u) << other.options().DebugString();
  }
}

}  // namespace
}  // namespace flamefleet::coordinator
