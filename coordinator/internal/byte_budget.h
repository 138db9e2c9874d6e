// A coordinator-wide budget of bytes held in memory at once, for the results that
// CompleteTask streams receive: a stream reserves its header.profile_bytes before it reads
// the data and gives them back when it is done, so concurrent large uploads cannot drive the
// coordinator out of memory. A reservation that does not fit waits (bounded) for room.
//
//   ByteBudget budget(512 << 20);
//   FLAMEFLEET_RETURN_IF_ERROR(budget.Acquire(bytes, absl::Seconds(10), gone));
//   ... receive and store ...
//   budget.Release(bytes);
//
// Thread-safe.
#ifndef FLAMEFLEET_COORDINATOR_INTERNAL_BYTE_BUDGET_H_
#define FLAMEFLEET_COORDINATOR_INTERNAL_BYTE_BUDGET_H_

#include <cstddef>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace flamefleet::coordinator::internal {

class ByteBudget {
 public:
  // `capacity` bytes may be reserved at once; 0 = unlimited (nothing is tracked).
  explicit ByteBudget(size_t capacity) : capacity_(capacity) {}

  // Reserves `bytes`, waiting up to `wait` for other reservations to be released. Returns
  // ResourceExhausted naming the budget and its flag (--max-inflight-result-bytes) at once if
  // `bytes` exceeds the whole capacity, or after `wait` if it still does not fit; Cancelled as
  // soon as `gone` (optional, checked from this thread at least every 200 ms) returns true.
  absl::Status Acquire(size_t bytes, absl::Duration wait,
                       const std::function<bool()>& gone = nullptr);
  // Gives back bytes reserved by a successful Acquire.
  void Release(size_t bytes);

  size_t capacity() const { return capacity_; }
  // Returns the bytes reserved now.
  size_t in_use() const;

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  size_t in_use_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace flamefleet::coordinator::internal

#endif  // FLAMEFLEET_COORDINATOR_INTERNAL_BYTE_BUDGET_H_
