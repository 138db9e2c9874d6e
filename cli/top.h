// `flamefleet top`: the procedures of a cycle profile or of a summary.json as a table, like
// `pprof -top`, and the per-procedure numbers it is made of (also used by `diff --json` and
// `--fail-above proc:NAME`); on a summary also its instructions, operations and phases.
//
// From a profile (folded stacks), a procedure's numbers are summed over every stack by frame name:
//  - self cycles: the cycles charged while it was the innermost frame;
//  - inclusive cycles: the cycles of every stack it is on, a stack counted once even if the
//    name appears on it several times (recursion), so inclusive never exceeds the total.
// Cycles charged to the root (stacks with no frame) are the procedure "[unknown]"; cycles pruned
// away from a profile are "[hidden]" (self only). Self cycles of all rows add up to the total.
// A summary (cli/summary_file.h) carries the same two numbers, computed by the runner, plus the
// calls of each procedure, so only a summary can be sorted `--by calls`.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(TopInput in, LoadTopInput("out/", "", sources));
//   ProcedureTable table = in.tables ? ProcedureTableFromSummary(*in.tables)
//                                    : ComputeProcedureTable(in.profile);
//   FLAMEFLEET_RETURN_IF_ERROR(CheckTopOrder(TopOrder::kCalls, table, in.label));
//   SortProcedures(TopOrder::kCalls, &table.rows);
//   PrintTop(table, /*limit=*/20, std::cout);
//
// Thread-safety: plain values and pure functions (LoadTopInput calls the sources it is given).
#ifndef FLAMEFLEET_CLI_TOP_H_
#define FLAMEFLEET_CLI_TOP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/summary_file.h"
#include "nlohmann/json.hpp"
#include "profile/profile.h"

namespace flamefleet::cli {

// One procedure (frame name) of a profile.
struct ProcedureCycles {
  std::string name;
  uint64_t self = 0;
  uint64_t inclusive = 0;  // recursion counted once per stack
  uint64_t calls = 0;      // frame entries; only when the table has_calls
};

// Every procedure of a profile with its total.
struct ProcedureTable {
  uint64_t total = 0;
  std::string unit = "cycles";        // what self, inclusive and total count ("hasher rows")
  bool has_calls = false;             // from a summary: `calls` is known
  std::vector<ProcedureCycles> rows;  // by name
};

// Returns the procedures of `p` (see the file comment). O(nodes + frames); the tree is walked
// iteratively, so deep recursion in the profile needs no deep native stack.
ProcedureTable ComputeProcedureTable(const profile::Profile& p);

// Returns the procedures of a summary's tables (has_calls set; total = its cycles), by name.
ProcedureTable ProcedureTableFromSummary(const SummaryTables& tables);

// Returns the procedures of a job summary's trace shape weighted by `kind` (docs/trace-shape.md):
// self and inclusive rows of that kind, calls, and a row kTraceOverheadFrame for the rows of no
// procedure; total = the kind's total, unit "KIND rows". FailedPrecondition naming `input` if
// the tables have no trace shape.
absl::StatusOr<ProcedureTable> TraceTableFromSummary(const SummaryTables& tables,
                                                     runner::TraceKind kind,
                                                     absl::string_view input);

// Returns the same as a map from name to its numbers.
std::map<std::string, ProcedureCycles> ProceduresByName(const profile::Profile& p);

// The column `top --by` sorts on.
enum class TopOrder { kSelf, kInclusive, kCalls };

// Parses `--by`: "self", "inclusive" or "calls"; anything else InvalidArgument listing them
// (trace row kinds are parsed by runner::ParseTraceKind first).
absl::StatusOr<TopOrder> ParseTopOrder(absl::string_view by);

// Returns OK if `table` can be sorted by `order`. kCalls on a table without calls (from a
// profile) is InvalidArgument naming `input` and saying that call counts come with a
// summary.json.
absl::Status CheckTopOrder(TopOrder order, const ProcedureTable& table, absl::string_view input);

// Sorts `rows` by the `order` column, largest first; ties by inclusive, then self (kCalls), or by
// the other cycle column, then by name.
void SortProcedures(TopOrder order, std::vector<ProcedureCycles>* rows);

// Prints the first `limit` rows of `table` (already sorted) as pprof -top does:
//   "Showing N of M procedures, T cycles total" then columns self, self%, sum% (the running sum
// of self%), inclusive, inclusive%, calls (only if table.has_calls), name.
void PrintTop(const ProcedureTable& table, size_t limit, std::ostream& out);

// Returns the same as JSON: {"total", "procedures" (M), "shown" (N), "rows": [{"name", "self",
// "self_percent", "cumulative_percent", "inclusive", "inclusive_percent", "calls" (only if
// has_calls)}]}.
nlohmann::json TopJson(const ProcedureTable& table, size_t limit);

// Sorts instruction or operation rows by cycles, largest first; ties by count, then name.
void SortCounted(std::vector<SummaryCounted>* rows);

// Prints the first `limit` of `rows` (already sorted; `total` = the summary's cycles, which the
// rows add up to): "Showing N of M <what>s, T cycles total" then columns cycles, cycles%, sum%,
// count, <what> ("instruction" or "operation").
void PrintCountedTop(const std::vector<SummaryCounted>& rows, uint64_t total,
                     absl::string_view what, size_t limit, std::ostream& out);

// Returns the same as JSON: {"total", "<what>s" (M), "shown" (N), "rows": [{"name", "count",
// "cycles", "percent", "cumulative_percent"}]}.
nlohmann::json CountedTopJson(const std::vector<SummaryCounted>& rows, uint64_t total,
                              absl::string_view what, size_t limit);

// Sorts phases by total cycles, largest first; ties by name.
void SortPhases(std::vector<SummaryPhase>* rows);

// Prints the first `limit` of `phases` (already sorted; `total` = the summary's cycles):
// "Showing N of M phases, T cycles total" then columns count, total, total%, min, max, mean,
// jobs (only if `batch`), phase; a phase with a span still open at the end of a program is
// marked "[open]" (and a last line explains the mark). Phases may nest, so there is no sum%.
void PrintPhases(const std::vector<SummaryPhase>& phases, uint64_t total, bool batch, size_t limit,
                 std::ostream& out);

// Returns the same as JSON: {"total", "phases" (M), "shown" (N), "rows": [{"name", "count",
// "total", "percent", "min", "max", "mean", "open", "jobs" (only if `batch`)}]}.
nlohmann::json PhasesJson(const std::vector<SummaryPhase>& phases, uint64_t total, bool batch,
                          size_t limit);

// Where `top` gets a batch's numbers for `batch:ID`. Either may be empty.
struct TopSources {
  // Returns the batch's summary.json text (flamefleet.batch-summary/1). NotFound or Unimplemented
  // mean the batch (or the coordinator) has none: `top` then uses batch_profile.
  std::function<absl::StatusOr<std::string>(const std::string& batch_id)> batch_summary;
  // Returns the profile of one job of the batch ("" = the aggregate).
  std::function<absl::StatusOr<profile::Profile>(const std::string& batch_id,
                                                 const std::string& job)>
      batch_profile;
};

// What `top` shows: a summary's tables when the input has one, else a profile.
struct TopInput {
  std::string label;               // the input as given
  std::optional<Summary> summary;  // the whole summary read, if any
  // The tables shown: the summary's totals, or the job's chosen by `job`; empty = use `profile`.
  std::optional<SummaryTables> tables;
  profile::Profile profile;
};

// Loads `input` for `top`, with `job` ("" = all) choosing one job:
//  - "batch:ID": sources.batch_summary's text if it has one, else sources.batch_profile;
//  - a directory: its summary.json (kBatchSummaryFileName) if present, else as `flamefleet fetch`
//    wrote it (aggregate.folded, jobs/**/<name>.folded); a `job` the summary does not list is
//    read from jobs/<job>.folded;
//  - a file ending in ".json": a job or batch summary (ReadSummaryFile);
//  - anything else: a folded file ("-" = stdin; `job` is then a usage error).
// Returns the readers' errors, NotFound for a job that is in neither the summary nor jobs/, and
// FailedPrecondition for a job the summary lists as having no summary (with its state and error).
absl::StatusOr<TopInput> LoadTopInput(const std::string& input, const std::string& job,
                                      const TopSources& sources);

// Registers `top INPUT` on `app`; its exit code goes to `*exit_code` (kept): 0, 1 for an input
// that cannot be read or a coordinator error, 2 for bad flags (and for --by calls,
// --by-instruction, --by-operation or --phases on an input without a summary).
void AddTopCommand(CLI::App& app, int* exit_code);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_TOP_H_
