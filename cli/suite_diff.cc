#include "cli/suite_diff.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/top.h"
#include "common/status_macros.h"
#include "profile/cycle_delta.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kFoldedSuffix = ".folded";

std::string Percent(const CycleDelta& d) {
  const double p = d.percent();
  if (std::isinf(p)) return "new";
  return absl::StrFormat("%+.2f%%", p);
}

std::string Signed(int64_t v) { return v > 0 ? absl::StrCat("+", v) : absl::StrCat(v); }

void PrintRows(const std::vector<CycleDelta>& rows, size_t limit, absl::string_view heading,
               std::ostream& out) {
  size_t width = heading.size();
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    width = std::max(width, std::min<size_t>(rows[i].name.size(), 72));
  }
  out << absl::StrFormat("  %-*s %14s %14s %14s %9s\n", static_cast<int>(width), heading, "before",
                         "after", "delta", "percent");
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const CycleDelta& d = rows[i];
    out << absl::StrFormat("  %-*s %14d %14d %14s %9s\n", static_cast<int>(width), d.name, d.before,
                           d.after, Signed(d.delta()), Percent(d));
  }
}

std::map<std::string, uint64_t> PhaseTotals(const std::vector<SummaryPhase>& phases) {
  std::map<std::string, uint64_t> out;
  for (const SummaryPhase& p : phases) out[p.name] = p.total;
  return out;
}

// A side's jobs and their cycles from its summary.
std::map<std::string, uint64_t> SummaryJobs(const Summary& s) {
  std::map<std::string, uint64_t> out;
  for (const SummaryJob& job : s.jobs) out[job.name] = job.tables.cycles;
  return out;
}

bool WholeProfile(const DiffInput& in) {
  return in.kind == DiffInput::Kind::kProfile ||
         (in.kind == DiffInput::Kind::kSummary && in.summary->kind == Summary::Kind::kJob);
}

nlohmann::json RowJson(const CycleDelta& d) {
  nlohmann::json j = {
      {"name", d.name}, {"before", d.before}, {"after", d.after}, {"delta", d.delta()}};
  const double p = d.percent();
  j["percent"] = std::isinf(p) ? nlohmann::json(nullptr) : nlohmann::json(p);
  return j;
}

}  // namespace

absl::StatusOr<DiffInput> LoadOutputDirectory(const std::string& dir,
                                              const profile::FoldedReadOptions& options) {
  DiffInput in;
  in.kind = DiffInput::Kind::kDirectory;
  in.label = dir;
  const fs::path root(dir);
  const fs::path jobs_dir = root / "jobs";
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(jobs_dir, ec)) {
    for (auto it = fs::recursive_directory_iterator(jobs_dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file(ec) && absl::EndsWith(it->path().string(), kFoldedSuffix)) {
        files.push_back(it->path());
      }
    }
    if (ec) return absl::InvalidArgumentError(absl::StrCat(dir, ": ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  const bool has_aggregate = fs::is_regular_file(root / "aggregate.folded", ec);
  const fs::path summary = root / kBatchSummaryFileName;
  if (fs::is_regular_file(summary, ec)) {
    FLAMEFLEET_ASSIGN_OR_RETURN(in.summary, ReadSummaryFile(summary.string()));
    if (files.empty() && !has_aggregate) {
      in.kind = DiffInput::Kind::kSummary;
      in.jobs = SummaryJobs(*in.summary);
      return in;
    }
  }
  if (files.empty() && !has_aggregate) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir,
                     ": not a fetched output directory (no aggregate.folded and no "
                     "jobs/*.folded; `flamefleet fetch ID -o DIR` writes them)"));
  }
  for (const fs::path& file : files) {
    std::string name = file.lexically_relative(jobs_dir).generic_string();
    name.resize(name.size() - kFoldedSuffix.size());
    profile::Profile job;
    profile::FoldedReader reader(&job, nullptr, options);
    FLAMEFLEET_RETURN_IF_ERROR(reader.ReadFile(file.string()));
    in.jobs[name] = job.total();
    if (!has_aggregate) {
      FLAMEFLEET_RETURN_IF_ERROR(in.aggregate.MergeFromChecked(job));
    }
  }
  if (has_aggregate) {
    profile::FoldedReader reader(&in.aggregate, nullptr, options);
    FLAMEFLEET_RETURN_IF_ERROR(reader.ReadFile((root / "aggregate.folded").string()));
  }
  return in;
}

absl::StatusOr<DiffInput> LoadBatch(BatchClient& client, const std::string& batch_id) {
  FLAMEFLEET_ASSIGN_OR_RETURN(v1::Batch batch, client.Get(batch_id));
  if (batch.state() == v1::BATCH_STATE_RUNNING) {
    return absl::FailedPreconditionError(absl::StrCat(
        "batch ", batch_id, " is still running (wait with `flamefleet watch ", batch_id, "`)"));
  }
  DiffInput in;
  in.kind = DiffInput::Kind::kBatch;
  in.label = batch_id;
  for (const v1::JobStatus& job : batch.jobs()) {
    if (job.state() == v1::JOB_STATE_SUCCEEDED) in.jobs[job.name()] = job.cycles();
  }
  if (batch.jobs_succeeded() > 0) {
    FLAMEFLEET_ASSIGN_OR_RETURN(in.aggregate, client.FetchProfile(batch_id, ""));
  }
  // The batch's summary (phases, per-job tables), as `fetch` writes it; a coordinator that
  // predates summaries has none, and the side then has stacks only.
  absl::StatusOr<std::string> summary = client.FetchBatchSummaryJson(batch_id);
  if (summary.ok()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(
        in.summary, ParseSummary(*summary, absl::StrCat("batch ", batch_id, " summary")));
  } else if (!absl::IsUnimplemented(summary.status()) && !absl::IsNotFound(summary.status())) {
    return summary.status();
  }
  return in;
}

absl::StatusOr<DiffInput> LoadSummarySide(const std::string& path) {
  DiffInput in;
  in.kind = DiffInput::Kind::kSummary;
  in.label = path;
  FLAMEFLEET_ASSIGN_OR_RETURN(in.summary, ReadSummaryFile(path));
  in.jobs = SummaryJobs(*in.summary);
  return in;
}

absl::Status CheckComparable(const DiffInput& before, const DiffInput& after) {
  const bool stacks =
      before.kind != DiffInput::Kind::kSummary && after.kind != DiffInput::Kind::kSummary;
  if (stacks || (before.summary && after.summary)) return absl::OkStatus();
  const DiffInput& bare = before.kind == DiffInput::Kind::kSummary ? before : after;
  const DiffInput& other = &bare == &before ? after : before;
  return absl::InvalidArgumentError(absl::StrCat(
      bare.label, " is a summary without stacks, and ", other.label,
      " has no summary: compare two summaries (summary .json files or fetched directories with a "
      "summary.json) or two sides with stacks"));
}

namespace {

// The trace-shape part of a comparison of two summaries (SuiteDiff::has_trace).
void CompareTraceShapes(const Summary& before, const Summary& after, bool whole, SuiteDiff* d) {
  std::vector<std::string> names;
  for (runner::TraceKind kind : runner::kAllTraceKinds) {
    names.emplace_back(runner::TraceKindName(kind));
  }
  for (const char* name : {"core", "core height", "chiplets height", "padded"}) {
    names.emplace_back(name);
  }
  std::vector<CycleDelta> sums;
  for (const std::string& name : names) sums.push_back({name, 0, 0});
  auto add = [](std::vector<CycleDelta>& rows, const SummaryTraceShape& t, bool after_side) {
    std::vector<uint64_t> v(t.totals.begin(), t.totals.end());
    v.push_back(t.core_rows);
    v.push_back(t.core_height);
    v.push_back(t.chiplets_height);
    v.push_back(t.padded_len);
    for (size_t i = 0; i < v.size(); ++i) (after_side ? rows[i].after : rows[i].before) += v[i];
  };
  for (const SummaryJob& b : before.jobs) {
    const SummaryJob* a =
        whole ? (after.jobs.size() == 1 ? &after.jobs[0] : nullptr) : after.FindJob(b.name);
    if (a == nullptr || !b.tables.trace_shape || !a->tables.trace_shape) continue;
    d->job_padded.push_back({whole ? std::string(kWholeProfileJob) : b.name,
                             b.tables.trace_shape->padded_len, a->tables.trace_shape->padded_len});
    add(sums, *b.tables.trace_shape, false);
    add(sums, *a->tables.trace_shape, true);
    if (whole) break;
  }
  if (d->job_padded.empty()) {
    d->no_trace_reason =
        "no job has a trace shape on both sides (summaries of v0.25 runs have one: "
        "`flamefleet profile PROG --summary out.json`, or the jobs of a fleet batch)";
    return;
  }
  d->has_trace = true;
  std::sort(d->job_padded.begin(), d->job_padded.end(), profile::GrewMore);
  d->trace = std::move(sums);
}

}  // namespace

SuiteDiff CompareSuites(const DiffInput& before, const DiffInput& after) {
  SuiteDiff d;
  // Summaries, not stacks, when a side has no stacks (CheckComparable: both have summaries).
  const bool from_summaries =
      before.kind == DiffInput::Kind::kSummary || after.kind == DiffInput::Kind::kSummary;
  d.before_total = from_summaries ? before.summary->totals.cycles : before.aggregate.total();
  d.after_total = from_summaries ? after.summary->totals.cycles : after.aggregate.total();
  std::map<std::string, uint64_t> before_jobs = before.jobs;
  std::map<std::string, uint64_t> after_jobs = after.jobs;
  if (from_summaries) {
    before_jobs = SummaryJobs(*before.summary);
    after_jobs = SummaryJobs(*after.summary);
  }
  const bool whole = WholeProfile(before) || WholeProfile(after);
  if (whole) {
    before_jobs = {{kWholeProfileJob, d.before_total}};
    after_jobs = {{kWholeProfileJob, d.after_total}};
  }
  profile::MatchCycles(before_jobs, after_jobs, &d.jobs, &d.added, &d.removed);

  std::map<std::string, ProcedureCycles> before_procs;
  std::map<std::string, ProcedureCycles> after_procs;
  std::map<std::string, uint64_t> before_frames;
  std::map<std::string, uint64_t> after_frames;
  if (from_summaries) {
    auto from_summary = [](const Summary& s, std::map<std::string, ProcedureCycles>* procs,
                           std::map<std::string, uint64_t>* frames) {
      for (ProcedureCycles& row : ProcedureTableFromSummary(s.totals).rows) {
        if (row.self != 0) (*frames)[row.name] = row.self;
        (*procs)[row.name] = std::move(row);
      }
    };
    from_summary(*before.summary, &before_procs, &before_frames);
    from_summary(*after.summary, &after_procs, &after_frames);
  } else {
    before_procs = ProceduresByName(before.aggregate);
    after_procs = ProceduresByName(after.aggregate);
    before_frames = profile::SelfCyclesByName(before.aggregate);
    after_frames = profile::SelfCyclesByName(after.aggregate);
  }
  d.frames = profile::FrameDeltas(before_frames, after_frames);

  for (const auto& [name, b] : before_procs) {
    auto it = after_procs.find(name);
    const ProcedureCycles a = it == after_procs.end() ? ProcedureCycles{} : it->second;
    d.procedures.push_back({name, {name, b.self, a.self}, {name, b.inclusive, a.inclusive}});
  }
  for (const auto& [name, a] : after_procs) {
    if (!before_procs.contains(name)) {
      d.procedures.push_back({name, {name, 0, a.self}, {name, 0, a.inclusive}});
    }
  }
  std::sort(d.procedures.begin(), d.procedures.end(),
            [](const ProcedureDelta& x, const ProcedureDelta& y) {
              if (x.inclusive.delta() != y.inclusive.delta()) {
                return x.inclusive.delta() > y.inclusive.delta();
              }
              if (x.self.delta() != y.self.delta()) return x.self.delta() > y.self.delta();
              return x.name < y.name;
            });

  if (!before.summary || !after.summary) {
    d.no_phases_reason = absl::StrCat(
        !before.summary ? before.label : after.label,
        " has no summary (a summary .json file, or a fetched directory with a summary.json)");
    d.no_trace_reason = d.no_phases_reason;
    return d;
  }
  d.has_phases = true;
  profile::MatchCycles(PhaseTotals(before.summary->totals.phases),
                       PhaseTotals(after.summary->totals.phases), &d.phases, &d.phases_added,
                       &d.phases_removed);
  CompareTraceShapes(*before.summary, *after.summary, whole, &d);
  if (!whole) {
    // Per job: jobs on both sides, phases on both sides of the job.
    for (const SummaryJob& b : before.summary->jobs) {
      const SummaryJob* a = after.summary->FindJob(b.name);
      if (a == nullptr) continue;
      const std::map<std::string, uint64_t> after_phases = PhaseTotals(a->tables.phases);
      for (const SummaryPhase& p : b.tables.phases) {
        auto it = after_phases.find(p.name);
        if (it != after_phases.end()) d.job_phases[p.name].push_back({b.name, p.total, it->second});
      }
    }
    for (auto& [name, rows] : d.job_phases) std::sort(rows.begin(), rows.end(), profile::GrewMore);
  }
  return d;
}

std::string Gate::MetricName() const {
  switch (metric) {
    case Metric::kJobCycles:
      return "cycles";
    case Metric::kProcedure:
      return absl::StrCat("proc:", procedure);
    case Metric::kPadded:
      return "padded";
    case Metric::kPhase:
      break;
  }
  return absl::StrCat("phase:", phase);
}

absl::StatusOr<Gate> ParseGate(absl::string_view spec) {
  Gate gate;
  absl::string_view metric = "cycles";
  absl::string_view number = spec;
  if (absl::StartsWith(spec, "padded:")) {
    // padded:PCT (as padded=PCT).
    metric = "padded";
    number = spec.substr(7);
  }
  const size_t eq = metric == "padded" ? absl::string_view::npos : spec.rfind('=');
  if (eq != absl::string_view::npos) {
    metric = spec.substr(0, eq);
    number = spec.substr(eq + 1);
  }
  if (!absl::SimpleAtod(number, &gate.percent) || !std::isfinite(gate.percent)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fail-above \"", spec,
                     "\": expected PCT, cycles=PCT, proc:NAME=PCT, phase:NAME=PCT or padded:PCT "
                     "(a number)"));
  }
  if (metric == "cycles") return gate;
  if (metric == "padded") {
    gate.metric = Gate::Metric::kPadded;
    return gate;
  }
  if (absl::StartsWith(metric, "proc:") && metric.size() > 5) {
    gate.metric = Gate::Metric::kProcedure;
    gate.procedure = std::string(metric.substr(5));
    return gate;
  }
  if (absl::StartsWith(metric, "phase:") && metric.size() > 6) {
    gate.metric = Gate::Metric::kPhase;
    gate.phase = std::string(metric.substr(6));
    return gate;
  }
  return absl::InvalidArgumentError(absl::StrCat("--fail-above \"", spec, "\": unknown metric \"",
                                                 metric,
                                                 "\"; known: cycles (per job), proc:NAME (a "
                                                 "procedure's inclusive cycles), phase:NAME (a "
                                                 "phase's total cycles), padded (a job's padded "
                                                 "trace length)"));
}

namespace {

bool Above(const CycleDelta& d, double percent) { return d.delta() > 0 && d.percent() > percent; }

bool Named(const std::vector<CycleDelta>& rows, const std::string& name) {
  return std::any_of(rows.begin(), rows.end(), [&](const CycleDelta& d) { return d.name == name; });
}

absl::StatusOr<std::vector<CycleDelta>> PhaseRegressions(const SuiteDiff& diff, const Gate& gate) {
  if (!diff.has_phases) {
    return absl::FailedPreconditionError(absl::StrCat("--fail-above phase:", gate.phase,
                                                      ": phase gates need a summary on both "
                                                      "sides; ",
                                                      diff.no_phases_reason));
  }
  std::vector<CycleDelta> out;
  for (const CycleDelta& p : diff.phases) {
    if (p.name != gate.phase) continue;
    if (Above(p, gate.percent)) out.push_back(p);
    auto it = diff.job_phases.find(p.name);
    if (it != diff.job_phases.end()) {
      for (const CycleDelta& job : it->second) {
        if (Above(job, gate.percent)) {
          out.push_back({absl::StrCat(p.name, " in ", job.name), job.before, job.after});
        }
      }
    }
    return out;
  }
  if (Named(diff.phases_added, gate.phase) || Named(diff.phases_removed, gate.phase)) return out;
  std::vector<std::string> known;
  for (const auto* list : {&diff.phases, &diff.phases_added, &diff.phases_removed}) {
    for (const CycleDelta& p : *list) known.push_back(p.name);
  }
  std::sort(known.begin(), known.end());
  return absl::NotFoundError(absl::StrCat(
      "--fail-above phase:", gate.phase, ": no phase \"", gate.phase, "\" in either summary (",
      known.empty() ? std::string("they have no phases")
                    : absl::StrCat("phases: ", absl::StrJoin(known, ", ")),
      ")"));
}

}  // namespace

std::string GateNote(const SuiteDiff& diff, const Gate& gate) {
  if (gate.metric != Gate::Metric::kPhase) return "";
  if (Named(diff.phases_added, gate.phase)) {
    return absl::StrCat("phase:", gate.phase, " is only in AFTER (added): not gated");
  }
  if (Named(diff.phases_removed, gate.phase)) {
    return absl::StrCat("phase:", gate.phase, " is only in BEFORE (removed): not gated");
  }
  return "";
}

absl::StatusOr<std::vector<CycleDelta>> GateRegressions(const SuiteDiff& diff, const Gate& gate) {
  if (gate.metric == Gate::Metric::kJobCycles) return JobsAbove(diff, gate.percent);
  if (gate.metric == Gate::Metric::kPhase) return PhaseRegressions(diff, gate);
  if (gate.metric == Gate::Metric::kPadded) {
    if (!diff.has_trace) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--fail-above padded: needs a trace shape on both sides; ", diff.no_trace_reason));
    }
    std::vector<CycleDelta> out;
    for (const CycleDelta& job : diff.job_padded) {
      if (Above(job, gate.percent)) out.push_back(job);
    }
    return out;
  }
  for (const ProcedureDelta& p : diff.procedures) {
    if (p.name != gate.procedure) continue;
    if (p.inclusive.delta() > 0 && p.inclusive.percent() > gate.percent) {
      return std::vector<CycleDelta>{p.inclusive};
    }
    return std::vector<CycleDelta>{};
  }
  return absl::NotFoundError(absl::StrCat("--fail-above proc:", gate.procedure, ": no procedure \"",
                                          gate.procedure,
                                          "\" in either profile (see `flamefleet top`)"));
}

std::vector<CycleDelta> JobsAbove(const SuiteDiff& diff, double percent) {
  std::vector<CycleDelta> out;
  for (const CycleDelta& job : diff.jobs) {
    if (job.delta() > 0 && job.percent() > percent) out.push_back(job);
  }
  return out;
}

void PrintSuiteDiff(const SuiteDiff& diff, size_t top, std::ostream& out) {
  std::vector<CycleDelta> grew;
  size_t shrank = 0;
  for (const CycleDelta& job : diff.jobs) {
    if (job.delta() > 0) grew.push_back(job);
    if (job.delta() < 0) ++shrank;
  }
  out << "jobs: " << diff.jobs.size() << " on both sides (" << grew.size() << " grew, " << shrank
      << " shrank, " << diff.jobs.size() - grew.size() - shrank << " unchanged), "
      << diff.added.size() << " added, " << diff.removed.size() << " removed\n";
  if (!grew.empty()) {
    out << "jobs that grew most (top " << std::min(top, grew.size()) << "):\n";
    PrintRows(grew, top, "job", out);
  }
  if (!diff.added.empty()) {
    out << "added jobs (only in AFTER; not counted by --fail-above):\n";
    PrintRows(diff.added, diff.added.size(), "job", out);
  }
  if (!diff.removed.empty()) {
    out << "removed jobs (only in BEFORE):\n";
    PrintRows(diff.removed, diff.removed.size(), "job", out);
  }
  std::vector<CycleDelta> frames;
  for (const CycleDelta& f : diff.frames) {
    if (f.delta() > 0) frames.push_back(f);
  }
  if (!frames.empty()) {
    out << "frames whose self cycles grew most (aggregate, by name; top "
        << std::min(top, frames.size()) << "):\n";
    PrintRows(frames, top, "frame", out);
  }
  if (diff.has_phases && !diff.phases.empty()) {
    out << "phases (total cycles over the jobs; top " << std::min(top, diff.phases.size())
        << " by delta):\n";
    PrintRows(diff.phases, top, "phase", out);
  }
  if (!diff.phases_added.empty()) {
    out << "added phases (only in AFTER; not gated by --fail-above):\n";
    PrintRows(diff.phases_added, diff.phases_added.size(), "phase", out);
  }
  if (!diff.phases_removed.empty()) {
    out << "removed phases (only in BEFORE; not gated by --fail-above):\n";
    PrintRows(diff.phases_removed, diff.phases_removed.size(), "phase", out);
  }
  if (diff.has_trace) {
    out << "trace shape (rows summed over " << diff.job_padded.size()
        << " job(s) with one on both sides; docs/trace-shape.md):\n";
    PrintRows(diff.trace, diff.trace.size(), "trace", out);
    std::vector<CycleDelta> crossed;
    for (const CycleDelta& job : diff.job_padded) {
      if (job.delta() != 0) crossed.push_back(job);
    }
    if (!crossed.empty()) {
      out << "jobs whose padded trace length changed:\n";
      PrintRows(crossed, crossed.size(), "job", out);
    }
  }
  out << "total:\n";
  PrintRows({{"all jobs", diff.before_total, diff.after_total}}, 1, "aggregate", out);
}

nlohmann::json SuiteDiffJson(const SuiteDiff& diff, size_t top) {
  const CycleDelta total{"total", diff.before_total, diff.after_total};
  nlohmann::json j = RowJson(total);
  j.erase("name");
  auto rows = [](const std::vector<CycleDelta>& v, size_t limit) {
    nlohmann::json a = nlohmann::json::array();
    for (size_t i = 0; i < v.size() && i < limit; ++i) a.push_back(RowJson(v[i]));
    return a;
  };
  j["jobs"] = rows(diff.jobs, diff.jobs.size());
  j["added"] = rows(diff.added, diff.added.size());
  j["removed"] = rows(diff.removed, diff.removed.size());
  std::vector<CycleDelta> frames;
  for (const CycleDelta& f : diff.frames) {
    if (f.delta() > 0) frames.push_back(f);
  }
  j["frames"] = rows(frames, top);
  j["procedures"] = nlohmann::json::array();
  for (const ProcedureDelta& p : diff.procedures) {
    nlohmann::json self = RowJson(p.self);
    nlohmann::json inclusive = RowJson(p.inclusive);
    self.erase("name");
    inclusive.erase("name");
    j["procedures"].push_back({{"name", p.name}, {"self", self}, {"inclusive", inclusive}});
  }
  j["phases"] = nlohmann::json::array();
  for (const CycleDelta& p : diff.phases) {
    nlohmann::json row = RowJson(p);
    auto it = diff.job_phases.find(p.name);
    if (it != diff.job_phases.end()) row["jobs"] = rows(it->second, it->second.size());
    j["phases"].push_back(std::move(row));
  }
  j["phases_added"] = rows(diff.phases_added, diff.phases_added.size());
  j["phases_removed"] = rows(diff.phases_removed, diff.phases_removed.size());
  if (diff.has_trace) {
    j["trace"] = rows(diff.trace, diff.trace.size());
    j["jobs_padded"] = rows(diff.job_padded, diff.job_padded.size());
  }
  return j;
}

}  // namespace flamefleet::cli
