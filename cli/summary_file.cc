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
      if (row.contains("trace")) {
        const std::string tp = Join(p, "trace");
        const json& trace = row["trace"];
        FLAMEFLEET_RETURN_IF_ERROR(Object(trace, tp));
        proc.has_trace = true;
        FLAMEFLEET_ASSIGN_OR_RETURN(proc.trace_self, Rows(trace, tp, "self"));
        FLAMEFLEET_ASSIGN_OR_RETURN(proc.trace_inclusive, Rows(trace, tp, "inclusive"));
        for (runner::TraceKind kind : runner::kAllTraceKinds) {
          const size_t k = static_cast<size_t>(kind);
          if (proc.trace_self[k] > proc.trace_inclusive[k]) {
            return Error(
                Join(Join(tp, "self"), std::string(runner::TraceKindName(kind)).c_str()),
                absl::StrCat(proc.trace_self[k], " exceeds inclusive ", proc.trace_inclusive[k]));
          }
        }
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

  // The job's optional trace_shape, checked against its procedures' trace rows: each kind's
  // self rows plus the overhead add up to the kind's total, and no inclusive exceeds it.
  absl::Status TraceShape(const json& obj, const std::string& path, SummaryTables& t) const {
    bool any_trace = false;
    for (const SummaryProcedure& p : t.procedures) any_trace = any_trace || p.has_trace;
    if (!obj.contains("trace_shape")) {
      if (any_trace)
        return Error(Join(path, "trace_shape"), "missing (procedures have trace rows)");
      return absl::OkStatus();
    }
    const std::string p = Join(path, "trace_shape");
    const json& ts = obj["trace_shape"];
    FLAMEFLEET_RETURN_IF_ERROR(Object(ts, p));
    SummaryTraceShape shape;
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.core_rows, Uint(ts, p, "core_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.core_height, Uint(ts, p, "core_height"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.chiplets_height, Uint(ts, p, "chiplets_height"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.padded_len, Uint(ts, p, "padded_len"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.bound, String(ts, p, "bound"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.overhead, Rows(ts, p, "overhead"));
    FLAMEFLEET_ASSIGN_OR_RETURN(const json* hasher, Field(ts, p, "hasher", "expected an object"));
    FLAMEFLEET_RETURN_IF_ERROR(Object(*hasher, Join(p, "hasher")));
    auto at = [](runner::TraceKind k) { return static_cast<size_t>(k); };
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.totals[at(runner::TraceKind::kHasher)],
                                Uint(*hasher, Join(p, "hasher"), "rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.totals[at(runner::TraceKind::kBitwise)],
                                Uint(ts, p, "bitwise_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.totals[at(runner::TraceKind::kMemory)],
                                Uint(ts, p, "memory_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.totals[at(runner::TraceKind::kAce)], Uint(ts, p, "ace_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.totals[at(runner::TraceKind::kRange)],
                                Uint(ts, p, "range_rows"));
    FLAMEFLEET_ASSIGN_OR_RETURN(shape.totals[at(runner::TraceKind::kChiplets)],
                                Uint(ts, p, "chiplets_rows"));
    if (shape.padded_len != std::max(shape.core_height, shape.chiplets_height)) {
      return Error(Join(p, "padded_len"),
                   absl::StrCat(shape.padded_len, " is not the larger height of ",
                                shape.core_height, " and ", shape.chiplets_height));
    }
    for (runner::TraceKind kind : runner::kAllTraceKinds) {
      const size_t k = at(kind);
      uint64_t sum = shape.overhead[k];
      for (const SummaryProcedure& proc : t.procedures) {
        if (__builtin_add_overflow(sum, proc.trace_self[k], &sum)) {
          return Error(p, "the procedures' trace rows overflow 64 bits");
        }
        if (proc.trace_inclusive[k] > shape.totals[k]) {
          return Error(p,
                       absl::StrCat("procedure \"", proc.name, "\" has ", proc.trace_inclusive[k],
                                    " inclusive ", runner::TraceKindName(kind),
                                    " rows, more than the total ", shape.totals[k]));
        }
      }
      if (any_trace && sum != shape.totals[k]) {
        return Error(p, absl::StrCat("the procedures' self ", runner::TraceKindName(kind),
                                     " rows and the overhead sum to ", sum, ", not the total ",
                                     shape.totals[k]));
      }
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
    FLAMEFLEET_RETURN_IF_ERROR(TraceShape(obj, path, t));
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
