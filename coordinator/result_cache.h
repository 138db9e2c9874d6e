// The result cache: which earlier job already holds the result of a job being submitted.
//
// A job's cache key (internal::ResultCacheKey over its program digest and the batch options
// that change a result) names its result exactly, because a run is deterministic. ResultCache
// remembers, per key, the newest succeeded job that stored a profile; BatchManager::SubmitBatch
// answers a job whose key it knows from that job (the job starts SUCCEEDED and is never
// leased), and retention forgets the jobs of the batches it removes.
//
//   ResultCache cache;
//   cache.Remember("7", job);  // job 7/3 succeeded with a stored profile
//   if (const CachedResult* hit = cache.Find(other.cache_key)) {
//     ReuseResult(hit->batch_id, earlier_job, &other);  // earlier_job: job hit->index of 7
//   }
//   cache.ForgetBatches({"7"});  // batch 7 was removed
//
// Thread-safety: a plain value; the owner synchronises (BatchManager holds its mutex).
#ifndef FLAMEFLEET_COORDINATOR_RESULT_CACHE_H_
#define FLAMEFLEET_COORDINATOR_RESULT_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "coordinator/job_store.h"

namespace flamefleet::coordinator {

// Where a cached result lives: job `index` of batch `batch_id`.
struct CachedResult {
  std::string batch_id;
  uint32_t index = 0;
};

class ResultCache {
 public:
  // Remembers job `job` of batch `batch_id` as the result for `job.cache_key`, replacing an
  // older one, if the job has a cache key and a stored profile; otherwise does nothing. The
  // caller passes only succeeded jobs.
  void Remember(absl::string_view batch_id, const JobRecord& job);

  // Returns the job holding the result for `cache_key`, or null if there is none. The pointer
  // is valid until the next Remember or ForgetBatches.
  const CachedResult* Find(absl::string_view cache_key) const;

  // Forgets every result held by a batch in `batch_ids` (retention removed them).
  void ForgetBatches(const absl::flat_hash_set<std::string>& batch_ids);

  // Returns the number of cache keys with a result.
  size_t size() const { return results_.size(); }

 private:
  absl::flat_hash_map<std::string, CachedResult> results_;  // cache key -> newest result
};

// Makes `job` reuse the result of `earlier`, a job of batch `source_batch_id` found through
// ResultCache::Find: `job` becomes SUCCEEDED with the cycles, final stack and profile of
// `earlier` (and its summary), and cached_from "<source_batch_id>/<earlier's name>". `job` must not
// be null.
void ReuseResult(absl::string_view source_batch_id, const JobRecord& earlier, JobRecord* job);

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_RESULT_CACHE_H_
