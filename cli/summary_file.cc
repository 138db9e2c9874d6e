#include "cli/summary_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "runner/run_stats.h"
#include "vm/vm.h"

namespace flamefleet::cli {
namespace {

using nlohmann::json;

constexpr char kUint[] = "expected a non-negative integer";

// Returns what `v` is, for "expected X, got Y".
std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
    case json::value_t::boolean:
    case json::value_t::null:
      return v.dump();
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return v.type_name();
  }
}

std::string Join(const std::string& path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

// Rejects nesting deeper than kMaxSummaryDepth before nlohmann builds the document (a file of
// '[' would otherwise become millions of nested arrays).
absl::Status CheckDepth(absl::string_view text, absl::string_view source) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxSummaryDepth) {
        return absl::ResourceExhaustedError(absl::StrCat(
            source, ": JSON nested deeper than ", kMaxSummaryDepth, " levels (not a summary)"));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

// Field access with errors that name the source and the JSON path; never throws.
class Decoder {
 public:
  explicit Decoder(absl::string_view source) : source_(source) {}

  absl::Status Error(const std::string& path, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", path, ": ", what));
  }

  absl::StatusOr<const json*> Field(const json& obj, const std::string& path, const char* key,
                                    absl::string_view expected) const {
    auto it = obj.find(key);
    if (it == obj.end()) return Error(Join(path, key), absl::StrCat("missing (", expected, ")"));
    return &*it;
  }

  absl::StatusOr<uint64_t> Uint(const json& obj, const std::string& path, const char* key) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, kUint));
    if (!v->is_number_unsigned()) {
      return Error(Join(path, key), absl::StrCat(kUint, ", got ", Describe(*v)));
    }
    return v->get<uint64_t>();
  }

  absl::StatusOr<std::string> String(const json& obj, const std::string& path,
                                     const char* key) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, "expected a string"));
    if (!v->is_string()) {
      return Error(Join(path, key), absl::StrCat("expected a string, got ", Describe(*v)));
    }
    return v->get<std::string>();
  }

  // A string or null ("" for null).
  absl::StatusOr<std::string> StringOrNull(const json& obj, const std::string& path,
                                           const char* key) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, "expected a string or null"));
    if (v->is_null()) return std::string();
    if (!v->is_string()) {
      return Error(Join(path, key), absl::StrCat("expected a string or null, got ", Describe(*v)));
    }
    return v->get<std::string>();
  }

  absl::StatusOr<bool> Bool(const json& obj, const std::string& path, const char* key) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, "expected true or false"));
    if (!v->is_boolean()) {
      return Error(Join(path, key), absl::StrCat("expected true or false, got ", Describe(*v)));
    }
    return v->get<bool>();
  }

  absl::StatusOr<const json*> Array(const json& obj, const std::string& path, const char* key,
                                    size_t limit) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, "expected an array"));
    if (!v->is_array()) {
      return Error(Join(path, key), absl::StrCat("expected an array, got ", Describe(*v)));
    }
    if (v->size() > limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          source_, ": ", Join(path, key), ": ", v->size(), " rows exceed the limit of ", limit));
    }
    return v;
  }

  absl::Status Object(const json& v, const std::string& path) const {
    if (v.is_object()) return absl::OkStatus();
    return Error(path, absl::StrCat("expected an object, got ", Describe(v)));
  }

  // Checks that `name` (of row `path`) was not seen before in its list.
  absl::Status Unique(absl::flat_hash_set<std::string>* seen, const std::string& name,
                      const std::string& path) const {
    if (seen->insert(name).second) return absl::OkStatus();
    return Error(Join(path, "name"), absl::StrCat("duplicate name \"", name, "\""));
  }

  absl::StatusOr<std::vector<SummaryProcedure>> Procedures(const json& obj, const std::string& path,
                                                           uint64_t cycles) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* list, Array(obj, path, "procedures", kMaxSummaryRows));
    std::vector<SummaryProcedure> out;
    out.reserve(list->size());
    absl::flat_hash_set<std::string> seen;
    for (size_t i = 0; i < list->size(); ++i) {
      const json& row = (*list)[i];
      const std::string p = absl::StrCat(Join(path, "procedures"), "[", i, "]");
      FLAMEFLEET_RETURN_IF_ERROR(Object(row, p));
      SummaryProcedure proc;
      FLAMEFLEET_ASSIGN_OR_RETURN(proc.name, String(row, p, "name"));
      FLAMEFLEET_RETURN_IF_ERROR(Unique(&seen, proc.name, p));
      FLAMEFLEET_ASSIGN_OR_RETURN(proc.calls, Uint(row, p, "calls"));
      FLAMEFLEET_ASSIGN_OR_RETURN(proc.self, Uint(row, p, "self"));
      FLAMEFLEET_ASSIGN_OR_RETURN(proc.inclusive, Uint(row, p, "inclusive"));
      if (proc.self > proc.inclusive) {
        return Error(Join(p, "self"),
                     absl::StrCat(proc.self, " exceeds inclusive ", proc.inclusive));
      }
      if (proc.inclusive > cycles) {
        return Error(Join(p, "inclusive"),
                     absl::StrCat(proc.inclusive, " exceeds the summary's cycles ", cycles));
      }
      // Read here, checked with the totals (TraceShape, TraceTotals).
      if (row.contains("trace")) {
        const std::string tp = Join(p, "trace");
        const json& trace = row["trace"];
        FLAMEFLEET_RETURN_IF_ERROR(Object(trace, tp));
        proc.has_trace = true;
        FLAMEFLEET_ASSIGN_OR_RETURN(proc.trace_self, Rows(trace, tp, "self"));
        FLAMEFLEET_ASSIGN_OR_RETURN(proc.trace_inclusive, Rows(trace, tp, "inclusive"));
        FLAMEFLEET_ASSIGN_OR_RETURN(proc.hasher_requests, Uint(trace, tp, "hasher_requests"));
        FLAMEFLEET_ASSIGN_OR_RETURN(proc.hasher_dedup_hits, Uint(trace, tp, "hasher_dedup_hits"));
      }
      out.push_back(std::move(proc));
    }
    return out;
  }

  // {"hasher": n, ..., "chiplets": n} at obj[key].
  absl::StatusOr<TraceRows> Rows(const json& obj, const std::string& path, const char* key) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* v, Field(obj, path, key, "expected an object"));
    const std::string p = Join(path, key);
    FLAMEFLEET_RETURN_IF_ERROR(Object(*v, p));
    TraceRows rows{};
    for (runner::TraceKind kind : runner::kAllTraceKinds) {
      const std::string name(runner::TraceKindName(kind));
      FLAMEFLEET_ASSIGN_OR_RETURN(rows[static_cast<size_t>(kind)], Uint(*v, p, name.c_str()));
    }
    return rows;
  }

  // An error of a check shared with the wire decoder ("FIELD: problem", FIELD relative to the
  // job or batch at `path`), as this reader's errors.
  absl::Status Shared(const std::string& path, const absl::Status& status) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": ", Join(path, std::string(status.message()))));
  }

  // The procedures' trace rows of `t` for the runner's checks: every procedure must have one.
  absl::StatusOr<std::vector<runner::ProcedureTraceShape>> ProcedureTraces(
      const SummaryTables& t, const std::string& path, absl::string_view totals) const {
    std::vector<runner::ProcedureTraceShape> out;
    out.reserve(t.procedures.size());
    for (size_t i = 0; i < t.procedures.size(); ++i) {
      const SummaryProcedure& p = t.procedures[i];
      if (!p.has_trace) {
        return Error(absl::StrCat(Join(path, "procedures"), "[", i, "].trace"),
                     absl::StrCat("missing (the summary has ", totals, ")"));
      }
      out.push_back({.name = p.name,
                     .self = p.trace_self,
                     .inclusive = p.trace_inclusive,
                     .hasher_requests = p.hasher_requests,
                     .hasher_dedup_hits = p.hasher_dedup_hits});
    }
    return out;
  }

  // Returns the first procedure of `t` with trace rows, or -1.
  static int FirstTraced(const SummaryTables& t) {
    for (size_t i = 0; i < t.procedures.size(); ++i) {
      if (t.procedures[i].has_trace) return static_cast<int>(i);
    }
    return -1;
  }

  // The job's optional trace_shape, checked as the wire decoder checks it (runner's
  // CheckTraceShape, by the rules of the job's dialect): its rows follow the rules, its heights,
  // padded_len and bound are right, and the procedures' trace rows add up to it.
  absl::Status TraceShape(const json& obj, const std::string& path, bool finished,
                          SummaryTables& t) const {
    if (!obj.contains("trace_shape")) {
      if (int i = FirstTraced(t); i >= 0) {
        return Error(Join(path, "trace_shape"),
                     absl::StrCat("missing (procedures[", i, "] has trace rows)"));
      }
      return absl::OkStatus();
    }
    const std::string p = Join(path, "trace_shape");
    const json& ts = obj["trace_shape"];
    FLAMEFLEET_RETURN_IF_ERROR(Object(ts, p));
    if (!finished) {
      return Error(p, "set, but the run ended with an error (only a run that finished has one)");
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(std::string dialect, String(obj, path, "dialect"));
    absl::StatusOr<const vm::TraceShapeRules*> rules = runner::TraceShapeRulesOf(dialect);
    if (!rules.ok()) return Shared(path, rules.status());
    runner::TraceShapeStats stats;
    stats.rules = *rules;
    vm::TraceShape& v = stats.totals;
    v.cycles = t.cycles;
    FLAMEFLEET_ASSIGN_OR_RETURN(v.core_rows, Uint(ts, p, "core_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.range_rows, Uint(ts, p, "range_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* hasher, Field(ts, p, "hasher", "expected an object"));
    const std::string hp = Join(p, "hasher");
    FLAMEFLEET_RETURN_IF_ERROR(Object(*hasher, hp));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.hasher_requests, Uint(*hasher, hp, "requests"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.hasher_states, Uint(*hasher, hp, "states"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.hasher_controller_rows, Uint(*hasher, hp, "controller_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.hasher_controller_padding,
                                Uint(*hasher, hp, "controller_padding"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.hasher_permutation_rows, Uint(*hasher, hp, "permutation_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.hasher_rows, Uint(*hasher, hp, "rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.bitwise_rows, Uint(ts, p, "bitwise_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.memory_rows, Uint(ts, p, "memory_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.ace_rows, Uint(ts, p, "ace_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.kernel_rom_rows, Uint(ts, p, "kernel_rom_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.chiplets_rows, Uint(ts, p, "chiplets_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.core_height, Uint(ts, p, "core_height"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.chiplets_height, Uint(ts, p, "chiplets_height"));
    FLAMEFLEET_ASSIGN_OR_RETURN(v.padded_len, Uint(ts, p, "padded_len"));
    FLAMEFLEET_ASSIGN_OR_RETURN(std::string bound, String(ts, p, "bound"));
    absl::StatusOr<vm::TraceBound> parsed = runner::ParseTraceBound(bound);
    if (!parsed.ok()) return Error(Join(p, "bound"), parsed.status().message());
    v.bound = *parsed;
    FLAMEFLEET_ASSIGN_OR_RETURN(stats.overhead, Rows(ts, p, "overhead"));
    FLAMEFLEET_ASSIGN_OR_RETURN(stats.procedures, ProcedureTraces(t, path, "a trace_shape"));
    if (absl::Status st = runner::CheckTraceShape(stats, t.cycles); !st.ok()) {
      return Shared(path, st);
    }

    SummaryTraceShape shape;
    for (runner::TraceKind kind : runner::kAllTraceKinds) {
      shape.totals[static_cast<size_t>(kind)] = stats.Total(kind);
    }
    shape.overhead = stats.overhead;
    shape.core_rows = v.core_rows;
    shape.core_height = v.core_height;
    shape.chiplets_height = v.chiplets_height;
    shape.padded_len = v.padded_len;
    shape.bound = std::move(bound);
    t.trace_shape = std::move(shape);
    return absl::OkStatus();
  }

  // A batch's optional trace_totals: the sums over its jobs with a trace shape, and the
  // procedures' trace rows (summed by name) adding up to them.
  absl::Status TraceTotals(const json& doc, const std::vector<SummaryJob>& jobs,
                           SummaryTables& t) const {
    if (!doc.contains("trace_totals")) {
      if (int i = FirstTraced(t); i >= 0) {
        return Error("trace_totals", absl::StrCat("missing (procedures[", i, "] has trace rows)"));
      }
      return absl::OkStatus();
    }
    const std::string p = "trace_totals";
    const json& tt = doc["trace_totals"];
    FLAMEFLEET_RETURN_IF_ERROR(Object(tt, p));
    SummaryTraceShape shape;
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.jobs, Uint(tt, p, "jobs"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.core_rows, Uint(tt, p, "core_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.padded_len, Uint(tt, p, "padded_len"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.totals, Rows(tt, p, "rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.overhead, Rows(tt, p, "overhead"));
    // The sums over the jobs (saturating, as the writer sums).
    auto add = [](uint64_t& sum, uint64_t v) {
      if (__builtin_add_overflow(sum, v, &sum)) sum = UINT64_MAX;
    };
    SummaryTraceShape sums;
    sums.jobs = 0;
    for (const SummaryJob& job : jobs) {
      if (!job.tables.trace_shape.has_value()) continue;
      const SummaryTraceShape& j = *job.tables.trace_shape;
      ++sums.jobs;
      add(sums.core_rows, j.core_rows);
      add(sums.padded_len, j.padded_len);
      for (size_t k = 0; k < runner::kNumTraceKinds; ++k) {
        add(sums.totals[k], j.totals[k]);
        add(sums.overhead[k], j.overhead[k]);
      }
    }
    auto expect = [&](const std::string& field, uint64_t got, uint64_t want) -> absl::Status {
      if (got == want) return absl::OkStatus();
      return Error(field, absl::StrCat("expected the sum over the jobs with a trace_shape (", want,
                                       "), got ", got));
    };
    FLAMEFLEET_RETURN_IF_ERROR(expect(Join(p, "jobs"), shape.jobs, sums.jobs));
    FLAMEFLEET_RETURN_IF_ERROR(expect(Join(p, "core_rows"), shape.core_rows, sums.core_rows));
    FLAMEFLEET_RETURN_IF_ERROR(expect(Join(p, "padded_len"), shape.padded_len, sums.padded_len));
    for (runner::TraceKind kind : runner::kAllTraceKinds) {
      const size_t k = static_cast<size_t>(kind);
      const std::string name(runner::TraceKindName(kind));
      FLAMEFLEET_RETURN_IF_ERROR(
          expect(Join(Join(p, "rows"), name), shape.totals[k], sums.totals[k]));
      FLAMEFLEET_RETURN_IF_ERROR(
          expect(Join(Join(p, "overhead"), name), shape.overhead[k], sums.overhead[k]));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(std::vector<runner::ProcedureTraceShape> procedures,
                                ProcedureTraces(t, "", "trace_totals"));
    if (absl::Status st =
            runner::CheckTraceAttribution(shape.totals, shape.overhead, procedures, p);
        !st.ok()) {
      return Shared("", st);
    }
    t.trace_shape = std::move(shape);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<SummaryCounted>> Counted(const json& obj, const std::string& path,
                                                      const char* key, uint64_t cycles) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* list, Array(obj, path, key, kMaxSummaryRows));
    std::vector<SummaryCounted> out;
    out.reserve(list->size());
    absl::flat_hash_set<std::string> seen;
    for (size_t i = 0; i < list->size(); ++i) {
      const json& row = (*list)[i];
      const std::string p = absl::StrCat(Join(path, key), "[", i, "]");
      FLAMEFLEET_RETURN_IF_ERROR(Object(row, p));
      SummaryCounted c;
      FLAMEFLEET_ASSIGN_OR_RETURN(c.name, String(row, p, "name"));
      FLAMEFLEET_RETURN_IF_ERROR(Unique(&seen, c.name, p));
      FLAMEFLEET_ASSIGN_OR_RETURN(c.count, Uint(row, p, "count"));
      FLAMEFLEET_ASSIGN_OR_RETURN(c.cycles, Uint(row, p, "cycles"));
      if (c.cycles > cycles) {
        return Error(Join(p, "cycles"),
                     absl::StrCat(c.cycles, " exceeds the summary's cycles ", cycles));
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  // `batch`: rows also carry "jobs".
  absl::StatusOr<std::vector<SummaryPhase>> Phases(const json& obj, const std::string& path,
                                                   bool batch) const {
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* list, Array(obj, path, "phases", kMaxSummaryRows));
    std::vector<SummaryPhase> out;
    out.reserve(list->size());
    absl::flat_hash_set<std::string> seen;
    for (size_t i = 0; i < list->size(); ++i) {
      const json& row = (*list)[i];
      const std::string p = absl::StrCat(Join(path, "phases"), "[", i, "]");
      FLAMEFLEET_RETURN_IF_ERROR(Object(row, p));
      SummaryPhase ph;
      FLAMEFLEET_ASSIGN_OR_RETURN(ph.name, String(row, p, "name"));
      FLAMEFLEET_RETURN_IF_ERROR(Unique(&seen, ph.name, p));
      if (batch) {
        FLAMEFLEET_ASSIGN_OR_RETURN(ph.jobs, Uint(row, p, "jobs"));
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(ph.count, Uint(row, p, "count"));
      FLAMEFLEET_ASSIGN_OR_RETURN(ph.total, Uint(row, p, "total"));
      FLAMEFLEET_ASSIGN_OR_RETURN(ph.min, Uint(row, p, "min"));
      FLAMEFLEET_ASSIGN_OR_RETURN(ph.max, Uint(row, p, "max"));
      FLAMEFLEET_ASSIGN_OR_RETURN(ph.open, Bool(row, p, "open"));
      if (ph.min > ph.max) {
        return Error(Join(p, "min"), absl::StrCat(ph.min, " exceeds max ", ph.max));
      }
      if (ph.max > ph.total) {
        return Error(Join(p, "max"), absl::StrCat(ph.max, " exceeds total ", ph.total));
      }
      out.push_back(std::move(ph));
    }
    return out;
  }

  // One flamefleet.summary/1 object at `path` ("" for the document itself).
  absl::StatusOr<SummaryJob> Job(const json& obj, const std::string& path) const {
    FLAMEFLEET_RETURN_IF_ERROR(Object(obj, path.empty() ? "(document)" : path));
    FLAMEFLEET_ASSIGN_OR_RETURN(std::string schema, String(obj, path, "schema"));
    if (schema != kJobSummarySchema) {
      return Error(Join(path, "schema"),
                   absl::StrCat("expected \"", kJobSummarySchema, "\", got \"", schema, "\""));
    }
    SummaryJob job;
    FLAMEFLEET_ASSIGN_OR_RETURN(job.name, String(obj, path, "job"));
    FLAMEFLEET_ASSIGN_OR_RETURN(job.status, String(obj, path, "status"));
    if (job.status != "ok" && job.status != "error") {
      return Error(Join(path, "status"),
                   absl::StrCat("expected \"ok\" or \"error\", got \"", job.status, "\""));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* error,
                                Field(obj, path, "error", "expected null or {code, message}"));
    if (job.status == "error") {
      const std::string p = Join(path, "error");
      FLAMEFLEET_RETURN_IF_ERROR(Object(*error, p));
      FLAMEFLEET_ASSIGN_OR_RETURN(job.error, String(*error, p, "message"));
    } else if (!error->is_null()) {
      return Error(Join(path, "error"),
                   absl::StrCat("expected null for status \"ok\", got ", Describe(*error)));
    }
    SummaryTables& t = job.tables;
    FLAMEFLEET_ASSIGN_OR_RETURN(t.cycles, Uint(obj, path, "cycles"));
    FLAMEFLEET_ASSIGN_OR_RETURN(t.procedures, Procedures(obj, path, t.cycles));
    FLAMEFLEET_ASSIGN_OR_RETURN(t.instructions, Counted(obj, path, "instructions", t.cycles));
    FLAMEFLEET_ASSIGN_OR_RETURN(t.operations, Counted(obj, path, "operations", t.cycles));
    FLAMEFLEET_ASSIGN_OR_RETURN(t.phases, Phases(obj, path, /*batch=*/false));
    FLAMEFLEET_RETURN_IF_ERROR(TraceShape(obj, path, job.status == "ok", t));
    return job;
  }

  absl::StatusOr<Summary> Batch(const json& doc) const {
    Summary s;
    s.kind = Summary::Kind::kBatch;
    FLAMEFLEET_ASSIGN_OR_RETURN(s.batch, String(doc, "", "batch"));
    FLAMEFLEET_ASSIGN_OR_RETURN(s.state, String(doc, "", "state"));
    if (s.state != "succeeded" && s.state != "failed" && s.state != "cancelled" &&
        s.state != "running") {
      return Error("state", absl::StrCat("expected succeeded, failed, cancelled or running, got \"",
                                         s.state, "\""));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(s.totals.cycles, Uint(doc, "", "cycles"));
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* jobs, Array(doc, "", "jobs", kMaxSummaryJobs));
    absl::flat_hash_set<std::string> names;
    uint64_t sum = 0;
    for (size_t i = 0; i < jobs->size(); ++i) {
      const std::string p = absl::StrCat("jobs[", i, "]");
      FLAMEFLEET_ASSIGN_OR_RETURN(SummaryJob job, Job((*jobs)[i], p));
      if (!names.insert(job.name).second) {
        return Error(Join(p, "job"), absl::StrCat("duplicate job \"", job.name, "\""));
      }
      if (__builtin_add_overflow(sum, job.tables.cycles, &sum)) {
        return Error(Join(p, "cycles"), "the sum of the jobs' cycles overflows 64 bits");
      }
      s.jobs.push_back(std::move(job));
    }
    if (sum != s.totals.cycles) {
      return Error("cycles", absl::StrCat("expected the sum of jobs[].cycles (", sum, "), got ",
                                          s.totals.cycles));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* without,
                                Array(doc, "", "without_summary", kMaxSummaryRows));
    for (size_t i = 0; i < without->size(); ++i) {
      const json& row = (*without)[i];
      const std::string p = absl::StrCat("without_summary[", i, "]");
      FLAMEFLEET_RETURN_IF_ERROR(Object(row, p));
      JobWithoutSummary w;
      FLAMEFLEET_ASSIGN_OR_RETURN(w.name, String(row, p, "job"));
      if (!names.insert(w.name).second) {
        return Error(Join(p, "job"), absl::StrCat("duplicate job \"", w.name, "\""));
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(w.state, String(row, p, "state"));
      FLAMEFLEET_ASSIGN_OR_RETURN(w.error, StringOrNull(row, p, "error"));
      s.without_summary.push_back(std::move(w));
    }
    SummaryTables& t = s.totals;
    FLAMEFLEET_ASSIGN_OR_RETURN(t.procedures, Procedures(doc, "", t.cycles));
    FLAMEFLEET_ASSIGN_OR_RETURN(t.instructions, Counted(doc, "", "instructions", t.cycles));
    FLAMEFLEET_ASSIGN_OR_RETURN(t.operations, Counted(doc, "", "operations", t.cycles));
    FLAMEFLEET_ASSIGN_OR_RETURN(t.phases, Phases(doc, "", /*batch=*/true));
    FLAMEFLEET_RETURN_IF_ERROR(TraceTotals(doc, s.jobs, t));
    return s;
  }

 private:
  std::string source_;
};

absl::StatusOr<Summary> Decode(const json& doc, absl::string_view source) {
  const Decoder d(source);
  if (!doc.is_object()) {
    return d.Error("(document)", absl::StrCat("expected an object, got ", Describe(doc)));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string schema, d.String(doc, "", "schema"));
  if (schema == kBatchSummarySchema) return d.Batch(doc);
  if (schema != kJobSummarySchema) {
    return d.Error("schema", absl::StrCat("expected \"", kJobSummarySchema, "\" or \"",
                                          kBatchSummarySchema, "\", got \"", schema, "\""));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(SummaryJob job, d.Job(doc, ""));
  Summary s;
  s.kind = Summary::Kind::kJob;
  s.batch = "";
  s.state = job.status;
  s.totals = job.tables;
  s.jobs.push_back(std::move(job));
  return s;
}

}  // namespace

const SummaryJob* Summary::FindJob(absl::string_view name) const {
  for (const SummaryJob& job : jobs) {
    if (job.name == name) return &job;
  }
  return nullptr;
}

absl::StatusOr<Summary> ParseSummary(absl::string_view text, absl::string_view source,
                                     const SummaryReadOptions& options) {
  if (text.size() > options.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(source, ": ", text.size(),
                                                     " bytes exceed the summary limit of ",
                                                     options.max_bytes, " bytes"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(CheckDepth(text, source));
  try {
    json doc = json::parse(text.begin(), text.end());
    absl::StatusOr<Summary> s = Decode(doc, source);
    if (s.ok()) s->source = std::string(source);
    return s;
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    return absl::InvalidArgumentError(absl::StrCat(source, ": not valid JSON: ", what));
  } catch (const json::exception& e) {
    // Decode checks types before every access; this is the net under it.
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", e.what()));
  }
}

absl::StatusOr<Summary> ReadSummaryFile(const std::string& path,
                                        const SummaryReadOptions& options) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(path, ": ", ec.message()));
  if (size > options.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": ", size, " bytes exceed the summary limit of ", options.max_bytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string text;
  text.resize(static_cast<size_t>(size));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (static_cast<size_t>(in.gcount()) != text.size()) {
    return absl::DataLossError(absl::StrCat(path, ": short read"));
  }
  return ParseSummary(text, path, options);
}

}  // namespace flamefleet::cli
