#include "coordinator/scheduler.h"

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/clock.h"
#include "gtest/gtest.h"

namespace flamefleet::coordinator {
namespace {

class JobSchedulerTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  JobScheduler scheduler_{
      &clock_, SchedulerOptions{.lease_duration = absl::Seconds(10), .max_lost_leases = 3}};
};

TEST_F(JobSchedulerTest, LeasesInQueueOrder) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  ASSERT_TRUE(scheduler_.Enqueue("b/1", 0).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(scheduler_.Enqueue("b/0", 0)));
  std::optional<Lease> first = scheduler_.LeaseTask(absl::ZeroDuration());
  std::optional<Lease> second = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->task_id, "b/0");
  EXPECT_EQ(first->attempt, 1u);
  EXPECT_EQ(first->expires, clock_.Now() + absl::Seconds(10));
  EXPECT_EQ(second->task_id, "b/1");
  EXPECT_NE(first->lease_id, second->lease_id);
  EXPECT_FALSE(scheduler_.LeaseTask(absl::ZeroDuration()).has_value());
  EXPECT_EQ(scheduler_.leased(), 2u);
}

TEST_F(JobSchedulerTest, ExpiredLeaseRequeuesTask) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(lease);
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(scheduler_.SweepExpired().empty());
  clock_.Advance(absl::Seconds(1));
  std::vector<ExpiredLease> expired = scheduler_.SweepExpired();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].task_id, "b/0");
  EXPECT_FALSE(expired[0].failed);
  // The old lease is dead; the task is leased again as attempt 2.
  EXPECT_FALSE(scheduler_.RenewLease("b/0", lease->lease_id).has_value());
  std::optional<Lease> again = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->task_id, "b/0");
  EXPECT_EQ(again->attempt, 2u);
  EXPECT_FALSE(scheduler_.Complete("b/0", lease->lease_id));  // stale lease rejected
  EXPECT_TRUE(scheduler_.Complete("b/0", again->lease_id));
}

TEST_F(JobSchedulerTest, RenewalKeepsLeaseAlive) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(lease);
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(8));
    EXPECT_TRUE(scheduler_.RenewLease("b/0", lease->lease_id).has_value());
    EXPECT_TRUE(scheduler_.SweepExpired().empty());
  }
  EXPECT_FALSE(scheduler_.RenewLease("b/0", "not-the-lease").has_value());
}

TEST_F(JobSchedulerTest, ThreeLostLeasesFailTheTask) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  for (int attempt = 1; attempt <= 3; ++attempt) {
    std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
    ASSERT_TRUE(lease) << attempt;
    EXPECT_EQ(lease->attempt, static_cast<uint32_t>(attempt));
    clock_.Advance(absl::Seconds(11));
    std::vector<ExpiredLease> expired = scheduler_.SweepExpired();
    ASSERT_EQ(expired.size(), 1u);
    EXPECT_EQ(expired[0].failed, attempt == 3);
  }
  std::vector<ExpiredLease> none = scheduler_.SweepExpired();
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(scheduler_.LeaseTask(absl::ZeroDuration()).has_value());
  EXPECT_EQ(scheduler_.queued() + scheduler_.leased(), 0u);
}

TEST_F(JobSchedulerTest, FailureReasonNamesLostLeases) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  std::vector<ExpiredLease> expired;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(scheduler_.LeaseTask(absl::ZeroDuration()));
    clock_.Advance(absl::Seconds(11));
    expired = scheduler_.SweepExpired();
  }
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_TRUE(expired[0].failed);
  EXPECT_EQ(expired[0].reason, "worker lost 3 times (last: lease expired)");
}

TEST_F(JobSchedulerTest, CompletionIsAcceptedExactlyOnce) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(lease);
  EXPECT_TRUE(scheduler_.Complete("b/0", lease->lease_id));
  EXPECT_FALSE(scheduler_.Complete("b/0", lease->lease_id));  // duplicate
  EXPECT_FALSE(scheduler_.RenewLease("b/0", lease->lease_id).has_value());
  EXPECT_FALSE(scheduler_.Complete("b/9", "x"));  // unknown
  clock_.Advance(absl::Hours(1));
  EXPECT_TRUE(scheduler_.SweepExpired().empty());
}

TEST_F(JobSchedulerTest, UnsweptExpiredLeaseCanStillComplete) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(lease);
  clock_.Advance(absl::Seconds(30));
  EXPECT_TRUE(scheduler_.Complete("b/0", lease->lease_id));
  EXPECT_TRUE(scheduler_.SweepExpired().empty());
}

TEST_F(JobSchedulerTest, CancelInvalidatesQueuedAndLeasedTasks) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  ASSERT_TRUE(scheduler_.Enqueue("b/1", 0).ok());
  std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(lease);
  scheduler_.Cancel({"b/0", "b/1", "unknown"});
  EXPECT_FALSE(scheduler_.RenewLease("b/0", lease->lease_id).has_value());
  EXPECT_FALSE(scheduler_.Complete("b/0", lease->lease_id));
  EXPECT_FALSE(scheduler_.LeaseTask(absl::ZeroDuration()).has_value());
  EXPECT_EQ(scheduler_.queued(), 0u);
  EXPECT_EQ(scheduler_.leased(), 0u);
}

TEST_F(JobSchedulerTest, RestoredTaskKeepsAttemptCount) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 2).ok());
  std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->attempt, 3u);
}

TEST_F(JobSchedulerTest, ReleasePutsTaskBackWithoutCountingALoss) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(lease);
  EXPECT_TRUE(scheduler_.Release("b/0", lease->lease_id));
  EXPECT_FALSE(scheduler_.Release("b/0", lease->lease_id));
  EXPECT_TRUE(scheduler_.LeaseTask(absl::ZeroDuration()).has_value());
}

TEST_F(JobSchedulerTest, LongPollWakesWhenTaskArrives) {
  std::optional<Lease> lease;
  std::thread waiter([&] { lease = scheduler_.LeaseTask(absl::Seconds(30)); });
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0).ok());
  waiter.join();  // returns as soon as the task is queued, long before 30 s
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->task_id, "b/0");
}

TEST_F(JobSchedulerTest, ShutdownWakesLongPoll) {
  std::optional<Lease> lease = Lease{};
  std::thread waiter([&] { lease = scheduler_.LeaseTask(absl::Seconds(30)); });
  scheduler_.Shutdown();
  waiter.join();
  EXPECT_FALSE(lease.has_value());
}

TEST_F(JobSchedulerTest, LongestFirstLeasesUnknownThenLargestCostThenOldest) {
  ASSERT_TRUE(scheduler_.Enqueue("b/small", 0, 10).ok());
  ASSERT_TRUE(scheduler_.Enqueue("b/large", 0, 1000).ok());
  ASSERT_TRUE(scheduler_.Enqueue("b/new", 0).ok());  // no history: before every estimate
  ASSERT_TRUE(scheduler_.Enqueue("b/mid", 0, 100).ok());
  ASSERT_TRUE(scheduler_.Enqueue("b/mid2", 0, 100).ok());
  std::vector<std::string> order;
  std::optional<Lease> first = scheduler_.LeaseTask(absl::ZeroDuration());
  ASSERT_TRUE(first);
  order.push_back(first->task_id);
  // A released task goes back to the front of its rank.
  ASSERT_TRUE(scheduler_.Release(first->task_id, first->lease_id));
  while (std::optional<Lease> lease = scheduler_.LeaseTask(absl::ZeroDuration())) {
    order.push_back(lease->task_id);
  }
  EXPECT_EQ(order,
            (std::vector<std::string>{"b/new", "b/new", "b/large", "b/mid", "b/mid2", "b/small"}));
  EXPECT_EQ(scheduler_.queued(), 0u);
}

TEST(JobSchedulerFifoTest, FifoIgnoresCosts) {
  FakeClock clock;
  JobScheduler scheduler(&clock, SchedulerOptions{.longest_first = false});
  ASSERT_TRUE(scheduler.Enqueue("b/0", 0, 1).ok());
  ASSERT_TRUE(scheduler.Enqueue("b/1", 0, 1000).ok());
  ASSERT_TRUE(scheduler.Enqueue("b/2", 0).ok());
  EXPECT_EQ(scheduler.LeaseTask(absl::ZeroDuration())->task_id, "b/0");
  EXPECT_EQ(scheduler.LeaseTask(absl::ZeroDuration())->task_id, "b/1");
  EXPECT_EQ(scheduler.LeaseTask(absl::ZeroDuration())->task_id, "b/2");
}

TEST_F(JobSchedulerTest, CancelledQueuedTaskIsNeverLeased) {
  ASSERT_TRUE(scheduler_.Enqueue("b/0", 0, 5).ok());
  ASSERT_TRUE(scheduler_.Enqueue("b/1", 0, 7).ok());
  scheduler_.Cancel({"b/1"});
  EXPECT_EQ(scheduler_.queued(), 1u);
  EXPECT_EQ(scheduler_.LeaseTask(absl::ZeroDuration())->task_id, "b/0");
  EXPECT_FALSE(scheduler_.LeaseTask(absl::ZeroDuration()).has_value());
}

}  // namespace
}  // namespace flamefleet::coordinator
