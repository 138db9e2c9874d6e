// The coordinator's source of time, behind an interface so that lease expiry can be tested without
// sleeping: `RealClock` reads the system clock, `FakeClock` only moves when told to.
//
//   FakeClock clock(absl::FromUnixSeconds(1000));
//   JobScheduler scheduler(&clock, {});
//   clock.Advance(absl::Seconds(30));   // every lease of 10 s is now expired
//
// Thread-safety: both implementations may be used from any thread.
#ifndef FLAMEFLEET_COORDINATOR_CLOCK_H_
#define FLAMEFLEET_COORDINATOR_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace flamefleet::coordinator {

class Clock {
 public:
  virtual ~Clock() = default;
  // Returns the current time.
  virtual absl::Time Now() = 0;
};

// Reads the system clock (absl::Now()).
class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
};

// A clock that stands still until Advance() or Set() is called.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000)) : now_(start) {}

  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  // Moves the clock forward by `d` (may be negative).
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  // Sets the clock to `t`.
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_CLOCK_H_
