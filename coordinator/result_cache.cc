#include "coordinator/result_cache.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace flamefleet::coordinator {

void ResultCache::Remember(absl::string_view batch_id, const JobRecord& job) {
  if (!job.cache_key.empty() && !job.profile_digest.empty()) {
    results_[job.cache_key] = CachedResult{std::string(batch_id), job.index};
  }
}

const CachedResult* ResultCache::Find(absl::string_view cache_key) const {
  auto it = results_.find(cache_key);
  return it == results_.end() ? nullptr : &it->second;
}

void ResultCache::ForgetBatches(const absl::flat_hash_set<std::string>& batch_ids) {
  std::vector<std::string> stale;
  for (const auto& [key, ref] : results_) {
    if (batch_ids.contains(ref.batch_id)) stale.push_back(key);
  }
  for (const std::string& key : stale) results_.erase(key);
}

void ReuseResult(absl::string_view source_batch_id, const JobRecord& earlier, JobRecord* job) {
  job->state = v1::JOB_STATE_SUCCEEDED;
  job->cycles = earlier.cycles;
  job->stack = earlier.stack;
  job->profile_digest = earlier.profile_digest;
  job->summary_digest = earlier.summary_digest;
  job->cached_from = absl::StrCat(source_batch_id, "/", earlier.spec.name());
}

}  // namespace flamefleet::coordinator
