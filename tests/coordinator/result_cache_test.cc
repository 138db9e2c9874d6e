#include "coordinator/result_cache.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace flamefleet::coordinator {
namespace {

JobRecord Succeeded(uint32_t index, const std::string& key, const std::string& digest) {
  JobRecord job;
  job.index = index;
  job.spec.set_name(absl::StrCat("job", index, ".masm"));
  job.state = v1::JOB_STATE_SUCCEEDED;
  job.cycles = 10 + index;
  job.stack = {1, 2};
  job.cache_key = key;
  job.profile_digest = digest;
  return job;
}

TEST(ResultCacheTest, RemembersOnlyJobsWithAKeyAndAProfile) {
  ResultCache cache;
  cache.Remember("1", Succeeded(0, "", "d0"));
  cache.Remember("1", Succeeded(1, "k1", ""));
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Find("k1"), nullptr);
  EXPECT_EQ(cache.Find(""), nullptr);
  cache.Remember("1", Succeeded(2, "k2", "d2"));
  const CachedResult* hit = cache.Find("k2");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->batch_id, "1");
  EXPECT_EQ(hit->index, 2u);
}

TEST(ResultCacheTest, NewestResultWins) {
  ResultCache cache;
  cache.Remember("1", Succeeded(0, "k", "d"));
  cache.Remember("2", Succeeded(3, "k", "d"));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Find("k")->batch_id, "2");
  EXPECT_EQ(cache.Find("k")->index, 3u);
}

TEST(ResultCacheTest, ForgetBatchesDropsOnlyTheirResults) {
  ResultCache cache;
  cache.Remember("1", Succeeded(0, "a", "d"));
  cache.Remember("1", Succeeded(1, "b", "d"));
  cache.Remember("2", Succeeded(0, "c", "d"));
  cache.ForgetBatches({"1", "9"});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Find("a"), nullptr);
  EXPECT_EQ(cache.Find("b"), nullptr);
  ASSERT_NE(cache.Find("c"), nullptr);
  EXPECT_EQ(cache.Find("c")->batch_id, "2");
}

TEST(ResultCacheTest, ReuseResultCopiesTheEarlierResultAndNamesItsSource) {
  const JobRecord earlier = Succeeded(4, "k", "digest");
  JobRecord job;
  job.index = 0;
  job.spec.set_name("other.masm");
  ReuseResult("17", earlier, &job);
  EXPECT_EQ(job.state, v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.cycles, 14u);
  EXPECT_EQ(job.stack, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(job.profile_digest, "digest");
  EXPECT_EQ(job.cached_from, "17/job4.masm");
  EXPECT_EQ(job.attempts, 0u);
  EXPECT_EQ(job.spec.name(), "other.masm");
}

}  // namespace
}  // namespace flamefleet::coordinator
