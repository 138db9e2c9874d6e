#include "coordinator/run_history.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "coordinator/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace flamefleet::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

JobRecord Job(uint32_t index, v1::JobState state, uint64_t cycles = 0,
              const std::string& digest = "") {
  JobRecord job;
  job.index = index;
  job.spec.set_name(absl::StrCat("job", index, ".masm"));
  job.state = state;
  job.cycles = cycles;
  job.profile_digest = digest;
  return job;
}

// A batch `id` created at kT0 + `created_s` seconds; ended at `finished_s` unless running.
BatchRecord Batch(const std::string& id, v1::BatchState state, int created_s, int finished_s = 0,
                  std::vector<JobRecord> jobs = {}) {
  BatchRecord record;
  record.id = id;
  record.state = state;
  record.created = kT0 + absl::Seconds(created_s);
  if (state != v1::BATCH_STATE_RUNNING) record.finished = kT0 + absl::Seconds(finished_s);
  record.labels["suite"] = "nightly";
  record.jobs = std::move(jobs);
  return record;
}

std::vector<std::string> Ids(const std::vector<v1::Batch>& batches) {
  std::vector<std::string> ids;
  for (const v1::Batch& batch : batches) ids.push_back(batch.batch_id());
  return ids;
}

TEST(RunHistoryTest, AddCountsJobsAndMovesTheNextIdPastNumericIds) {
  RunHistory history;
  EXPECT_EQ(history.next_id(), 1u);
  BatchRecord record = Batch("7", v1::BATCH_STATE_RUNNING, 0, 0,
                             {Job(0, v1::JOB_STATE_SUCCEEDED, 30, "d0"),
                              Job(1, v1::JOB_STATE_QUEUED), Job(2, v1::JOB_STATE_SUCCEEDED, 12)});
  record.request_id = "nightly-1";
  BatchEntry* entry = history.Add(std::move(record));
  EXPECT_EQ(history.next_id(), 8u);
  EXPECT_EQ(history.size(), 1u);
  EXPECT_EQ(history.Find("7"), entry);
  EXPECT_EQ(history.Find("8"), nullptr);
  EXPECT_EQ(entry->counts[v1::JOB_STATE_SUCCEEDED], 2u);
  EXPECT_EQ(entry->counts[v1::JOB_STATE_QUEUED], 1u);
  EXPECT_EQ(entry->aggregate_cycles, 42u);
  EXPECT_EQ(entry->job_by_name.at("job1.masm"), 1u);
  ASSERT_NE(history.FindRequest("nightly-1"), nullptr);
  EXPECT_EQ(*history.FindRequest("nightly-1"), "7");
  EXPECT_EQ(history.FindRequest("nightly-2"), nullptr);
  history.Add(Batch("3", v1::BATCH_STATE_RUNNING, 1));  // lower: next_id stays
  history.Add(Batch("x", v1::BATCH_STATE_RUNNING, 2));  // not numeric
  EXPECT_EQ(history.next_id(), 8u);
}

TEST(RunHistoryTest, ToProtoShowsCountsAndJobsOnRequest) {
  RunHistory history;
  BatchEntry* entry = history.Add(
      Batch("1", v1::BATCH_STATE_SUCCEEDED, 1, 5, {Job(0, v1::JOB_STATE_SUCCEEDED, 9, "d")}));
  entry->record.jobs[0].cached_from = "0/job0.masm";
  v1::Batch brief = entry->ToProto(/*with_jobs=*/false);
  EXPECT_EQ(brief.batch_id(), "1");
  EXPECT_EQ(brief.state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(brief.created_unix_ms(), absl::ToUnixMillis(kT0 + absl::Seconds(1)));
  EXPECT_EQ(brief.finished_unix_ms(), absl::ToUnixMillis(kT0 + absl::Seconds(5)));
  EXPECT_EQ(brief.jobs_total(), 1u);
  EXPECT_EQ(brief.jobs_succeeded(), 1u);
  EXPECT_EQ(brief.aggregate_cycles(), 9u);
  EXPECT_EQ(brief.labels().at("suite"), "nightly");
  EXPECT_EQ(brief.jobs_size(), 0);
  v1::Batch full = entry->ToProto(/*with_jobs=*/true);
  ASSERT_EQ(full.jobs_size(), 1);
  EXPECT_EQ(full.jobs(0).name(), "job0.masm");
  EXPECT_EQ(full.jobs(0).cached_from(), "0/job0.masm");
  EXPECT_EQ(history.Add(Batch("2", v1::BATCH_STATE_RUNNING, 2))->ToProto(false).finished_unix_ms(),
            0);
}

TEST(RunHistoryTest, ListIsNewestFirstFilteredAndLimited) {
  RunHistory history;
  history.Add(Batch("1", v1::BATCH_STATE_SUCCEEDED, 10, 11));
  history.Add(Batch("2", v1::BATCH_STATE_FAILED, 20, 21));
  BatchRecord other = Batch("3", v1::BATCH_STATE_RUNNING, 30);
  other.labels["suite"] = "weekly";
  history.Add(std::move(other));
  history.Add(Batch("4", v1::BATCH_STATE_RUNNING, 40));

  v1::ListBatchesRequest request;
  EXPECT_THAT(Ids(history.List(request)), ElementsAre("4", "3", "2", "1"));
  request.set_limit(2);
  EXPECT_THAT(Ids(history.List(request)), ElementsAre("4", "3"));
  request.set_limit(0);
  (*request.mutable_labels())["suite"] = "nightly";
  EXPECT_THAT(Ids(history.List(request)), ElementsAre("4", "2", "1"));
  request.set_state(v1::BATCH_STATE_RUNNING);
  EXPECT_THAT(Ids(history.List(request)), ElementsAre("4"));
  request.set_state(v1::BATCH_STATE_UNSPECIFIED);
  request.set_since_unix_ms(absl::ToUnixMillis(kT0 + absl::Seconds(20)));
  EXPECT_THAT(Ids(history.List(request)), ElementsAre("4", "2"));
}

TEST(RunHistoryTest, ListIsClampedToMaxListedBatches) {
  RunHistory history;
  for (size_t i = 1; i <= kMaxListedBatches + 1; ++i) {
    history.Add(Batch(std::to_string(i), v1::BATCH_STATE_RUNNING, 0));
  }
  v1::ListBatchesRequest request;
  EXPECT_EQ(history.List(request).size(), 100u);
  request.set_limit(100000);
  EXPECT_EQ(history.List(request).size(), kMaxListedBatches);
}

TEST(RunHistoryTest, SelectForAggregateTakesSucceededJobsOfEndedBatchesInTheWindow) {
  RunHistory history;
  history.Add(
      Batch("1", v1::BATCH_STATE_SUCCEEDED, 10, 11,
            {Job(0, v1::JOB_STATE_SUCCEEDED, 5, "a"), Job(1, v1::JOB_STATE_SUCCEEDED, 5, "b")}));
  history.Add(Batch("2", v1::BATCH_STATE_FAILED, 20, 21,
                    {Job(0, v1::JOB_STATE_FAILED), Job(1, v1::JOB_STATE_SUCCEEDED, 5, "c")}));
  history.Add(
      Batch("3", v1::BATCH_STATE_CANCELLED, 30, 31, {Job(0, v1::JOB_STATE_SUCCEEDED, 5, "d")}));
  history.Add(
      Batch("4", v1::BATCH_STATE_RUNNING, 40, 0, {Job(0, v1::JOB_STATE_SUCCEEDED, 5, "e")}));
  BatchRecord weekly =
      Batch("5", v1::BATCH_STATE_SUCCEEDED, 50, 51, {Job(0, v1::JOB_STATE_SUCCEEDED, 5, "f")});
  weekly.labels["suite"] = "weekly";
  history.Add(std::move(weekly));

  v1::AggregateRequest request;
  (*request.mutable_labels())["suite"] = "nightly";
  AggregateSelection selection = history.SelectForAggregate(request);
  EXPECT_THAT(selection.batch_ids, ElementsAre("1", "2"));
  EXPECT_THAT(selection.profiles,
              ElementsAre(Pair("1/0", "a"), Pair("1/1", "b"), Pair("2/1", "c")));

  request.set_since_unix_ms(absl::ToUnixMillis(kT0 + absl::Seconds(15)));
  EXPECT_THAT(history.SelectForAggregate(request).batch_ids, ElementsAre("2"));
  request.set_since_unix_ms(0);
  request.set_until_unix_ms(absl::ToUnixMillis(kT0 + absl::Seconds(20)));  // exclusive
  EXPECT_THAT(history.SelectForAggregate(request).batch_ids, ElementsAre("1"));
  request.clear_labels();
  request.set_until_unix_ms(0);
  EXPECT_THAT(history.SelectForAggregate(request).batch_ids, ElementsAre("1", "2", "5"));
  (*request.mutable_labels())["suite"] = "monthly";
  EXPECT_TRUE(history.SelectForAggregate(request).batch_ids.empty());
}

TEST(RunHistoryTest, EndedBeforeSkipsRunningFinalizingAndRecentBatches) {
  RunHistory history;
  history.Add(Batch("1", v1::BATCH_STATE_SUCCEEDED, 0, 10));
  history.Add(Batch("2", v1::BATCH_STATE_CANCELLED, 0, 20));
  history.Add(Batch("3", v1::BATCH_STATE_RUNNING, 0));
  history.Add(Batch("4", v1::BATCH_STATE_FAILED, 0, 40));
  history.Add(Batch("5", v1::BATCH_STATE_FAILED, 0, 15))->finalizing = true;
  EXPECT_THAT(history.EndedBefore(kT0 + absl::Seconds(40)), ElementsAre("1", "2"));
  EXPECT_THAT(history.EndedBefore(kT0 + absl::Seconds(41)), ElementsAre("1", "2", "4"));
  EXPECT_TRUE(history.EndedBefore(kT0).empty());
}

TEST(RunHistoryTest, RemoveForgetsBatchesAndTheirRequestIds) {
  RunHistory history;
  BatchRecord first = Batch("1", v1::BATCH_STATE_SUCCEEDED, 0, 1);
  first.request_id = "r1";
  history.Add(std::move(first));
  history.Add(Batch("2", v1::BATCH_STATE_SUCCEEDED, 0, 1));
  history.Add(Batch("3", v1::BATCH_STATE_RUNNING, 0));
  history.Remove({"1", "2", "404"});
  EXPECT_EQ(history.size(), 1u);
  EXPECT_EQ(history.Find("1"), nullptr);
  EXPECT_EQ(history.FindRequest("r1"), nullptr);
  EXPECT_THAT(Ids(history.List({})), ElementsAre("3"));
  EXPECT_EQ(history.next_id(), 4u);  // ids are never reused
}

TEST(RunHistoryTest, ExpectedCostIsTheLatestRunOfTheProgramElseOfTheName) {
  RunHistory history;
  JobRecord job = Job(0, v1::JOB_STATE_SUCCEEDED, 100);
  job.program_digest = "p1";
  EXPECT_EQ(history.ExpectedCost(job), kUnknownCost);
  history.RecordCycles(job);
  EXPECT_EQ(history.ExpectedCost(job), 100u);
  job.cycles = 80;
  history.RecordCycles(job);
  EXPECT_EQ(history.ExpectedCost(job), 80u);
  JobRecord changed = Job(0, v1::JOB_STATE_QUEUED);  // same name, new program
  changed.program_digest = "p2";
  EXPECT_EQ(history.ExpectedCost(changed), 80u);
  JobRecord other = Job(5, v1::JOB_STATE_QUEUED);
  other.program_digest = "p3";
  EXPECT_EQ(history.ExpectedCost(other), kUnknownCost);
}

TEST(RunHistoryTest, PreviousIsTheNewestEarlierEndedBatchWithTheSameLabels) {
  RunHistory history;
  history.Add(Batch("1", v1::BATCH_STATE_SUCCEEDED, 0, 1));
  history.Add(Batch("2", v1::BATCH_STATE_FAILED, 2, 3));
  BatchRecord other = Batch("3", v1::BATCH_STATE_SUCCEEDED, 4, 5);
  other.labels["suite"] = "weekly";
  history.Add(std::move(other));
  history.Add(Batch("4", v1::BATCH_STATE_CANCELLED, 6, 7));
  history.Add(Batch("5", v1::BATCH_STATE_RUNNING, 8));
  BatchRecord extra = Batch("6", v1::BATCH_STATE_SUCCEEDED, 9, 10);
  extra.labels["branch"] = "main";  // a superset of the labels is another suite
  history.Add(std::move(extra));
  history.Add(Batch("7", v1::BATCH_STATE_RUNNING, 11));
  // Cancelled, running, other labels and a superset are skipped; FAILED counts.
  EXPECT_EQ(history.Previous("7"), "2");
  EXPECT_EQ(history.Previous("2"), "1");
  EXPECT_EQ(history.Previous("1"), "");
  EXPECT_EQ(history.Previous("3"), "");
  EXPECT_EQ(history.Previous("6"), "");
  EXPECT_EQ(history.Previous("unknown"), "");
}

TEST(RunHistoryTest, TaskIdIsBatchSlashIndex) { EXPECT_EQ(TaskId("12", 3), "12/3"); }

}  // namespace
}  // namespace flamefleet::coordinator
