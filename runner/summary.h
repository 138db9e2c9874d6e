// A job's summary as data, on the wire and as JSON: the one writer of summary.json (schema
// "flamefleet.summary/1", docs/summary.md), the conversion to and from the wire message
// flamefleet.v1.JobSummary (proto/flamefleet/v1/summary.proto) that fleet workers send, the
// one validating decoder of that message, and the writer of a batch's summary.json (schema
// "flamefleet.batch-summary/1": every job's summary and their totals by name).
//
//   JobSummary summary = MakeJobSummary({.job = "fib", .program = &program, .inputs = &inputs,
//                                        .run = &run});
//   std::string bytes = JobSummaryToProto(summary).SerializeAsString();  // worker -> coordinator
//   FLAMEFLEET_ASSIGN_OR_RETURN(JobSummary decoded, DecodeJobSummary(bytes));
//   std::string json = SummaryJson(decoded);  // the same bytes as SummaryJson(SummaryInput)
//
// Everything from outside (a worker's upload, a coordinator's answer) goes through
// DecodeJobSummary, which bounds every count and name by the limits below and checks that the
// tables add up, so the writers never see an inconsistent summary.
#ifndef FLAMEFLEET_RUNNER_SUMMARY_H_
#define FLAMEFLEET_RUNNER_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flamefleet/v1/summary.pb.h"
#include "runner/run_stats.h"

namespace flamefleet::runner {

// The largest serialized JobSummary accepted (a worker's upload, a stored summary): 4 MiB.
inline constexpr size_t kMaxSummaryBytes = size_t{4} << 20;
// Most rows in each of a summary's tables (procedures, instructions, operations, phases).
inline constexpr size_t kMaxSummaryRows = 65536;
// Longest name (the job's, a procedure's, an instruction's, a phase's) and digest or dialect.
inline constexpr size_t kMaxSummaryNameBytes = 4096;
// Longest error message of a summary.
inline constexpr size_t kMaxSummaryErrorBytes = 65536;
// Most final-stack values of a summary (summary.json keeps the top 16).
inline constexpr size_t kMaxSummaryStackValues = 16;

// One job's summary: what summary.json says, before the shares are computed.
struct JobSummary {
  std::string job;
  std::string program_digest;  // "0x" + 64 hex digits
  std::string dialect;         // "v0.16"
  std::string inputs_digest;   // "blake3:" + 64 hex digits
  absl::Status status;         // the program's own outcome
  uint64_t cycles = 0;
  std::vector<uint64_t> final_stack;  // top first
  RunStats stats;
};

// Returns the summary of a run (the pointers of `input` must be valid for the call).
JobSummary MakeJobSummary(const SummaryInput& input);

// Returns summary.json of `summary` (schema "flamefleet.summary/1", docs/summary.schema.json),
// pretty-printed with a trailing newline. SummaryJson(SummaryInput) is this of MakeJobSummary.
std::string SummaryJson(const JobSummary& summary);

// Returns the wire form of `summary`.
v1::JobSummary JobSummaryToProto(const JobSummary& summary);

// Validates `message` and returns its summary. InvalidArgument naming the field
// ("procedures[3].self: 12 exceeds inclusive = 10") for: a name, digest, dialect or error over
// its limit (kMaxSummaryNameBytes, kMaxSummaryErrorBytes), an empty job or row name, a digest or
// dialect not in its documented form, an unknown error code or an OK status with a message,
// more than kMaxSummaryStackValues stack values or one that is not a field element, a table
// over kMaxSummaryRows, a procedure whose self exceeds its inclusive or whose inclusive exceeds
// cycles, procedures' self cycles that do not sum to cycles, instruction or operation cycles
// that do not sum to cycles (when the table is not empty), a phase whose count, total, min and
// max cannot belong together, or a sum that overflows; and for a trace shape (trace_shape and
// procedures[].trace): one without the other, one on a run that ended with an error or on a
// dialect without trace-shape rules, a procedure without its trace, a bound that is not core,
// range or chiplets, and whatever CheckTraceShape (runner/run_stats.h) refuses: rows that do not
// follow the dialect's vm::TraceShapeRules, wrong heights, padded_len or bound, and procedures'
// rows that do not add up to the totals ("trace_shape.padded_len: ..."). Never crashes on any
// input.
absl::StatusOr<JobSummary> DecodeJobSummary(const v1::JobSummary& message);

// Parses serialized bytes and validates them as above. InvalidArgument for more than
// kMaxSummaryBytes or bytes that are not a JobSummary message.
absl::StatusOr<JobSummary> DecodeJobSummary(absl::string_view bytes);

// A job of a batch that has no summary (it failed before its program ran, or has not run).
struct JobWithoutSummary {
  std::string job;
  std::string state;                 // "failed", "cancelled", "queued", "running"
  std::optional<std::string> error;  // the job's error; none: null
};

// What a batch's summary.json describes.
struct BatchSummaryInput {
  std::string batch_id;
  std::string state;             // "succeeded", "failed", "cancelled", "running"
  std::vector<JobSummary> jobs;  // the jobs with a summary, in job order
  std::vector<JobWithoutSummary> without_summary;
};

// Returns a batch's summary.json (schema "flamefleet.batch-summary/1",
// docs/batch-summary.schema.json): every job's summary object as SummaryJson writes it, the
// jobs without one, the sum of their cycles, and procedures, instructions and operations
// summed by name over the jobs (procedures by inclusive descending, the others by cycles
// descending, then by name; shares of the batch's cycles) and phases merged by name in
// first-seen order; when a job has a trace shape, `trace_totals` (its rows by kind, overhead,
// core rows and padded lengths summed over those jobs) and each procedure's `trace` rows summed
// by name over them (docs/summary.md). Sums saturate at 2^64 - 1. Pretty-printed with a trailing
// newline.
std::string BatchSummaryJson(const BatchSummaryInput& batch);

}  // namespace flamefleet::runner

#endif  // FLAMEFLEET_RUNNER_SUMMARY_H_
