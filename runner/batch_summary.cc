#include "runner/batch_summary.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "flamefleet/v1/coordinator.pb.h"
#include "runner/summary.h"

namespace flamefleet::runner {

namespace v1 = ::flamefleet::v1;

absl::StatusOr<std::string> BatchSummaryJsonFromWire(absl::string_view batch_id,
                                                     const std::string& bytes) {
  v1::BatchSummary message;
  if (!message.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batch_id, ": the coordinator's summary is not a BatchSummary"));
  }
  BatchSummaryInput input;
  input.batch_id = std::string(batch_id);
  input.state = absl::AsciiStrToLower(
      absl::StripPrefix(v1::BatchState_Name(message.state()), "BATCH_STATE_"));
  for (const v1::BatchSummaryJob& job : message.jobs()) {
    if (job.has_summary()) {
      absl::StatusOr<JobSummary> summary = DecodeJobSummary(job.summary());
      if (!summary.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("batch ", batch_id, " job \"",
                                                       absl::CHexEscape(job.name()),
                                                       "\": ", summary.status().message()));
      }
      summary->job = job.name();
      input.jobs.push_back(*std::move(summary));
      continue;
    }
    JobWithoutSummary row{
        job.name(),
        absl::AsciiStrToLower(absl::StripPrefix(v1::JobState_Name(job.state()), "JOB_STATE_")),
        std::nullopt};
    if (!job.error().empty()) row.error = job.error();
    input.without_summary.push_back(std::move(row));
  }
  return BatchSummaryJson(input);
}

}  // namespace flamefleet::runner
