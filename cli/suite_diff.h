// Suite-level differential profiles for `flamefleet diff`: each side is a folded file (or a .masm
// program), a fetched output directory (aggregate.folded + jobs/**/<name>.folded, as
// `flamefleet fetch` writes, and its summary.json if present), a summary file (a job's or a
// batch's summary .json, cli/summary_file.h) or a batch id on a coordinator. The comparison gives
// per-job total-cycle deltas (jobs matched by name; jobs on one side only are "added" or
// "removed"), the frames whose self cycles grew most in the aggregate (summed by frame name),
// per-phase total deltas when both sides have a summary, and the regression gate of
// `--fail-above [METRIC=]PCT` (per-job cycles, a procedure's inclusive cycles, or a phase's total
// cycles), and per-procedure self and inclusive deltas for `--json`.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(DiffInput a, LoadOutputDirectory("nightly/", {}));
//   FLAMEFLEET_ASSIGN_OR_RETURN(DiffInput b, LoadBatch(client, "42"));
//   SuiteDiff d = CompareSuites(a, b);
//   PrintSuiteDiff(d, /*top=*/10, std::cout);
//   if (!JobsAbove(d, 5.0).empty()) return kExitRegression;
//
// Why frames by name rather than by stack: a procedure that got slower is usually called from
// several call paths; by stack its growth is split over those paths and may fall out of the top N,
// by name it shows once with its whole delta. The flame graph shows the paths.
//
// Thread-safety: plain values and functions; LoadBatch uses the client it is given.
#ifndef FLAMEFLEET_CLI_SUITE_DIFF_H_
#define FLAMEFLEET_CLI_SUITE_DIFF_H_

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/batch_client.h"
#include "cli/summary_file.h"
#include "nlohmann/json.hpp"
#include "profile/cycle_delta.h"
#include "profile/folded.h"
#include "profile/profile.h"

namespace flamefleet::cli {

// One side of a diff.
struct DiffInput {
  // kSummary: a summary file only, no stacks (`aggregate` is empty).
  enum class Kind { kProfile, kDirectory, kBatch, kSummary };
  Kind kind = Kind::kProfile;
  std::string label;                     // the argument as given
  profile::Profile aggregate;            // the whole side's profile
  std::map<std::string, uint64_t> jobs;  // total cycles per job (kDirectory, kBatch, kSummary)
  std::optional<Summary> summary;        // kSummary; kDirectory with a summary.json
};

// Loads a directory written by `flamefleet fetch` (or `run`): jobs/**/<name>.folded give the jobs
// (name = path under jobs/ without ".folded"), aggregate.folded the aggregate (the sum of the jobs
// if it is missing), summary.json (kBatchSummaryFileName), if present, the summary; a directory
// with a summary.json and no folded files is a kSummary side. Returns InvalidArgument if it has
// neither, the reader's errors (NotFound, DataLoss) for unreadable files, and ReadSummaryFile's
// for a bad summary.json.
absl::StatusOr<DiffInput> LoadOutputDirectory(const std::string& dir,
                                              const profile::FoldedReadOptions& options);

// Loads a job or batch summary file (ReadSummaryFile) as a side without stacks: jobs = a batch
// summary's jobs[] with their cycles (a job summary: its one job).
absl::StatusOr<DiffInput> LoadSummarySide(const std::string& path);

// Returns OK if the two sides can be compared: either both have stacks (any kind but kSummary),
// or both have a summary (then jobs, frames and procedures come from the summaries). Otherwise
// InvalidArgument naming the side without stacks and the one without a summary.
absl::Status CheckComparable(const DiffInput& before, const DiffInput& after);

// Loads batch `batch_id` through `client`: the aggregate profile (BatchClient::FetchProfile) and
// the total cycles of every succeeded job; jobs that did not succeed are absent. Returns
// FailedPrecondition if the batch is still running, and the RPC errors (NotFound for an unknown
// batch, Unavailable if the coordinator cannot be reached).
absl::StatusOr<DiffInput> LoadBatch(BatchClient& client, const std::string& batch_id);

// The change of one job's (or one frame's) cycles: profile/cycle_delta.h, shared with the
// coordinator's web view of a diff.
using profile::CycleDelta;

// The change of one procedure of the aggregates: self and inclusive cycles (cli/top.h: inclusive
// counts a recursive stack once).
struct ProcedureDelta {
  std::string name;
  CycleDelta self;
  CycleDelta inclusive;
};

// The comparison of two sides.
struct SuiteDiff {
  std::vector<CycleDelta> jobs;     // jobs on both sides, by delta descending, then name
  std::vector<CycleDelta> added;    // only in AFTER (before = 0), by name
  std::vector<CycleDelta> removed;  // only in BEFORE (after = 0), by name
  std::vector<CycleDelta> frames;   // aggregate self cycles by frame name, delta descending
  // Every procedure of either aggregate, by inclusive delta descending, then self delta, then name.
  std::vector<ProcedureDelta> procedures;
  uint64_t before_total = 0;
  uint64_t after_total = 0;
  // Phases (total cycles summed over the jobs), only if both sides have a summary (has_phases;
  // else no_phases_reason says which side has none).
  bool has_phases = false;
  std::string no_phases_reason;
  std::vector<CycleDelta> phases;          // on both sides, by delta descending, then name
  std::vector<CycleDelta> phases_added;    // only in AFTER, by name
  std::vector<CycleDelta> phases_removed;  // only in BEFORE, by name
  // Per phase (on both sides), its total in each job that is on both sides and has the phase on
  // both (row name = the job), when both sides are batch summaries; by delta descending.
  std::map<std::string, std::vector<CycleDelta>> job_phases;
  // Trace shape (docs/trace-shape.md), only if both sides are summaries of jobs with a trace
  // shape (has_trace; else no_trace_reason): per job on both sides that has one on both, its
  // padded length, by delta descending (jobs named as in `jobs`); and the rows of each kind
  // (hasher, ..., chiplets), then "core", "core height", "chiplets height" and "padded", summed
  // over those jobs, in that order.
  bool has_trace = false;
  std::string no_trace_reason;
  std::vector<CycleDelta> job_padded;
  std::vector<CycleDelta> trace;
};

// The job name used when a side is a single profile (a folded file or a program): then both sides
// are compared as one job of this name.
inline constexpr char kWholeProfileJob[] = "(whole profile)";

// Compares `before` and `after` (which CheckComparable must accept). If either side is
// Kind::kProfile or a job summary, each side counts as one job, kWholeProfileJob, with its total.
// When either side is kSummary, jobs, frames (procedures' self cycles) and procedures come from
// the summaries, else from the stacks.
SuiteDiff CompareSuites(const DiffInput& before, const DiffInput& after);

// Returns the jobs on both sides whose total cycles grew by more than `percent` percent (a job that
// had 0 cycles and now has some grew by +infinity). Added and removed jobs never count: a new
// benchmark is not a regression of an old one.
std::vector<CycleDelta> JobsAbove(const SuiteDiff& diff, double percent);

// One regression gate of `diff --fail-above`: the metric and the percentage it may grow by.
//   "PCT" or "cycles=PCT"  every job on both sides (its total cycles), as JobsAbove;
//   "proc:NAME=PCT"        the inclusive cycles of procedure NAME in the aggregate;
//   "phase:NAME=PCT"       the total cycles of phase NAME summed over the jobs, and (batch
//                          summaries) in every job that has it on both sides.
//   "padded:PCT" or "padded=PCT"  every job's padded trace length (summaries with a trace
//                          shape); padded:0 fails when any job's padded length grew.
struct Gate {
  enum class Metric { kJobCycles, kProcedure, kPhase, kPadded };
  Metric metric = Metric::kJobCycles;
  std::string procedure;  // kProcedure
  std::string phase;      // kPhase
  double percent = 0;
  // Returns the metric as written: "cycles", "proc:NAME", "phase:NAME" or "padded".
  std::string MetricName() const;
};

// Parses one --fail-above value. InvalidArgument for a bad percentage or an unknown metric (the
// message lists the known ones); a NAME may itself hold '=' (the percentage follows the last).
absl::StatusOr<Gate> ParseGate(absl::string_view spec);

// Returns what grew by more than gate.percent percent: the jobs (JobsAbove), or the procedure's
// inclusive cycles as one row (0 before and some after is +infinity), or the phase's total as a
// row named NAME followed by the jobs' rows named "NAME in JOB". NotFound if the procedure or
// phase is in neither side (a misspelt name must not pass silently); FailedPrecondition for a
// phase or padded gate when a side has no summary (or no trace shape). A phase on one side only
// (added or removed) passes:
// GateNote says so.
absl::StatusOr<std::vector<CycleDelta>> GateRegressions(const SuiteDiff& diff, const Gate& gate);

// Returns why `gate` judged nothing although its metric exists ("phase:x is only in AFTER
// (added): not gated"), or "".
std::string GateNote(const SuiteDiff& diff, const Gate& gate);

// Prints the tables: the `top` jobs that grew most (name, before, after, delta, percent), added and
// removed jobs, the `top` frames whose self cycles grew most, the `top` phases by delta with the
// added and removed ones (if has_phases), and the totals.
void PrintSuiteDiff(const SuiteDiff& diff, size_t top, std::ostream& out);

// Returns the same as JSON: {"before_total", "after_total", "delta", "percent",
// "jobs": [every job on both sides, as printed order], "added", "removed",
// "frames": [top frames that grew], "procedures": [every procedure: {"name", "self": ROW,
// "inclusive": ROW}], "phases": [every phase on both sides: {"name", ROW..., "jobs": [{"name"
// (the job), ROW...}] (batch summaries only)}], "phases_added", "phases_removed": [{"name",
// ROW...}]}, where a ROW is {"before", "after", "delta", "percent"}; the phase lists are empty
// unless both sides have a summary. Percent is null where it is infinite.
nlohmann::json SuiteDiffJson(const SuiteDiff& diff, size_t top);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_SUITE_DIFF_H_
