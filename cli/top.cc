#include "cli/top.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/batch_client.h"
#include "cli/client_commands.h"
#include "cli/command.h"
#include "cli/suite_diff.h"
#include "cli/summary_file.h"
#include "common/status_macros.h"
#include "profile/folded.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;
using profile::Profile;

constexpr char kUnknownFrame[] = "[unknown]";
constexpr char kHiddenFrame[] = "[hidden]";

double Percent(uint64_t part, uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

struct TopFlags {
  std::string input;
  std::string by = "self";
  bool by_instruction = false;
  bool by_operation = false;
  bool phases = false;
  size_t limit = 20;
  bool json = false;
  std::string job;
  CoordinatorFlags coordinator;
};

absl::StatusOr<Profile> ReadFolded(const std::string& path) {
  Profile p;
  profile::FoldedReader reader(&p);
  if (path == "-") {
    FLAMEFLEET_RETURN_IF_ERROR(reader.ReadStream(std::cin, "<stdin>"));
  } else {
    FLAMEFLEET_RETURN_IF_ERROR(reader.ReadFile(path));
  }
  return p;
}

// Picks the tables of `job` ("" = the totals) out of `in.summary`. Returns false if the summary
// does not list the job at all (the caller may look elsewhere).
absl::StatusOr<bool> ChooseTables(const std::string& job, TopInput* in) {
  const Summary& s = *in->summary;
  if (job.empty()) {
    in->tables = s.totals;
    return true;
  }
  if (const SummaryJob* j = s.FindJob(job)) {
    in->tables = j->tables;
    return true;
  }
  for (const JobWithoutSummary& w : s.without_summary) {
    if (w.name != job) continue;
    return absl::FailedPreconditionError(
        absl::StrCat(s.source, ": job \"", job, "\" has no summary (state ", w.state,
                     w.error.empty() ? "" : absl::StrCat(": ", w.error), ")"));
  }
  return false;
}

// The table `top` prints.
enum class TopMode { kProcedures, kInstructions, kOperations, kPhases };

absl::Status NeedsSummary(absl::string_view flag, absl::string_view what, absl::string_view input) {
  return UsageError(absl::StrCat(
      flag, ": ", input, " has no ", what,
      " (folded stacks and cycle profiles carry cycles only); they come with a summary.json: "
      "`flamefleet profile PROG --summary out.json`, or DIR/summary.json written by `fetch`"));
}

// Notes about the summary's coverage, for a terminal reader (stderr).
void PrintSummaryNotes(const TopInput& in, const std::string& job) {
  const Summary& s = *in.summary;
  for (const SummaryJob& j : s.jobs) {
    if (j.status != "error" || (!job.empty() && j.name != job)) continue;
    std::cerr << "flamefleet: note: job " << j.name
              << " ended with an error; its numbers are those up to the trap: " << j.error << "\n";
  }
  if (job.empty() && !s.without_summary.empty()) {
    std::cerr << "flamefleet: note: " << s.without_summary.size()
              << " job(s) of the batch have no summary and are not counted:";
    for (const JobWithoutSummary& w : s.without_summary) {
      std::cerr << " " << w.name << " (" << w.state << ")";
    }
    std::cerr << "\n";
  }
}

nlohmann::json SummaryInfoJson(const Summary& s) {
  nlohmann::json j = {{"kind", s.kind == Summary::Kind::kBatch ? "batch" : "job"},
                      {"state", s.state},
                      {"jobs", s.jobs.size()}};
  if (s.kind == Summary::Kind::kBatch) j["batch"] = s.batch;
  j["without_summary"] = nlohmann::json::array();
  for (const JobWithoutSummary& w : s.without_summary) {
    j["without_summary"].push_back(
        {{"job", w.name},
         {"state", w.state},
         {"error", w.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(w.error)}});
  }
  return j;
}

CommandResult RunTop(const TopFlags& flags, bool by_given) {
  // --by KIND: the procedures by their trace rows of that kind (self), from a summary.
  std::optional<runner::TraceKind> trace_kind;
  if (absl::StatusOr<runner::TraceKind> kind = runner::ParseTraceKind(flags.by); kind.ok()) {
    trace_kind = *kind;
  }
  absl::StatusOr<TopOrder> order = trace_kind ? TopOrder::kSelf : ParseTopOrder(flags.by);
  if (!order.ok()) {
    return UsageError(absl::StrCat(order.status().message(),
                                   ", or a trace row kind: hasher, bitwise, memory, ace, range, "
                                   "chiplets"));
  }
  if (flags.by_instruction + flags.by_operation + flags.phases > 1) {
    return UsageError("give one of --by-instruction, --by-operation and --phases");
  }
  TopMode mode = TopMode::kProcedures;
  if (flags.by_instruction) mode = TopMode::kInstructions;
  if (flags.by_operation) mode = TopMode::kOperations;
  if (flags.phases) mode = TopMode::kPhases;
  if (mode != TopMode::kProcedures && by_given) {
    return UsageError(
        "--by sorts the procedure table; --by-instruction and --by-operation sort by cycles, "
        "--phases by total cycles");
  }
  if (!absl::StartsWith(flags.input, "batch:") && mode == TopMode::kProcedures &&
      *order == TopOrder::kCalls && !absl::EndsWith(flags.input, ".json")) {
    std::error_code ec;
    if (flags.input == "-" || !fs::is_directory(flags.input, ec)) {
      // A folded file: refuse before reading it.
      return UsageError(CheckTopOrder(*order, ProcedureTable{}, flags.input));
    }
  }
  // The coordinator is reached only for batch:ID, and only once.
  std::shared_ptr<BatchClient> client;
  auto connect = [&]() -> absl::Status {
    if (client != nullptr) return absl::OkStatus();
    FLAMEFLEET_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                                ConnectToCoordinator(flags.coordinator));
    client = std::make_shared<BatchClient>(channel);
    return absl::OkStatus();
  };
  TopSources sources;
  // The batch's summary.json; a coordinator without summaries (NotFound, Unimplemented) leaves
  // the folded aggregate.
  sources.batch_summary = [&](const std::string& id) -> absl::StatusOr<std::string> {
    FLAMEFLEET_RETURN_IF_ERROR(connect());
    return client->FetchBatchSummaryJson(id);
  };
  sources.batch_profile = [&](const std::string& id,
                              const std::string& job) -> absl::StatusOr<Profile> {
    FLAMEFLEET_RETURN_IF_ERROR(connect());
    absl::StatusOr<Profile> p = client->FetchProfile(id, job);
    if (!p.ok()) {
      return absl::Status(p.status().code(),
                          absl::StrCat("batch:", id, " on ", flags.coordinator.address, ": ",
                                       p.status().message()));
    }
    return p;
  };
  FLAMEFLEET_ASSIGN_OR_RETURN(TopInput in, LoadTopInput(flags.input, flags.job, sources));
  const bool batch = in.summary && in.summary->kind == Summary::Kind::kBatch;
  nlohmann::json j;
  switch (mode) {
    case TopMode::kProcedures: {
      ProcedureTable table;
      if (trace_kind) {
        if (!in.tables)
          return NeedsSummary(absl::StrCat("--by ", flags.by), "trace shape", flags.input);
        absl::StatusOr<ProcedureTable> traced =
            TraceTableFromSummary(*in.tables, *trace_kind, flags.input);
        if (!traced.ok()) return UsageError(traced.status());
        table = *std::move(traced);
      } else {
        table =
            in.tables ? ProcedureTableFromSummary(*in.tables) : ComputeProcedureTable(in.profile);
      }
      absl::Status fits = CheckTopOrder(*order, table, flags.input);
      if (!fits.ok()) return UsageError(fits);
      SortProcedures(*order, &table.rows);
      if (flags.json) {
        j = TopJson(table, flags.limit);
        j["by"] = flags.by;
      } else {
        PrintTop(table, flags.limit, std::cout);
      }
      break;
    }
    case TopMode::kInstructions:
    case TopMode::kOperations: {
      const bool ins = mode == TopMode::kInstructions;
      const char* flag = ins ? "--by-instruction" : "--by-operation";
      const char* what = ins ? "instruction" : "operation";
      if (!in.tables) {
        return NeedsSummary(flag, ins ? "instruction counts" : "operation counts", flags.input);
      }
      std::vector<SummaryCounted> rows = ins ? in.tables->instructions : in.tables->operations;
      SortCounted(&rows);
      if (flags.json) {
        j = CountedTopJson(rows, in.tables->cycles, what, flags.limit);
      } else {
        PrintCountedTop(rows, in.tables->cycles, what, flags.limit, std::cout);
      }
      break;
    }
    case TopMode::kPhases: {
      if (!in.tables) return NeedsSummary("--phases", "phases", flags.input);
      std::vector<SummaryPhase> rows = in.tables->phases;
      SortPhases(&rows);
      // One job of a batch summary has no per-phase job count.
      const bool per_batch = batch && flags.job.empty();
      if (flags.json) {
        j = PhasesJson(rows, in.tables->cycles, per_batch, flags.limit);
      } else {
        PrintPhases(rows, in.tables->cycles, per_batch, flags.limit, std::cout);
      }
      break;
    }
  }
  if (flags.json) {
    static constexpr const char* kTables[] = {"procedures", "instructions", "operations", "phases"};
    j["table"] = kTables[static_cast<int>(mode)];
    j["input"] = flags.input;
    if (!flags.job.empty()) j["job"] = flags.job;
    if (in.summary) j["summary"] = SummaryInfoJson(*in.summary);
    std::cout << j.dump(2) << "\n";
  } else if (in.summary) {
    PrintSummaryNotes(in, flags.job);
  }
  return absl::OkStatus();
}

}  // namespace

ProcedureTable ComputeProcedureTable(const Profile& p) {
  ProcedureTable table;
  table.total = p.total();
  const size_t n = p.num_nodes();
  if (n == 0) return table;
  std::vector<uint64_t> self(p.num_frames(), 0);
  std::vector<uint64_t> inclusive(p.num_frames(), 0);
  const std::vector<uint64_t> node_inclusive = p.InclusiveCycles();
  uint64_t hidden = p.hidden(Profile::kRoot).cycles;
  // Children in CSR form, so the walk below can keep the frames of the current path.
  std::vector<uint32_t> first(n + 1, 0);
  for (Profile::NodeId node = 1; node < n; ++node) ++first[p.parent(node) + 1];
  for (size_t i = 1; i <= n; ++i) first[i] += first[i - 1];
  std::vector<Profile::NodeId> children(n > 0 ? n - 1 : 0);
  {
    std::vector<uint32_t> next(first.begin(), first.end() - 1);
    for (Profile::NodeId node = 1; node < n; ++node) children[next[p.parent(node)]++] = node;
  }
  // Depth-first, iteratively: a node's inclusive cycles count for its frame only where no
  // ancestor has the same frame (the outermost call of a recursion covers the inner ones).
  std::vector<uint32_t> on_path(p.num_frames(), 0);
  struct Visit {
    Profile::NodeId node;
    uint32_t next_child;
  };
  std::vector<Visit> stack;
  stack.push_back({Profile::kRoot, first[Profile::kRoot]});
  while (!stack.empty()) {
    Visit& top = stack.back();
    if (top.next_child == first[top.node + 1]) {
      if (top.node != Profile::kRoot) --on_path[p.frame(top.node)];
      stack.pop_back();
      continue;
    }
    const Profile::NodeId child = children[top.next_child++];
    const Profile::FrameId frame = p.frame(child);
    self[frame] += p.self(child);
    hidden += p.hidden(child).cycles;
    if (on_path[frame]++ == 0) inclusive[frame] += node_inclusive[child];
    stack.push_back({child, first[child]});
  }
  for (Profile::FrameId f = 0; f < p.num_frames(); ++f) {
    if (self[f] != 0 || inclusive[f] != 0) {
      table.rows.push_back({std::string(p.frame_name(f)), self[f], inclusive[f]});
    }
  }
  if (p.self(Profile::kRoot) != 0) {
    table.rows.push_back({kUnknownFrame, p.self(Profile::kRoot), p.self(Profile::kRoot)});
  }
  if (hidden != 0) table.rows.push_back({kHiddenFrame, hidden, hidden});
  // Frame names are interned once, so rows are unique by name, except that the two synthetic
  // rows merge with a frame that happens to carry the same name.
  std::sort(table.rows.begin(), table.rows.end(),
            [](const ProcedureCycles& a, const ProcedureCycles& b) { return a.name < b.name; });
  std::vector<ProcedureCycles> merged;
  for (ProcedureCycles& row : table.rows) {
    if (!merged.empty() && merged.back().name == row.name) {
      merged.back().self += row.self;
      merged.back().inclusive += row.inclusive;
    } else {
      merged.push_back(std::move(row));
    }
  }
  table.rows = std::move(merged);
  return table;
}

std::map<std::string, ProcedureCycles> ProceduresByName(const Profile& p) {
  std::map<std::string, ProcedureCycles> out;
  for (ProcedureCycles& row : ComputeProcedureTable(p).rows) out[row.name] = std::move(row);
  return out;
}

ProcedureTable ProcedureTableFromSummary(const SummaryTables& tables) {
  ProcedureTable table;
  table.total = tables.cycles;
  table.has_calls = true;
  for (const SummaryProcedure& p : tables.procedures) {
    table.rows.push_back({p.name, p.self, p.inclusive, p.calls});
  }
  std::sort(table.rows.begin(), table.rows.end(),
            [](const ProcedureCycles& a, const ProcedureCycles& b) { return a.name < b.name; });
  return table;
}

absl::StatusOr<ProcedureTable> TraceTableFromSummary(const SummaryTables& tables,
                                                     runner::TraceKind kind,
                                                     absl::string_view input) {
  if (!tables.trace_shape.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--by ", runner::TraceKindName(kind), ": ", input,
                     " has no trace shape (only summaries of v0.25 runs that finished have one: "
                     "`flamefleet profile PROG --summary out.json`, or a batch of such jobs)"));
  }
  const size_t k = static_cast<size_t>(kind);
  ProcedureTable table;
  table.total = tables.trace_shape->totals[k];
  table.unit = absl::StrCat(runner::TraceKindName(kind), " rows");
  table.has_calls = true;
  for (const SummaryProcedure& p : tables.procedures) {
    table.rows.push_back({p.name, p.trace_self[k], p.trace_inclusive[k], p.calls});
  }
  const uint64_t overhead = tables.trace_shape->overhead[k];
  if (overhead != 0) {
    table.rows.push_back({std::string(runner::kTraceOverheadFrame), overhead, overhead, 0});
  }
  std::sort(table.rows.begin(), table.rows.end(),
            [](const ProcedureCycles& a, const ProcedureCycles& b) { return a.name < b.name; });
  return table;
}

absl::StatusOr<TopOrder> ParseTopOrder(absl::string_view by) {
  if (by == "self") return TopOrder::kSelf;
  if (by == "inclusive") return TopOrder::kInclusive;
  if (by == "calls") return TopOrder::kCalls;
  return absl::InvalidArgumentError(
      absl::StrCat("--by: expected self, inclusive or calls, got \"", by, "\""));
}

absl::Status CheckTopOrder(TopOrder order, const ProcedureTable& table, absl::string_view input) {
  if (order != TopOrder::kCalls || table.has_calls) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--by calls: ", input,
      " has no call counts (folded stacks and cycle profiles carry cycles only); call counts "
      "come with a summary.json: `flamefleet profile PROG --summary out.json`, or "
      "DIR/summary.json written by `fetch`"));
}

void SortProcedures(TopOrder order, std::vector<ProcedureCycles>* rows) {
  auto key = [order](const ProcedureCycles& r) {
    switch (order) {
      case TopOrder::kSelf:
        return std::make_tuple(r.self, r.inclusive, uint64_t{0});
      case TopOrder::kInclusive:
        return std::make_tuple(r.inclusive, r.self, uint64_t{0});
      case TopOrder::kCalls:
        break;
    }
    return std::make_tuple(r.calls, r.inclusive, r.self);
  };
  std::sort(rows->begin(), rows->end(), [&](const ProcedureCycles& a, const ProcedureCycles& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return a.name < b.name;
  });
}

void PrintTop(const ProcedureTable& table, size_t limit, std::ostream& out) {
  const size_t shown = std::min(limit, table.rows.size());
  out << "Showing " << shown << " of " << table.rows.size() << " procedures, " << table.total << " "
      << table.unit << " total\n";
  if (table.has_calls) {
    out << absl::StrFormat("%14s %7s %7s %14s %7s %12s  %s\n", "self", "self%", "sum%", "inclusive",
                           "incl%", "calls", "procedure");
  } else {
    out << absl::StrFormat("%14s %7s %7s %14s %7s  %s\n", "self", "self%", "sum%", "inclusive",
                           "incl%", "procedure");
  }
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ProcedureCycles& r = table.rows[i];
    sum += Percent(r.self, table.total);
    out << absl::StrFormat("%14d %6.2f%% %6.2f%% %14d %6.2f%%", r.self,
                           Percent(r.self, table.total), sum, r.inclusive,
                           Percent(r.inclusive, table.total));
    if (table.has_calls) out << absl::StrFormat(" %12d", r.calls);
    out << "  " << r.name << "\n";
  }
}

nlohmann::json TopJson(const ProcedureTable& table, size_t limit) {
  const size_t shown = std::min(limit, table.rows.size());
  nlohmann::json j = {{"total", table.total}, {"procedures", table.rows.size()}, {"shown", shown}};
  if (table.unit != "cycles") j["unit"] = table.unit;
  j["rows"] = nlohmann::json::array();
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ProcedureCycles& r = table.rows[i];
    sum += Percent(r.self, table.total);
    nlohmann::json row = {{"name", r.name},
                          {"self", r.self},
                          {"self_percent", Percent(r.self, table.total)},
                          {"cumulative_percent", sum},
                          {"inclusive", r.inclusive},
                          {"inclusive_percent", Percent(r.inclusive, table.total)}};
    if (table.has_calls) row["calls"] = r.calls;
    j["rows"].push_back(std::move(row));
  }
  return j;
}

void SortCounted(std::vector<SummaryCounted>* rows) {
  std::sort(rows->begin(), rows->end(), [](const SummaryCounted& a, const SummaryCounted& b) {
    if (a.cycles != b.cycles) return a.cycles > b.cycles;
    if (a.count != b.count) return a.count > b.count;
    return a.name < b.name;
  });
}

void PrintCountedTop(const std::vector<SummaryCounted>& rows, uint64_t total,
                     absl::string_view what, size_t limit, std::ostream& out) {
  const size_t shown = std::min(limit, rows.size());
  out << "Showing " << shown << " of " << rows.size() << " " << what << "s, " << total
      << " cycles total\n";
  out << absl::StrFormat("%14s %7s %7s %14s  %s\n", "cycles", "cycles%", "sum%", "count", what);
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const SummaryCounted& r = rows[i];
    sum += Percent(r.cycles, total);
    out << absl::StrFormat("%14d %6.2f%% %6.2f%% %14d  %s\n", r.cycles, Percent(r.cycles, total),
                           sum, r.count, r.name);
  }
}

nlohmann::json CountedTopJson(const std::vector<SummaryCounted>& rows, uint64_t total,
                              absl::string_view what, size_t limit) {
  const size_t shown = std::min(limit, rows.size());
  nlohmann::json j = {{"total", total}, {absl::StrCat(what, "s"), rows.size()}, {"shown", shown}};
  j["rows"] = nlohmann::json::array();
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const SummaryCounted& r = rows[i];
    sum += Percent(r.cycles, total);
    j["rows"].push_back({{"name", r.name},
                         {"count", r.count},
                         {"cycles", r.cycles},
                         {"percent", Percent(r.cycles, total)},
                         {"cumulative_percent", sum}});
  }
  return j;
}

void SortPhases(std::vector<SummaryPhase>* rows) {
  std::sort(rows->begin(), rows->end(), [](const SummaryPhase& a, const SummaryPhase& b) {
    if (a.total != b.total) return a.total > b.total;
    return a.name < b.name;
  });
}

namespace {
double Mean(const SummaryPhase& p) {
  return p.count == 0 ? 0.0 : static_cast<double>(p.total) / static_cast<double>(p.count);
}
}  // namespace

void PrintPhases(const std::vector<SummaryPhase>& phases, uint64_t total, bool batch, size_t limit,
                 std::ostream& out) {
  const size_t shown = std::min(limit, phases.size());
  out << "Showing " << shown << " of " << phases.size() << " phases, " << total
      << " cycles total\n";
  out << absl::StrFormat("%10s %14s %7s %12s %12s %14s", "count", "total", "total%", "min", "max",
                         "mean");
  if (batch) out << absl::StrFormat(" %8s", "jobs");
  out << "  phase\n";
  bool any_open = false;
  for (size_t i = 0; i < shown; ++i) {
    const SummaryPhase& p = phases[i];
    out << absl::StrFormat("%10d %14d %6.2f%% %12d %12d %14.1f", p.count, p.total,
                           Percent(p.total, total), p.min, p.max, Mean(p));
    if (batch) out << absl::StrFormat(" %8d", p.jobs);
    out << "  " << p.name << (p.open ? " [open]" : "") << "\n";
    any_open = any_open || p.open;
  }
  if (any_open) {
    out << "[open]: a span was still open when the program ended; it is closed at the last "
           "cycle\n";
  }
}

nlohmann::json PhasesJson(const std::vector<SummaryPhase>& phases, uint64_t total, bool batch,
                          size_t limit) {
  const size_t shown = std::min(limit, phases.size());
  nlohmann::json j = {{"total", total}, {"phases", phases.size()}, {"shown", shown}};
  j["rows"] = nlohmann::json::array();
  for (size_t i = 0; i < shown; ++i) {
    const SummaryPhase& p = phases[i];
    nlohmann::json row = {{"name", p.name},   {"count", p.count},
                          {"total", p.total}, {"percent", Percent(p.total, total)},
                          {"min", p.min},     {"max", p.max},
                          {"mean", Mean(p)},  {"open", p.open}};
    if (batch) row["jobs"] = p.jobs;
    j["rows"].push_back(std::move(row));
  }
  return j;
}

absl::StatusOr<TopInput> LoadTopInput(const std::string& input, const std::string& job,
                                      const TopSources& sources) {
  TopInput in;
  in.label = input;
  if (absl::StartsWith(input, "batch:")) {
    const std::string id = input.substr(6);
    if (sources.batch_summary) {
      absl::StatusOr<std::string> text = sources.batch_summary(id);
      if (text.ok()) {
        FLAMEFLEET_ASSIGN_OR_RETURN(in.summary,
                                    ParseSummary(*text, absl::StrCat(input, " summary")));
        FLAMEFLEET_ASSIGN_OR_RETURN(bool found, ChooseTables(job, &in));
        if (found) return in;
        in.summary.reset();
        in.tables.reset();
      } else if (!absl::IsNotFound(text.status()) && !absl::IsUnimplemented(text.status())) {
        return text.status();
      }
    }
    if (!sources.batch_profile) {
      return absl::UnimplementedError(absl::StrCat(input, ": no coordinator to ask"));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(in.profile, sources.batch_profile(id, job));
    return in;
  }
  std::error_code ec;
  if (input != "-" && fs::is_directory(input, ec)) {
    const fs::path summary = fs::path(input) / kBatchSummaryFileName;
    if (fs::is_regular_file(summary, ec)) {
      FLAMEFLEET_ASSIGN_OR_RETURN(in.summary, ReadSummaryFile(summary.string()));
      FLAMEFLEET_ASSIGN_OR_RETURN(bool found, ChooseTables(job, &in));
      if (found) return in;
      in.summary.reset();
      in.tables.reset();
    }
    if (!job.empty()) {
      const fs::path file = fs::path(input) / "jobs" / (job + ".folded");
      if (!fs::is_regular_file(file, ec)) {
        return absl::NotFoundError(
            absl::StrCat(input, ": no job \"", job, "\" (no ", file.string(), ")"));
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(in.profile, ReadFolded(file.string()));
      return in;
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(DiffInput dir, LoadOutputDirectory(input, {}));
    in.profile = std::move(dir.aggregate);
    return in;
  }
  if (absl::EndsWith(input, ".json")) {
    FLAMEFLEET_ASSIGN_OR_RETURN(in.summary, ReadSummaryFile(input));
    FLAMEFLEET_ASSIGN_OR_RETURN(bool found, ChooseTables(job, &in));
    if (!found) {
      return absl::NotFoundError(absl::StrCat(input, ": no job \"", job, "\" in the summary"));
    }
    return in;
  }
  if (!job.empty()) {
    return UsageError(absl::StrCat("--job needs a fetched directory, a batch summary or batch:ID; ",
                                   input, " is a single profile"));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(in.profile, ReadFolded(input));
  return in;
}

void AddTopCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<TopFlags>();
  CLI::App* cmd = app.add_subcommand(
      "top",
      "Print the most expensive procedures, instructions or phases of a profile or summary as a "
      "table like pprof -top (--json: JSON)");
  cmd->add_option("input", flags->input,
                  "a folded file (- = stdin), a summary .json (`profile --summary`, a batch's "
                  "summary.json), a directory written by `flamefleet fetch` (its summary.json if "
                  "present), or batch:ID on the coordinator")
      ->required();
  CLI::Option* by = cmd->add_option(
      "--by", flags->by,
      "sort procedures by self (default) or inclusive cycles, or by calls (needs a summary); "
      "hasher, bitwise, memory, ace, range or chiplets: by their self rows of that trace "
      "(a v0.25 job summary; docs/trace-shape.md)");
  cmd->add_flag("--by-instruction", flags->by_instruction,
                "the MASM instructions table instead (needs a summary)");
  cmd->add_flag("--by-operation", flags->by_operation,
                "the VM operations table instead (needs a summary)");
  cmd->add_flag("--phases", flags->phases,
                "the phases table instead: count, total, min, max, mean (needs a summary)");
  cmd->add_option("--limit", flags->limit, "rows to show (default 20)");
  cmd->add_flag("--json", flags->json, "print the table as JSON");
  cmd->add_option("--job", flags->job,
                  "one job of a fetched directory, batch summary or batch instead of all");
  AddCoordinatorFlags(cmd, &flags->coordinator);
  SetCommand(cmd, exit_code, [flags, by] { return RunTop(*flags, by->count() != 0); });
}

}  // namespace flamefleet::cli
