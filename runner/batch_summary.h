// The batch's summary.json from the coordinator's wire form: FetchArtifact(SUMMARY) returns a
// v1::BatchSummary (each job's JobSummary, or its state and error when it has none), and both
// `flamefleet fetch` and the coordinator's web view turn it into the same JSON through this.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string json, runner::BatchSummaryJsonFromWire("42", bytes));
#ifndef FLAMEFLEET_RUNNER_BATCH_SUMMARY_H_
#define FLAMEFLEET_RUNNER_BATCH_SUMMARY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flamefleet::runner {

// Parses `bytes` (a serialized v1::BatchSummary of batch `batch_id`), decodes every job's summary
// with DecodeJobSummary and returns BatchSummaryJson of it. InvalidArgument, naming the batch
// (and the job), for bytes that are not a BatchSummary or a job summary that does not decode.
absl::StatusOr<std::string> BatchSummaryJsonFromWire(absl::string_view batch_id,
                                                     const std::string& bytes);

}  // namespace flamefleet::runner

#endif  // FLAMEFLEET_RUNNER_BATCH_SUMMARY_H_
