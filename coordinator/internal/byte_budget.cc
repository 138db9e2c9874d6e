#include "coordinator/internal/byte_budget.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace flamefleet::coordinator::internal {

absl::Status ByteBudget::Acquire(size_t bytes, absl::Duration wait,
                                 const std::function<bool()>& gone) {
  if (capacity_ == 0) return absl::OkStatus();
  if (bytes > capacity_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("result of ", bytes, " bytes exceeds the in-flight result budget of ",
                     capacity_, " bytes (--max-inflight-result-bytes)"));
  }
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + wait;
  auto fits = [this, bytes]()
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_use_ + bytes <= capacity_; };
  while (true) {
    const bool ready = mu_.AwaitWithDeadline(
        absl::Condition(&fits), std::min(deadline, absl::Now() + absl::Milliseconds(200)));
    if (gone && gone()) return absl::CancelledError("client went away");
    if (ready) break;
    if (absl::Now() >= deadline) {
      return absl::ResourceExhaustedError(
          absl::StrCat("result of ", bytes, " bytes does not fit the in-flight result budget of ",
                       capacity_, " bytes (--max-inflight-result-bytes; ", in_use_,
                       " bytes held by other uploads) after waiting ", absl::FormatDuration(wait),
                       "; retry later"));
    }
  }
  in_use_ += bytes;
  return absl::OkStatus();
}

void ByteBudget::Release(size_t bytes) {
  if (capacity_ == 0) return;
  absl::MutexLock lock(&mu_);
  in_use_ -= std::min(bytes, in_use_);
}

size_t ByteBudget::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

}  // namespace flamefleet::coordinator::internal
