#include "runner/summary.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

using nlohmann::ordered_json;

double Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

ordered_json CountedTable(const std::vector<InstructionStats>& rows, uint64_t cycles) {
  ordered_json out = ordered_json::array();
  for (const InstructionStats& r : rows) {
    out.push_back({{"name", r.name},
                   {"count", r.count},
                   {"cycles", r.cycles},
                   {"share", Share(r.cycles, cycles)}});
  }
  return out;
}

ordered_json ProcedureRow(const ProcedureStats& p, uint64_t cycles) {
  return {{"name", p.name},
          {"calls", p.calls},
          {"self", p.self},
          {"inclusive", p.inclusive},
          {"self_share", Share(p.self, cycles)},
          {"inclusive_share", Share(p.inclusive, cycles)}};
}

// {"hasher": n, "bitwise": n, ...} of rows by TraceKind.
ordered_json TraceKinds(const std::array<uint64_t, kNumTraceKinds>& rows) {
  ordered_json out = ordered_json::object();
  for (TraceKind kind : kAllTraceKinds) {
    out[std::string(TraceKindName(kind))] = rows[static_cast<size_t>(kind)];
  }
  return out;
}

// A procedure's `trace` object: its rows by kind and its hasher requests.
ordered_json ProcedureTraceObject(const ProcedureTraceShape& t) {
  return {{"self", TraceKinds(t.self)},
          {"inclusive", TraceKinds(t.inclusive)},
          {"hasher_requests", t.hasher_requests},
          {"hasher_dedup_hits", t.hasher_dedup_hits}};
}

// The job's trace_shape object (docs/summary.md, docs/trace-shape.md).
ordered_json TraceShapeObject(const TraceShapeStats& shape) {
  const vm::TraceShape& t = shape.totals;
  ordered_json j;
  j["core_rows"] = t.core_rows;
  j["range_rows"] = t.range_rows;
  j["hasher"] = {{"requests", t.hasher_requests},
                 {"states", t.hasher_states},
                 {"controller_rows", t.hasher_controller_rows},
                 {"controller_padding", t.hasher_controller_padding},
                 {"permutation_rows", t.hasher_permutation_rows},
                 {"rows", t.hasher_rows}};
  j["bitwise_rows"] = t.bitwise_rows;
  j["memory_rows"] = t.memory_rows;
  j["ace_rows"] = t.ace_rows;
  j["kernel_rom_rows"] = t.kernel_rom_rows;
  j["chiplets_rows"] = t.chiplets_rows;
  j["core_height"] = t.core_height;
  j["chiplets_height"] = t.chiplets_height;
  j["padded_len"] = t.padded_len;
  j["bound"] = std::string(vm::TraceBoundName(t.bound));
  j["overhead"] = TraceKinds(shape.overhead);
  return j;
}

// The summary.json object of one job (the one writer of its fields).
ordered_json SummaryObject(const JobSummary& summary) {
  const uint64_t cycles = summary.cycles;
  ordered_json j;
  j["schema"] = "flamefleet.summary/1";
  j["job"] = summary.job;
  j["program_digest"] = summary.program_digest;
  j["dialect"] = summary.dialect;
  j["inputs_digest"] = summary.inputs_digest;
  j["status"] = summary.status.ok() ? "ok" : "error";
  if (summary.status.ok()) {
    j["error"] = nullptr;
  } else {
    j["error"] = {{"code", absl::StatusCodeToString(summary.status.code())},
                  {"message", std::string(summary.status.message())}};
  }
  j["cycles"] = cycles;
  ordered_json stack = ordered_json::array();
  for (uint64_t v : summary.final_stack) stack.push_back(absl::StrCat(v));
  j["final_stack"] = std::move(stack);
  j["mast"] = {{"nodes", summary.stats.mast.nodes},
               {"basic_block_ops", summary.stats.mast.basic_block_ops}};
  const std::optional<TraceShapeStats>& shape = summary.stats.trace_shape;
  ordered_json procs = ordered_json::array();
  for (size_t i = 0; i < summary.stats.procedures.size(); ++i) {
    ordered_json row = ProcedureRow(summary.stats.procedures[i], cycles);
    if (shape.has_value() && i < shape->procedures.size()) {
      row["trace"] = ProcedureTraceObject(shape->procedures[i]);
    }
    procs.push_back(std::move(row));
  }
  j["procedures"] = std::move(procs);
  j["instructions"] = CountedTable(summary.stats.instructions, cycles);
  j["operations"] = CountedTable(summary.stats.operations, cycles);
  ordered_json phases = ordered_json::array();
  for (const PhaseStats& p : summary.stats.phases) {
    phases.push_back({{"name", p.name},
                      {"count", p.count},
                      {"total", p.total},
                      {"min", p.min},
                      {"max", p.max},
                      {"open", p.open}});
  }
  j["phases"] = std::move(phases);
  if (shape.has_value()) j["trace_shape"] = TraceShapeObject(*shape);
  return j;
}

// ---- the trace shape on the wire

void RowsToProto(const TraceRows& rows, v1::SummaryTraceRows* out) {
  out->set_hasher(rows[static_cast<size_t>(TraceKind::kHasher)]);
  out->set_bitwise(rows[static_cast<size_t>(TraceKind::kBitwise)]);
  out->set_memory(rows[static_cast<size_t>(TraceKind::kMemory)]);
  out->set_ace(rows[static_cast<size_t>(TraceKind::kAce)]);
  out->set_range(rows[static_cast<size_t>(TraceKind::kRange)]);
  out->set_chiplets(rows[static_cast<size_t>(TraceKind::kChiplets)]);
}

TraceRows RowsFromProto(const v1::SummaryTraceRows& rows) {
  TraceRows out{};
  out[static_cast<size_t>(TraceKind::kHasher)] = rows.hasher();
  out[static_cast<size_t>(TraceKind::kBitwise)] = rows.bitwise();
  out[static_cast<size_t>(TraceKind::kMemory)] = rows.memory();
  out[static_cast<size_t>(TraceKind::kAce)] = rows.ace();
  out[static_cast<size_t>(TraceKind::kRange)] = rows.range();
  out[static_cast<size_t>(TraceKind::kChiplets)] = rows.chiplets();
  return out;
}

v1::SummaryTraceBound BoundToProto(vm::TraceBound bound) {
  switch (bound) {
    case vm::TraceBound::kCore:
      return v1::SUMMARY_TRACE_BOUND_CORE;
    case vm::TraceBound::kRange:
      return v1::SUMMARY_TRACE_BOUND_RANGE;
    case vm::TraceBound::kChiplets:
      return v1::SUMMARY_TRACE_BOUND_CHIPLETS;
  }
  return v1::SUMMARY_TRACE_BOUND_UNSPECIFIED;
}

void TraceShapeToProto(const TraceShapeStats& shape, v1::SummaryTraceShape* out) {
  const vm::TraceShape& t = shape.totals;
  out->set_core_rows(t.core_rows);
  out->set_range_rows(t.range_rows);
  v1::SummaryHasherRows* hasher = out->mutable_hasher();
  hasher->set_requests(t.hasher_requests);
  hasher->set_states(t.hasher_states);
  hasher->set_controller_rows(t.hasher_controller_rows);
  hasher->set_controller_padding(t.hasher_controller_padding);
  hasher->set_permutation_rows(t.hasher_permutation_rows);
  hasher->set_rows(t.hasher_rows);
  out->set_bitwise_rows(t.bitwise_rows);
  out->set_memory_rows(t.memory_rows);
  out->set_ace_rows(t.ace_rows);
  out->set_kernel_rom_rows(t.kernel_rom_rows);
  out->set_chiplets_rows(t.chiplets_rows);
  out->set_core_height(t.core_height);
  out->set_chiplets_height(t.chiplets_height);
  out->set_padded_len(t.padded_len);
  out->set_bound(BoundToProto(t.bound));
  RowsToProto(shape.overhead, out->mutable_overhead());
}

// ---- the decoder's checks

absl::Status Invalid(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("summary: ", field, ": ", problem));
}

absl::Status CheckLength(absl::string_view field, absl::string_view text, size_t limit) {
  if (text.size() <= limit) return absl::OkStatus();
  return Invalid(field, absl::StrCat(text.size(), " bytes, the limit is ", limit));
}

absl::Status CheckName(absl::string_view field, absl::string_view name) {
  if (name.empty()) return Invalid(field, "empty");
  return CheckLength(field, name, kMaxSummaryNameBytes);
}

bool IsLowerHex(absl::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// `prefix` followed by exactly 64 lowercase hex digits.
absl::Status CheckDigest(absl::string_view field, absl::string_view digest,
                         absl::string_view prefix) {
  FLAMEFLEET_RETURN_IF_ERROR(CheckLength(field, digest, kMaxSummaryNameBytes));
  if (!absl::StartsWith(digest, prefix) || digest.size() != prefix.size() + 64 ||
      !IsLowerHex(digest.substr(prefix.size()))) {
    return Invalid(field, absl::StrCat("\"", absl::CHexEscape(digest), "\" is not ", prefix,
                                       " followed by 64 lowercase hex digits"));
  }
  return absl::OkStatus();
}

// "v" DIGITS "." DIGITS.
absl::Status CheckDialect(absl::string_view dialect) {
  FLAMEFLEET_RETURN_IF_ERROR(CheckLength("dialect", dialect, kMaxSummaryNameBytes));
  const size_t dot = dialect.find('.');
  auto digits = [](absl::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
  };
  if (!absl::StartsWith(dialect, "v") || dot == absl::string_view::npos ||
      !digits(dialect.substr(1, dot - 1)) || !digits(dialect.substr(dot + 1))) {
    return Invalid("dialect",
                   absl::StrCat("\"", absl::CHexEscape(dialect), "\" is not of the form v0.16"));
  }
  return absl::OkStatus();
}

// Adds `v` to `sum`; false on overflow.
bool AddChecked(uint64_t& sum, uint64_t v) { return !__builtin_add_overflow(sum, v, &sum); }

absl::Status CheckRows(absl::string_view table, int size) {
  if (static_cast<size_t>(size) <= kMaxSummaryRows) return absl::OkStatus();
  return Invalid(table, absl::StrCat(size, " rows, the limit is ", kMaxSummaryRows));
}

absl::StatusOr<std::vector<InstructionStats>> DecodeCounted(
    absl::string_view table, const google::protobuf::RepeatedPtrField<v1::SummaryCounted>& rows,
    uint64_t cycles) {
  FLAMEFLEET_RETURN_IF_ERROR(CheckRows(table, rows.size()));
  std::vector<InstructionStats> out;
  out.reserve(rows.size());
  uint64_t sum = 0;
  for (int i = 0; i < rows.size(); ++i) {
    const v1::SummaryCounted& row = rows[i];
    const std::string field = absl::StrCat(table, "[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(CheckName(absl::StrCat(field, ".name"), row.name()));
    if (!AddChecked(sum, row.cycles())) {
      return Invalid(absl::StrCat(field, ".cycles"), "the table's sum overflows");
    }
    out.push_back(InstructionStats{row.name(), row.count(), row.cycles()});
  }
  if (!out.empty() && sum != cycles) {
    return Invalid(table, absl::StrCat("cycles sum to ", sum, ", not to cycles = ", cycles));
  }
  return out;
}

absl::Status CheckPhase(absl::string_view field, const v1::SummaryPhase& p, uint64_t cycles) {
  if (p.count() == 0) {
    if (p.total() != 0 || p.min() != 0 || p.max() != 0 || p.open()) {
      return Invalid(field, "a phase with no spans has total, min, max 0 and is not open");
    }
    return absl::OkStatus();
  }
  if (p.min() > p.max()) {
    return Invalid(absl::StrCat(field, ".min"), absl::StrCat(p.min(), " exceeds max = ", p.max()));
  }
  if (p.max() > cycles) {
    return Invalid(absl::StrCat(field, ".max"),
                   absl::StrCat(p.max(), " exceeds cycles = ", cycles));
  }
  // count spans of min..max cycles each: count * min <= total <= count * max.
  const unsigned __int128 count = p.count();
  if (count * p.min() > p.total() || p.total() > count * p.max()) {
    return Invalid(absl::StrCat(field, ".total"),
                   absl::StrCat(p.total(), " is not between count * min and count * max (count ",
                                p.count(), ", min ", p.min(), ", max ", p.max(), ")"));
  }
  return absl::OkStatus();
}

// The trace shape of `m` (set: m.has_trace_shape()), whose other fields `s` holds already,
// checked by CheckTraceShape against the rules of its dialect.
absl::StatusOr<TraceShapeStats> DecodeTraceShape(const v1::JobSummary& m, const JobSummary& s) {
  auto prefixed = [](const absl::Status& status) {
    return absl::InvalidArgumentError(absl::StrCat("summary: ", status.message()));
  };
  if (!s.status.ok()) {
    return Invalid("trace_shape",
                   "set, but the run ended with an error (only a run that "
                   "finished has a trace shape)");
  }
  absl::StatusOr<const vm::TraceShapeRules*> rules = TraceShapeRulesOf(m.dialect());
  if (!rules.ok()) return prefixed(rules.status());
  const v1::SummaryTraceShape& w = m.trace_shape();
  TraceShapeStats shape;
  shape.rules = *rules;
  vm::TraceShape& t = shape.totals;
  t.cycles = m.cycles();
  t.core_rows = w.core_rows();
  t.range_rows = w.range_rows();
  t.hasher_requests = w.hasher().requests();
  t.hasher_states = w.hasher().states();
  t.hasher_controller_rows = w.hasher().controller_rows();
  t.hasher_controller_padding = w.hasher().controller_padding();
  t.hasher_permutation_rows = w.hasher().permutation_rows();
  t.hasher_rows = w.hasher().rows();
  t.bitwise_rows = w.bitwise_rows();
  t.memory_rows = w.memory_rows();
  t.ace_rows = w.ace_rows();
  t.kernel_rom_rows = w.kernel_rom_rows();
  t.chiplets_rows = w.chiplets_rows();
  t.core_height = w.core_height();
  t.chiplets_height = w.chiplets_height();
  t.padded_len = w.padded_len();
  switch (w.bound()) {
    case v1::SUMMARY_TRACE_BOUND_CORE:
      t.bound = vm::TraceBound::kCore;
      break;
    case v1::SUMMARY_TRACE_BOUND_RANGE:
      t.bound = vm::TraceBound::kRange;
      break;
    case v1::SUMMARY_TRACE_BOUND_CHIPLETS:
      t.bound = vm::TraceBound::kChiplets;
      break;
    default:
      return Invalid("trace_shape.bound",
                     absl::StrCat(static_cast<int>(w.bound()), " is not core, range or chiplets"));
  }
  shape.overhead = RowsFromProto(w.overhead());
  shape.procedures.reserve(m.procedures_size());
  for (int i = 0; i < m.procedures_size(); ++i) {
    const v1::SummaryProcedure& p = m.procedures(i);
    if (!p.has_trace()) {
      return Invalid(absl::StrCat("procedures[", i, "].trace"),
                     "missing (the summary has a trace_shape)");
    }
    shape.procedures.push_back(
        ProcedureTraceShape{.name = p.name(),
                            .self = RowsFromProto(p.trace().self()),
                            .inclusive = RowsFromProto(p.trace().inclusive()),
                            .hasher_requests = p.trace().hasher_requests(),
                            .hasher_dedup_hits = p.trace().hasher_dedup_hits()});
  }
  if (absl::Status st = CheckTraceShape(shape, m.cycles()); !st.ok()) return prefixed(st);
  return shape;
}

// ---- the batch document

// Rows summed by name, in first-seen order.
template <typename Row>
class ByName {
 public:
  Row& At(const std::string& name) {
    auto [it, inserted] = index_.try_emplace(name, rows_.size());
    if (inserted) {
      rows_.emplace_back();
      rows_.back().name = name;
    }
    return rows_[it->second];
  }
  std::vector<Row>& rows() { return rows_; }
  // Returns the row named `name`, or null.
  const Row* Find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &rows_[it->second];
  }

 private:
  absl::flat_hash_map<std::string, size_t> index_;
  std::vector<Row> rows_;
};

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

template <typename T>
void SortDescending(std::vector<T>& rows, uint64_t T::*key) {
  std::sort(rows.begin(), rows.end(), [key](const T& a, const T& b) {
    return a.*key != b.*key ? a.*key > b.*key : a.name < b.name;
  });
}

struct MergedPhase {
  std::string name;
  uint64_t jobs = 0;  // jobs in which the phase had at least one span
  PhaseStats stats;
};

}  // namespace

JobSummary MakeJobSummary(const SummaryInput& input) {
  const vm::Program& program = *input.program;
  const StatsRun& run = *input.run;
  JobSummary summary;
  summary.job = input.job;
  summary.program_digest = ProgramDigest(program);
  summary.dialect = std::string(program.dialect->name);
  summary.inputs_digest = InputsDigest(*input.inputs);
  summary.status = run.status;
  summary.cycles = run.result.cycles;
  summary.final_stack.reserve(run.result.stack.size());
  for (const vm::Felt& f : run.result.stack) summary.final_stack.push_back(f.value());
  summary.stats = run.stats;
  return summary;
}

std::string SummaryJson(const JobSummary& summary) { return SummaryObject(summary).dump(2) + "\n"; }

std::string SummaryJson(const SummaryInput& summary) {
  return SummaryJson(MakeJobSummary(summary));
}

v1::JobSummary JobSummaryToProto(const JobSummary& summary) {
  v1::JobSummary m;
  m.set_job(summary.job);
  m.set_program_digest(summary.program_digest);
  m.set_dialect(summary.dialect);
  m.set_inputs_digest(summary.inputs_digest);
  m.set_error_code(static_cast<uint32_t>(summary.status.code()));
  m.set_error_message(std::string(summary.status.message()));
  m.set_cycles(summary.cycles);
  for (uint64_t v : summary.final_stack) m.add_final_stack(v);
  m.mutable_mast()->set_nodes(summary.stats.mast.nodes);
  m.mutable_mast()->set_basic_block_ops(summary.stats.mast.basic_block_ops);
  const std::optional<TraceShapeStats>& shape = summary.stats.trace_shape;
  for (size_t i = 0; i < summary.stats.procedures.size(); ++i) {
    const ProcedureStats& p = summary.stats.procedures[i];
    v1::SummaryProcedure* row = m.add_procedures();
    row->set_name(p.name);
    row->set_calls(p.calls);
    row->set_self(p.self);
    row->set_inclusive(p.inclusive);
    if (shape.has_value() && i < shape->procedures.size()) {
      const ProcedureTraceShape& t = shape->procedures[i];
      v1::SummaryProcedureTrace* trace = row->mutable_trace();
      RowsToProto(t.self, trace->mutable_self());
      RowsToProto(t.inclusive, trace->mutable_inclusive());
      trace->set_hasher_requests(t.hasher_requests);
      trace->set_hasher_dedup_hits(t.hasher_dedup_hits);
    }
  }
  auto counted = [](const std::vector<InstructionStats>& rows,
                    google::protobuf::RepeatedPtrField<v1::SummaryCounted>* out) {
    for (const InstructionStats& r : rows) {
      v1::SummaryCounted* row = out->Add();
      row->set_name(r.name);
      row->set_count(r.count);
      row->set_cycles(r.cycles);
    }
  };
  counted(summary.stats.instructions, m.mutable_instructions());
  counted(summary.stats.operations, m.mutable_operations());
  for (const PhaseStats& p : summary.stats.phases) {
    v1::SummaryPhase* row = m.add_phases();
    row->set_name(p.name);
    row->set_count(p.count);
    row->set_total(p.total);
    row->set_min(p.min);
    row->set_max(p.max);
    row->set_open(p.open);
  }
  if (shape.has_value()) TraceShapeToProto(*shape, m.mutable_trace_shape());
  return m;
}

absl::StatusOr<JobSummary> DecodeJobSummary(const v1::JobSummary& m) {
  JobSummary s;
  FLAMEFLEET_RETURN_IF_ERROR(CheckName("job", m.job()));
  FLAMEFLEET_RETURN_IF_ERROR(CheckDigest("program_digest", m.program_digest(), "0x"));
  FLAMEFLEET_RETURN_IF_ERROR(CheckDialect(m.dialect()));
  FLAMEFLEET_RETURN_IF_ERROR(CheckDigest("inputs_digest", m.inputs_digest(), "blake3:"));
  // absl's codes are google.rpc.Code: 0 (OK) through 16 (UNAUTHENTICATED).
  if (m.error_code() > static_cast<uint32_t>(absl::StatusCode::kUnauthenticated)) {
    return Invalid("error_code", absl::StrCat(m.error_code(), " is not a status code"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(
      CheckLength("error_message", m.error_message(), kMaxSummaryErrorBytes));
  if (m.error_code() == 0 && !m.error_message().empty()) {
    return Invalid("error_message", "set, but error_code is 0 (OK)");
  }
  s.job = m.job();
  s.program_digest = m.program_digest();
  s.dialect = m.dialect();
  s.inputs_digest = m.inputs_digest();
  s.status = absl::Status(static_cast<absl::StatusCode>(m.error_code()), m.error_message());
  s.cycles = m.cycles();
  const uint64_t cycles = m.cycles();

  if (static_cast<size_t>(m.final_stack_size()) > kMaxSummaryStackValues) {
    return Invalid("final_stack", absl::StrCat(m.final_stack_size(), " values, the limit is ",
                                               kMaxSummaryStackValues));
  }
  for (int i = 0; i < m.final_stack_size(); ++i) {
    if (!vm::Felt::IsCanonical(m.final_stack(i))) {
      return Invalid(absl::StrCat("final_stack[", i, "]"),
                     absl::StrCat(m.final_stack(i), " is not a field element"));
    }
    s.final_stack.push_back(m.final_stack(i));
  }
  s.stats.mast = MastSize{m.mast().nodes(), m.mast().basic_block_ops()};

  FLAMEFLEET_RETURN_IF_ERROR(CheckRows("procedures", m.procedures_size()));
  uint64_t self_sum = 0;
  s.stats.procedures.reserve(m.procedures_size());
  for (int i = 0; i < m.procedures_size(); ++i) {
    const v1::SummaryProcedure& p = m.procedures(i);
    const std::string field = absl::StrCat("procedures[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(CheckName(absl::StrCat(field, ".name"), p.name()));
    if (p.self() > p.inclusive()) {
      return Invalid(absl::StrCat(field, ".self"),
                     absl::StrCat(p.self(), " exceeds inclusive = ", p.inclusive()));
    }
    if (p.inclusive() > cycles) {
      return Invalid(absl::StrCat(field, ".inclusive"),
                     absl::StrCat(p.inclusive(), " exceeds cycles = ", cycles));
    }
    if (!AddChecked(self_sum, p.self())) {
      return Invalid(absl::StrCat(field, ".self"), "the procedures' sum overflows");
    }
    s.stats.procedures.push_back(ProcedureStats{p.name(), p.calls(), p.self(), p.inclusive()});
  }
  if (self_sum != cycles) {
    return Invalid("procedures",
                   absl::StrCat("self cycles sum to ", self_sum, ", not to cycles = ", cycles));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(s.stats.instructions,
                              DecodeCounted("instructions", m.instructions(), cycles));
  FLAMEFLEET_ASSIGN_OR_RETURN(s.stats.operations,
                              DecodeCounted("operations", m.operations(), cycles));

  FLAMEFLEET_RETURN_IF_ERROR(CheckRows("phases", m.phases_size()));
  s.stats.phases.reserve(m.phases_size());
  for (int i = 0; i < m.phases_size(); ++i) {
    const v1::SummaryPhase& p = m.phases(i);
    const std::string field = absl::StrCat("phases[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(CheckName(absl::StrCat(field, ".name"), p.name()));
    FLAMEFLEET_RETURN_IF_ERROR(CheckPhase(field, p, cycles));
    s.stats.phases.push_back(
        PhaseStats{p.name(), p.count(), p.total(), p.min(), p.max(), p.open()});
  }

  if (m.has_trace_shape()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(s.stats.trace_shape, DecodeTraceShape(m, s));
  } else {
    for (int i = 0; i < m.procedures_size(); ++i) {
      if (m.procedures(i).has_trace()) {
        return Invalid("trace_shape", absl::StrCat("missing (procedures[", i, "] has trace rows)"));
      }
    }
  }
  return s;
}

absl::StatusOr<JobSummary> DecodeJobSummary(absl::string_view bytes) {
  if (bytes.size() > kMaxSummaryBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("summary: ", bytes.size(), " bytes, the limit is ", kMaxSummaryBytes));
  }
  v1::JobSummary message;
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("summary: not a JobSummary message");
  }
  return DecodeJobSummary(message);
}

std::string BatchSummaryJson(const BatchSummaryInput& batch) {
  uint64_t cycles = 0;
  ByName<ProcedureStats> procedures;
  ByName<InstructionStats> instructions, operations;
  ByName<MergedPhase> phases;
  // Trace totals over the jobs that have a trace shape.
  uint64_t traced_jobs = 0, core_rows = 0, padded_len = 0;
  TraceRows trace_rows{}, trace_overhead{};
  ByName<ProcedureTraceShape> procedure_traces;
  ordered_json jobs = ordered_json::array();
  for (const JobSummary& job : batch.jobs) {
    cycles = SaturatingAdd(cycles, job.cycles);
    jobs.push_back(SummaryObject(job));
    if (const std::optional<TraceShapeStats>& shape = job.stats.trace_shape; shape.has_value()) {
      ++traced_jobs;
      core_rows = SaturatingAdd(core_rows, shape->totals.core_rows);
      padded_len = SaturatingAdd(padded_len, shape->totals.padded_len);
      for (TraceKind kind : kAllTraceKinds) {
        const size_t k = static_cast<size_t>(kind);
        trace_rows[k] = SaturatingAdd(trace_rows[k], shape->Total(kind));
        trace_overhead[k] = SaturatingAdd(trace_overhead[k], shape->overhead[k]);
      }
      for (size_t i = 0; i < job.stats.procedures.size() && i < shape->procedures.size(); ++i) {
        const ProcedureTraceShape& t = shape->procedures[i];
        ProcedureTraceShape& row = procedure_traces.At(job.stats.procedures[i].name);
        for (size_t k = 0; k < kNumTraceKinds; ++k) {
          row.self[k] = SaturatingAdd(row.self[k], t.self[k]);
          row.inclusive[k] = SaturatingAdd(row.inclusive[k], t.inclusive[k]);
        }
        row.hasher_requests = SaturatingAdd(row.hasher_requests, t.hasher_requests);
        row.hasher_dedup_hits = SaturatingAdd(row.hasher_dedup_hits, t.hasher_dedup_hits);
      }
    }
    for (const ProcedureStats& p : job.stats.procedures) {
      ProcedureStats& row = procedures.At(p.name);
      row.calls = SaturatingAdd(row.calls, p.calls);
      row.self = SaturatingAdd(row.self, p.self);
      row.inclusive = SaturatingAdd(row.inclusive, p.inclusive);
    }
    for (auto [table, rows] : {std::pair{&instructions, &job.stats.instructions},
                               std::pair{&operations, &job.stats.operations}}) {
      for (const InstructionStats& r : *rows) {
        InstructionStats& row = table->At(r.name);
        row.count = SaturatingAdd(row.count, r.count);
        row.cycles = SaturatingAdd(row.cycles, r.cycles);
      }
    }
    for (const PhaseStats& p : job.stats.phases) {
      MergedPhase& row = phases.At(p.name);
      if (p.count == 0) continue;
      PhaseStats& m = row.stats;
      m.min = row.jobs == 0 ? p.min : std::min(m.min, p.min);
      m.max = row.jobs == 0 ? p.max : std::max(m.max, p.max);
      m.count = SaturatingAdd(m.count, p.count);
      m.total = SaturatingAdd(m.total, p.total);
      m.open = m.open || p.open;
      ++row.jobs;
    }
  }
  SortDescending(procedures.rows(), &ProcedureStats::inclusive);
  SortDescending(instructions.rows(), &InstructionStats::cycles);
  SortDescending(operations.rows(), &InstructionStats::cycles);

  ordered_json j;
  j["schema"] = "flamefleet.batch-summary/1";
  j["batch"] = batch.batch_id;
  j["state"] = batch.state;
  j["cycles"] = cycles;
  j["jobs"] = std::move(jobs);
  ordered_json without = ordered_json::array();
  for (const JobWithoutSummary& job : batch.without_summary) {
    ordered_json row = {{"job", job.job}, {"state", job.state}};
    row["error"] = job.error.has_value() ? ordered_json(*job.error) : ordered_json(nullptr);
    without.push_back(std::move(row));
  }
  j["without_summary"] = std::move(without);
  ordered_json procs = ordered_json::array();
  for (const ProcedureStats& p : procedures.rows()) {
    ordered_json row = ProcedureRow(p, cycles);
    if (const ProcedureTraceShape* t = procedure_traces.Find(p.name)) {
      row["trace"] = ProcedureTraceObject(*t);
    }
    procs.push_back(std::move(row));
  }
  j["procedures"] = std::move(procs);
  j["instructions"] = CountedTable(instructions.rows(), cycles);
  j["operations"] = CountedTable(operations.rows(), cycles);
  ordered_json merged = ordered_json::array();
  for (const MergedPhase& p : phases.rows()) {
    merged.push_back({{"name", p.name},
                      {"jobs", p.jobs},
                      {"count", p.stats.count},
                      {"total", p.stats.total},
                      {"min", p.stats.min},
                      {"max", p.stats.max},
                      {"open", p.stats.open}});
  }
  j["phases"] = std::move(merged);
  if (traced_jobs > 0) {
    j["trace_totals"] = {{"jobs", traced_jobs},
                         {"core_rows", core_rows},
                         {"padded_len", padded_len},
                         {"rows", TraceKinds(trace_rows)},
                         {"overhead", TraceKinds(trace_overhead)}};
  }
  return j.dump(2) + "\n";
}

}  // namespace flamefleet::runner
