#include "coordinator/internal/worker_leases.h"

#include "gtest/gtest.h"

namespace flamefleet::coordinator::internal {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST(WorkerLeasesTest, CountsReservationsAndLeasesPerWorker) {
  WorkerLeases leases(2);
  ASSERT_TRUE(leases.TryReserve("w1", kT0));
  ASSERT_TRUE(leases.TryReserve("w1", kT0));
  EXPECT_FALSE(leases.TryReserve("w1", kT0));  // two pending polls already
  EXPECT_TRUE(leases.TryReserve("w2", kT0));   // per worker
  leases.CancelReservation("w1");
  leases.Commit("w1", "1/0", "a", kT0 + absl::Seconds(10));
  EXPECT_EQ(leases.CountForTest("w1", kT0), 1u);
  ASSERT_TRUE(leases.TryReserve("w1", kT0));
  leases.Commit("w1", "1/1", "b", kT0 + absl::Seconds(10));
  EXPECT_FALSE(leases.TryReserve("w1", kT0));
}

TEST(WorkerLeasesTest, ExpiredLeaseStopsCountingAndRenewalExtendsIt) {
  WorkerLeases leases(1);
  ASSERT_TRUE(leases.TryReserve("w1", kT0));
  leases.Commit("w1", "1/0", "a", kT0 + absl::Seconds(10));
  leases.Renew("1/0", "stale", kT0 + absl::Seconds(100));  // another lease id: ignored
  EXPECT_FALSE(leases.TryReserve("w1", kT0 + absl::Seconds(5)));
  leases.Renew("1/0", "a", kT0 + absl::Seconds(20));
  EXPECT_FALSE(leases.TryReserve("w1", kT0 + absl::Seconds(15)));
  EXPECT_TRUE(leases.TryReserve("w1", kT0 + absl::Seconds(20)));
}

TEST(WorkerLeasesTest, EndedLeaseStopsCounting) {
  WorkerLeases leases(1);
  ASSERT_TRUE(leases.TryReserve("w1", kT0));
  leases.Commit("w1", "1/0", "a", kT0 + absl::Seconds(10));
  leases.End("1/0", "other");
  EXPECT_FALSE(leases.TryReserve("w1", kT0));
  leases.End("1/0", "a");
  EXPECT_TRUE(leases.TryReserve("w1", kT0));
}

TEST(WorkerLeasesTest, ZeroMeansUnlimited) {
  WorkerLeases leases(0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(leases.TryReserve("w1", kT0));
}

}  // namespace
}  // namespace flamefleet::coordinator::internal
