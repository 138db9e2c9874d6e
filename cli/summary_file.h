// The one validating reader of summary JSON for the CLI: a job's summary.json
// ("flamefleet.summary/1", docs/summary.md, written by `profile --summary`) and a batch's
// DIR/summary.json ("flamefleet.batch-summary/1", written by `fetch`), read into plain structs
// for `top` and `diff`. A job summary is read as a batch of one (one entry in `jobs`, its
// tables as the totals), so callers handle one shape.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(Summary s, ReadSummaryFile("out/summary.json"));
//   for (const SummaryProcedure& p : s.totals.procedures) std::cout << p.name << " " << p.calls;
//
// Why one reader: the files come from outside (a CI artifact, another machine's fetch), so every
// field `top` and `diff` use is checked once, here, and errors name the file and the JSON path
// of the bad field ("out.json: procedures[3].calls: expected a non-negative integer"). Fields the
// CLI does not use (digests, final_stack, mast, the *_share numbers, which are recomputed from
// the cycles) are not required; unknown fields are ignored, so a reader of /1 accepts a producer
// that adds fields.
//
// Bounds: the file's size (SummaryReadOptions::max_bytes, default kDefaultMaxSummaryBytes), the
// JSON nesting depth (kMaxSummaryDepth, checked before the document is built), the rows per list
// (kMaxSummaryRows) and the jobs per batch (kMaxSummaryJobs). Nothing here throws: nlohmann::json
// errors become InvalidArgument.
//
// Thread-safety: pure functions over plain values.
#ifndef FLAMEFLEET_CLI_SUMMARY_FILE_H_
#define FLAMEFLEET_CLI_SUMMARY_FILE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runner/run_stats.h"

namespace flamefleet::cli {

inline constexpr char kJobSummarySchema[] = "flamefleet.summary/1";
inline constexpr char kBatchSummarySchema[] = "flamefleet.batch-summary/1";
// The name `fetch` gives a batch summary inside its output directory.
inline constexpr char kBatchSummaryFileName[] = "summary.json";

// Largest summary file read by default (128 MiB: a 10,000-job batch of programs with a few
// hundred rows each).
inline constexpr size_t kDefaultMaxSummaryBytes = size_t{128} << 20;
// Deepest JSON nesting accepted (a batch summary needs 5: batch, jobs[], job, list, row).
inline constexpr int kMaxSummaryDepth = 16;
// Most rows in one procedures / instructions / operations / phases / without_summary list.
inline constexpr size_t kMaxSummaryRows = 1'000'000;
// Most entries in a batch summary's jobs[].
inline constexpr size_t kMaxSummaryJobs = 1'000'000;

// Rows by runner::TraceKind (hasher, bitwise, memory, ace, range, chiplets).
using TraceRows = std::array<uint64_t, runner::kNumTraceKinds>;

struct SummaryProcedure {
  std::string name;
  uint64_t calls = 0;
  uint64_t self = 0;
  uint64_t inclusive = 0;
  // `trace` (docs/trace-shape.md): present in a job summary with a trace_shape and in a batch
  // summary with trace_totals (summed by name over the jobs with a trace shape).
  bool has_trace = false;
  TraceRows trace_self{};
  TraceRows trace_inclusive{};
  uint64_t hasher_requests = 0;    // self
  uint64_t hasher_dedup_hits = 0;  // self
};

// A job's trace_shape (docs/summary.md): the totals of each kind (chiplets: the chiplets total),
// the rows of no procedure, and the heights. A batch's trace_totals fills the totals, overhead,
// core_rows and padded_len (each the sum over its `jobs` jobs with a trace shape); its heights
// are 0 and its bound "".
struct SummaryTraceShape {
  TraceRows totals{};
  TraceRows overhead{};
  uint64_t core_rows = 0;
  uint64_t core_height = 0;
  uint64_t chiplets_height = 0;
  uint64_t padded_len = 0;
  std::string bound;  // "core", "range" or "chiplets"
  uint64_t jobs = 1;  // jobs summed (1 for a job's own)
};

// One row of the instructions or operations table.
struct SummaryCounted {
  std::string name;
  uint64_t count = 0;
  uint64_t cycles = 0;
};

struct SummaryPhase {
  std::string name;
  uint64_t jobs = 1;  // jobs that had the phase (1 in a job summary)
  uint64_t count = 0;
  uint64_t total = 0;
  uint64_t min = 0;
  uint64_t max = 0;
  bool open = false;  // a span was still open when a program ended
};

// The numbers of one job, or of a batch summed over its jobs.
struct SummaryTables {
  uint64_t cycles = 0;
  std::vector<SummaryProcedure> procedures;  // in file order
  std::vector<SummaryCounted> instructions;
  std::vector<SummaryCounted> operations;
  std::vector<SummaryPhase> phases;
  // A job summary of a v0.25 run that finished: its trace shape; a batch with such jobs: their
  // trace_totals.
  std::optional<SummaryTraceShape> trace_shape;
};

struct SummaryJob {
  std::string name;
  std::string status;  // "ok" or "error"
  std::string error;   // the error's message ("" when ok)
  SummaryTables tables;
};

// A batch job that has no summary.
struct JobWithoutSummary {
  std::string name;
  std::string state;
  std::string error;  // "" for null
};

struct Summary {
  enum class Kind { kJob, kBatch };
  Kind kind = Kind::kJob;
  std::string source;    // the file name (or label) errors were reported against
  std::string batch;     // kBatch: the batch id
  std::string state;     // kBatch: "succeeded", "failed", "cancelled" or "running"; kJob: status
  SummaryTables totals;  // kJob: the job's tables
  std::vector<SummaryJob> jobs;  // kJob: exactly one
  std::vector<JobWithoutSummary> without_summary;

  // Returns the job named `name`, or nullptr.
  const SummaryJob* FindJob(absl::string_view name) const;
};

struct SummaryReadOptions {
  size_t max_bytes = kDefaultMaxSummaryBytes;
};

// Parses summary JSON `text`; `source` names it in errors. Returns InvalidArgument
// "SOURCE: PATH: what was expected" for malformed JSON (with the byte offset), a schema that is
// neither of the two, a missing field, a wrong type, a negative or fractional number, a
// duplicate name in a list or in jobs[], a row inconsistent with its totals (a phase whose min
// exceeds its max, or whose max exceeds its total; a procedure whose self exceeds its inclusive or
// whose inclusive exceeds the cycles; a batch whose cycles are not the sum of its jobs'), a job's
// trace shape that runner::CheckTraceShape refuses (the same check as the wire decoder's; also
// one on a dialect without trace-shape rules, on a run with status "error", or procedures' trace
// rows without a trace_shape or the reverse), a batch's trace_totals that are not the sums over
// its jobs or that its procedures' trace rows do not add up to, and ResourceExhausted for text over
// options.max_bytes, nesting over kMaxSummaryDepth, or a list over its row limit.
absl::StatusOr<Summary> ParseSummary(absl::string_view text, absl::string_view source,
                                     const SummaryReadOptions& options = {});

// Reads and parses file `path` (as ParseSummary, `path` as the source). NotFound if it cannot be
// opened; ResourceExhausted, before reading it, if it is larger than options.max_bytes.
absl::StatusOr<Summary> ReadSummaryFile(const std::string& path,
                                        const SummaryReadOptions& options = {});

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_SUMMARY_FILE_H_
