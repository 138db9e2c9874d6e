// The web view's pages, rendered from plain data (coordinator/web/web_server.h fetches it from
// the BatchManager; tests and the benchmark can call these directly). Every string that comes
// from a batch, a job or an error goes through Html() (html.h); links through UrlPath/UrlQuery.
//
//   BatchPageData data{.batch = manager.GetBatch("7", true).value(), .jobs_per_page = 500};
//   std::string html = RenderBatchPage(data);
//
// Thread-safety: pure functions.
#ifndef FLAMEFLEET_COORDINATOR_WEB_INTERNAL_PAGES_H_
#define FLAMEFLEET_COORDINATOR_WEB_INTERNAL_PAGES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "flamefleet/v1/coordinator.pb.h"
#include "profile/cycle_delta.h"

namespace flamefleet::coordinator::web::internal {

// Returns "RUNNING", "SUCCEEDED", ... (the names `flamefleet list --state` takes).
std::string StateName(v1::BatchState state);
std::string StateName(v1::JobState state);

// The batch list's filters, as validated from the query (`flamefleet list` semantics).
struct ListQuery {
  std::vector<std::pair<std::string, std::string>> labels;  // label=KEY=VALUE, all must match
  v1::BatchState state = v1::BATCH_STATE_UNSPECIFIED;       // state=NAME
  uint32_t limit = 100;                                     // limit=N
  // Returns the query string ("label=a%3Db&state=FAILED"), without '?'.
  std::string QueryString() const;
};

// Returns what changes when the list changes (ids, states, counts): the live-update signature.
std::string ListSignature(const std::vector<v1::Batch>& batches);
// Returns what changes while a batch runs (state, counts).
std::string BatchSignature(const v1::Batch& batch);

// GET /: the batches, newest first, with the filter form; `now_ms` gives running batches their
// duration so far.
std::string RenderBatchList(const std::vector<v1::Batch>& batches, const ListQuery& query,
                            int64_t now_ms, int poll_ms);

// GET /api/batches: {"signature", "batches": [{"id", "state", "labels", counts...}]}.
std::string BatchListJson(const std::vector<v1::Batch>& batches);
// GET /api/batches/ID: {"signature", "batch": {...}} (no jobs).
std::string BatchJson(const v1::Batch& batch);

// The job table's order.
enum class JobSort { kIndex, kName, kCycles, kDelta };

// One row of a summary table (summary.json's "procedures" and "phases").
struct SummaryProcedure {
  std::string name;
  uint64_t calls = 0, self = 0, inclusive = 0;
  double self_share = 0, inclusive_share = 0;
};
struct SummaryPhase {
  std::string name;
  uint64_t jobs = 0, count = 0, total = 0, min = 0, max = 0;
  bool open = false;
};
// One row kind of a batch's trace_totals: its rows and the rows of no procedure.
struct TraceKindRows {
  std::string kind;  // "hasher", "bitwise", "memory", "ace", "range", "chiplets"
  uint64_t rows = 0, overhead = 0;
};
// A procedure's trace rows summed over the batch (summary.json's procedures[].trace).
struct TraceProcedure {
  std::string name;
  uint64_t chiplets_self = 0, chiplets_inclusive = 0;
  uint64_t hasher = 0, bitwise = 0, memory = 0, ace = 0, range = 0;  // self
};
// A batch's trace_totals (docs/summary.md): sums over its jobs with a trace shape.
struct BatchTraceTotals {
  uint64_t jobs = 0;  // 0: no job has a trace shape (the rest is empty)
  uint64_t core_rows = 0, padded_len = 0;
  std::vector<TraceKindRows> kinds;
  std::vector<TraceProcedure> procedures;  // the most chiplets self rows first (bounded)
  size_t procedures_total = 0;             // procedures with trace rows
};

// The batch summary's tables as the page shows them (at most a bounded number of rows).
struct SummaryTables {
  std::string note;  // why there are none ("" if there are)
  std::vector<SummaryProcedure> procedures;
  size_t procedures_total = 0;  // rows in summary.json (the page shows the first ones)
  std::vector<SummaryPhase> phases;
  size_t phases_total = 0;
  BatchTraceTotals trace;
  std::map<std::string, uint64_t> padded;  // job -> its padded trace length (jobs with one)
};

struct BatchPageData {
  v1::Batch batch;                                // with its jobs
  std::string previous_id;                        // predecessor with the same labels, or ""
  std::map<std::string, uint64_t> previous_jobs;  // its succeeded jobs' cycles
  // Its jobs' padded trace lengths: a job whose padded length differs is marked.
  std::map<std::string, uint64_t> previous_padded;
  SummaryTables summary;
  JobSort sort = JobSort::kIndex;
  bool descending = false;
  size_t page = 1;  // 1-based
  size_t jobs_per_page = 500;
  int64_t now_ms = 0;
  int poll_ms = 2000;
};

// GET /batches/ID: progress, the job table (one page of it; with each job's padded trace length,
// marked when it differs from the previous batch's), the aggregate flamegraph and the summary
// tables (procedures, phases, trace shape). NotFound-free: the caller has the batch.
std::string RenderBatchPage(const BatchPageData& data);

// Returns the number of job pages for `jobs` jobs (at least 1).
size_t PageCount(size_t jobs, size_t jobs_per_page);

// A job's trace shape as its page shows it (summary.json's trace_shape).
struct JobTraceShape {
  uint64_t core_rows = 0, range_rows = 0;
  uint64_t hasher_rows = 0, hasher_requests = 0, hasher_states = 0;
  uint64_t bitwise_rows = 0, memory_rows = 0, ace_rows = 0, kernel_rom_rows = 0;
  uint64_t chiplets_rows = 0, core_height = 0, chiplets_height = 0, padded_len = 0;
  std::string bound;  // "core", "range" or "chiplets"
};

// Returns a padded length as "2^15" (the number itself if it is not a power of two).
std::string PaddedLength(uint64_t n);

struct JobPageData {
  std::string batch_id;
  v1::BatchState batch_state = v1::BATCH_STATE_UNSPECIFIED;
  std::string batch_signature;  // BatchSignature of the batch (live updates while it runs)
  v1::JobStatus job;
  std::string previous_id;                  // the batch's predecessor, or ""
  std::optional<uint64_t> previous_cycles;  // the job's cycles there, if it succeeded there
  std::optional<JobTraceShape> trace;       // the job's, if its summary has one
  std::optional<uint64_t> previous_padded;  // its padded length there, if it had one
};

// GET /batches/ID/jobs/NAME: state, cycles, final stack, error, trace shape, flamegraph and
// downloads.
std::string RenderJobPage(const JobPageData& data);

// What `flamefleet diff BEFORE AFTER` reports for two batches (profile/cycle_delta.h).
struct DiffPageData {
  std::string before_id, after_id;
  std::vector<profile::CycleDelta> jobs;     // on both sides, by delta descending
  std::vector<profile::CycleDelta> added;    // only in AFTER
  std::vector<profile::CycleDelta> removed;  // only in BEFORE
  std::vector<profile::CycleDelta> frames;   // every frame, by delta descending
  uint64_t before_total = 0, after_total = 0;
  size_t top = 10;       // rows of the "grew most" tables, as `diff --top`
  bool has_svg = false;  // both sides have cycles (else no differential graph)
};

// GET /diff?before=A&after=B: the tables of `flamefleet diff A B` and the differential graph.
std::string RenderDiffPage(const DiffPageData& data);

// The login form (`message` is shown above it, escaped; "" = none).
std::string RenderLoginPage(absl::string_view message);

// A page for an error status: "404 Not Found" and `message` (escaped).
std::string RenderErrorPage(int status, absl::string_view message);

}  // namespace flamefleet::coordinator::web::internal

#endif  // FLAMEFLEET_COORDINATOR_WEB_INTERNAL_PAGES_H_
