// Validation of SubmitBatch requests (the service checks them before the
// BatchManager sees them).
#ifndef FLAMEFLEET_COORDINATOR_INTERNAL_VALIDATION_H_
#define FLAMEFLEET_COORDINATOR_INTERNAL_VALIDATION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flamefleet/v1/coordinator.pb.h"
#include "vm/dialect.h"

namespace flamefleet::coordinator::internal {

// Default longest name-like string of a request (--max-name-bytes): label keys and values,
// options.title, request_id, job names, library namespaces and file paths.
inline constexpr size_t kDefaultMaxNameBytes = 1024;
// Default most labels on one batch (--max-labels).
inline constexpr size_t kDefaultMaxLabels = 32;
// Default longest error message a worker may report for a job (--max-error-bytes); a longer
// one is cut in the middle (TruncateMiddle) before it is stored.
inline constexpr size_t kDefaultMaxErrorBytes = 2048;
// Most final-stack values stored per job result (the top ones are kept); not a flag.
inline constexpr size_t kMaxResultStackValues = 64;

// Most options.phases and most options.markers of one batch; not a flag.
inline constexpr size_t kMaxPhaseOptions = 64;

// Most namespaces in one Library.static_links or JobSpec.static_libraries; not a flag.
inline constexpr size_t kMaxStaticLinks = 64;

// Limits applied to SubmitBatch requests.
struct SubmitLimits {
  size_t max_jobs = 10000;
  size_t max_source_bytes = 1 << 20;    // per program, inputs file and library file
  size_t max_snapshot_bytes = 8 << 20;  // per replay snapshot (program, modules, inputs, log)
  size_t max_request_bytes = 48 << 20;  // the whole serialized request
  // Ceiling of options.max_cycles; 0 = none. (A request without a cap gets the ceiling: the
  // service fills it in.)
  uint64_t max_cycle_cap = 0;
  // Ceiling of options.max_memory_bytes (--max-memory-cap); 0 = none. A request without a
  // budget gets the ceiling (the service fills it in), as for max_cycle_cap.
  uint64_t max_memory_cap = 0;
  // Longest name-like string (see kDefaultMaxNameBytes) and most labels. With the defaults, a
  // batch at max_jobs with every string at its limit still fits a GetBatch / WatchBatch
  // response into the default 64 MiB gRPC message limit.
  size_t max_name_bytes = kDefaultMaxNameBytes;
  size_t max_labels = kDefaultMaxLabels;
};

// Checks a SubmitBatch request. Returns InvalidArgument naming the field
// ("jobs[3].name: empty") for no jobs, empty or duplicate or non-relative job
// names, empty sources, empty label keys, library namespaces that are not one
// MASM identifier ("std", "my_lib"), library file paths that are empty,
// absolute, hold an empty, "." or ".." component or a NUL, and duplicates;
// ResourceExhausted naming the field, the value and the limit when one is
// exceeded (options.max_cycles above max_cycle_cap and options.max_memory_bytes
// above max_memory_cap included; for the string and label limits also the flag:
// options.phases entries that are not START=END and empty options.markers are InvalidArgument,
// more than kMaxPhaseOptions of either ResourceExhausted;
// "labels[\"k\"]: value is 10485760 bytes, the limit is 1024 (--max-name-bytes)").
absl::Status ValidateSubmitBatchRequest(const v1::SubmitBatchRequest& request,
                                        const SubmitLimits& limits);

// Returns the dialect that job `job` (jobs[index]) of a batch with `options` runs under: the
// job's own (JobSpec.dialect), else the batch's (BatchOptions.dialect), else
// vm::kDefaultDialect. InvalidArgument naming the field ("jobs[2].dialect: unknown dialect
// ...") for an unknown name (ValidateSubmitBatchRequest rejects those first).
absl::StatusOr<vm::Dialect> ResolveJobDialect(const v1::JobSpec& job, int index,
                                              const v1::BatchOptions& options);

// Returns `text` if it has at most `limit` bytes, else its head and tail around a marker
// "\n... [N bytes cut] ...\n", at most `limit` bytes in all (cuts may split a UTF-8
// sequence). For error messages from workers, so that batch responses stay bounded.
std::string TruncateMiddle(absl::string_view text, size_t limit);

}  // namespace flamefleet::coordinator::internal

#endif  // FLAMEFLEET_COORDINATOR_INTERNAL_VALIDATION_H_
