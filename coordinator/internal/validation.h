// Validation of SubmitBatch requests (the service checks them before the
// BatchManager sees them).
#ifndef FLAMEFLEET_COORDINATOR_INTERNAL_VALIDATION_H_
#define FLAMEFLEET_COORDINATOR_INTERNAL_VALIDATION_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "flamefleet/v1/coordinator.pb.h"

namespace flamefleet::coordinator::internal {

// Limits applied to SubmitBatch requests.
struct SubmitLimits {
  size_t max_jobs = 10000;
  size_t max_source_bytes = 1
                            << 20;  // per program, inputs file and library file
  size_t max_snapshot_bytes = 8 << 20;  // per replay snapshot (program, modules, inputs, log)
  size_t max_request_bytes = 48 << 20;  // the whole serialized request
  // Ceiling of options.max_cycles; 0 = none. (A request without a cap gets the ceiling: the
  // service fills it in.)
  uint64_t max_cycle_cap = 0;
  // Ceiling of options.max_memory_bytes (--max-memory-cap); 0 = none. A request without a
  // budget gets the ceiling (the service fills it in), as for max_cycle_cap.
  uint64_t max_memory_cap = 0;
};

// Checks a SubmitBatch request. Returns InvalidArgument naming the field
// ("jobs[3].name: empty") for no jobs, empty or duplicate or non-relative job
// names, empty sources, empty label keys, empty library namespaces or paths and
// duplicate library paths; ResourceExhausted naming the field, the value and
// the limit when one is exceeded (options.max_cycles above max_cycle_cap and
// options.max_memory_bytes above max_memory_cap included).
absl::Status ValidateSubmitBatchRequest(const v1::SubmitBatchRequest& request,
                                        const SubmitLimits& limits);

}  // namespace flamefleet::coordinator::internal

#endif  // FLAMEFLEET_COORDINATOR_INTERNAL_VALIDATION_H_
