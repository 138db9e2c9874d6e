// Suite-level differential profiles for `flamefleet diff`: each side is a folded file (or a .masm
// program), a fetched output directory (aggregate.folded + jobs/**/<name>.folded, as
// `flamefleet fetch` writes) or a batch id on a coordinator. The comparison gives per-job
// total-cycle deltas (jobs matched by name; jobs on one side only are "added" or "removed"), the
// frames whose self cycles grew most in the aggregate (summed by frame name), and the regression
// gate of `--fail-above [METRIC=]PCT` (per-job cycles, or a procedure's inclusive cycles), and
// per-procedure self and inclusive deltas for `--json`.
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
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/batch_client.h"
#include "nlohmann/json.hpp"
#include "profile/folded.h"
#include "profile/profile.h"

namespace flamefleet::cli {

// One side of a diff.
struct DiffInput {
  enum class Kind { kProfile, kDirectory, kBatch };
  Kind kind = Kind::kProfile;
  std::string label;                     // the argument as given
  profile::Profile aggregate;            // the whole side's profile
  std::map<std::string, uint64_t> jobs;  // total cycles per job (kDirectory, kBatch only)
};

// Loads a directory written by `flamefleet fetch` (or `run`): jobs/**/<name>.folded give the jobs
// (name = path under jobs/ without ".folded"), aggregate.folded the aggregate (the sum of the jobs
// if it is missing). Returns InvalidArgument if the directory has neither, and the reader's errors
// (NotFound, DataLoss) for unreadable files.
absl::StatusOr<DiffInput> LoadOutputDirectory(const std::string& dir,
                                              const profile::FoldedReadOptions& options);

// Loads batch `batch_id` through `client`: the aggregate profile (BatchClient::FetchProfile) and
// the total cycles of every succeeded job; jobs that did not succeed are absent. Returns
// FailedPrecondition if the batch is still running, and the RPC errors (NotFound for an unknown
// batch, Unavailable if the coordinator cannot be reached).
absl::StatusOr<DiffInput> LoadBatch(BatchClient& client, const std::string& batch_id);

// The change of one job's (or one frame's) cycles.
struct CycleDelta {
  std::string name;
  uint64_t before = 0;
  uint64_t after = 0;
  int64_t delta() const { return static_cast<int64_t>(after) - static_cast<int64_t>(before); }
  // Returns 100 * delta / before; +infinity if before is 0 and after is not; 0 if both are 0.
  double percent() const;
};

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
};

// The job name used when a side is a single profile (a folded file or a program): then both sides
// are compared as one job of this name.
inline constexpr char kWholeProfileJob[] = "(whole profile)";

// Compares `before` and `after`. If either side is Kind::kProfile, each side counts as one job,
// kWholeProfileJob, with its aggregate's total.
SuiteDiff CompareSuites(const DiffInput& before, const DiffInput& after);

// Returns the jobs on both sides whose total cycles grew by more than `percent` percent (a job that
// had 0 cycles and now has some grew by +infinity). Added and removed jobs never count: a new
// benchmark is not a regression of an old one.
std::vector<CycleDelta> JobsAbove(const SuiteDiff& diff, double percent);

// One regression gate of `diff --fail-above`: the metric and the percentage it may grow by.
//   "PCT" or "cycles=PCT"  every job on both sides (its total cycles), as JobsAbove;
//   "proc:NAME=PCT"        the inclusive cycles of procedure NAME in the aggregate.
struct Gate {
  enum class Metric { kJobCycles, kProcedure };
  Metric metric = Metric::kJobCycles;
  std::string procedure;  // kProcedure
  double percent = 0;
  // Returns the metric as written: "cycles" or "proc:NAME".
  std::string MetricName() const;
};

// Parses one --fail-above value. InvalidArgument for a bad percentage or an unknown metric (the
// message lists the known ones); a NAME may itself hold '=' (the percentage follows the last).
absl::StatusOr<Gate> ParseGate(absl::string_view spec);

// Returns what grew by more than gate.percent percent: the jobs (JobsAbove), or the procedure's
// inclusive cycles as one row (0 before and some after is +infinity). NotFound if the procedure
// is in neither aggregate (a misspelt name must not pass silently).
absl::StatusOr<std::vector<CycleDelta>> GateRegressions(const SuiteDiff& diff, const Gate& gate);

// Prints the tables: the `top` jobs that grew most (name, before, after, delta, percent), added and
// removed jobs, the `top` frames whose self cycles grew most, and the totals.
void PrintSuiteDiff(const SuiteDiff& diff, size_t top, std::ostream& out);

// Returns the same as JSON: {"before_total", "after_total", "delta", "percent",
// "jobs": [every job on both sides, as printed order], "added", "removed",
// "frames": [top frames that grew], "procedures": [every procedure: {"name", "self": ROW,
// "inclusive": ROW}]}, where a ROW is {"before", "after", "delta", "percent"}. Percent is null
// where it is infinite.
nlohmann::json SuiteDiffJson(const SuiteDiff& diff, size_t top);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_SUITE_DIFF_H_
