#include "runner/run_stats.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "profile/frame_totals.h"
#include "runner/internal/execution.h"
#include "runner/profile_run.h"
#include "runner/snapshot.h"
#include "vm/crypto/blake3.h"

namespace flamefleet::runner {
namespace {

// A marker event seen during the run.
struct MarkerHit {
  uint64_t clk;
  uint32_t marker;  // index into Markers::names
};

// The events that are markers: by id, with their names and roles.
struct Markers {
  std::vector<std::string> names;
  std::vector<bool> sequential;  // matched by a --marker prefix
  absl::flat_hash_map<uint64_t, uint32_t> by_id;

  uint32_t Add(uint64_t id, absl::string_view name) {
    auto [it, inserted] = by_id.try_emplace(id, static_cast<uint32_t>(names.size()));
    if (inserted) {
      names.emplace_back(name);
      sequential.push_back(false);
    }
    return it->second;
  }
};

// Every `event("NAME")` literal of the program's sources (constants included): the names the
// program can emit by name.
std::vector<std::string> EventNamesInSources(const vm::Program& program) {
  std::vector<std::string> names;
  if (program.sources == nullptr) return names;
  constexpr absl::string_view kOpen = "event(\"";
  for (uint32_t id = 0; id < program.sources->size(); ++id) {
    absl::string_view text = program.sources->text(id);
    for (size_t at = text.find(kOpen); at != absl::string_view::npos;
         at = text.find(kOpen, at + 1)) {
      const size_t begin = at + kOpen.size();
      const size_t end = text.find('"', begin);
      if (end == absl::string_view::npos) break;
      names.emplace_back(text.substr(begin, end - begin));
    }
  }
  return names;
}

Markers CollectMarkers(const vm::Program& program, const StatsOptions& options) {
  Markers markers;
  for (const PhasePair& p : options.phases) {
    markers.Add(EventIdOfName(p.start), p.start);
    markers.Add(EventIdOfName(p.end), p.end);
  }
  if (!options.marker_prefixes.empty()) {
    for (const std::string& name : EventNamesInSources(program)) {
      for (const std::string& prefix : options.marker_prefixes) {
        if (absl::StartsWith(name, prefix)) {
          markers.sequential[markers.Add(EventIdOfName(name), name)] = true;
          break;
        }
      }
    }
  }
  return markers;
}

// Accepts the marker events (recording when they happened) and passes every other event on:
// to `next`, or, without one, answers it as the executor would without a host (an error
// where the dialect refuses unknown events).
class MarkerHost : public vm::Host {
 public:
  MarkerHost(const Markers* markers, vm::Host* next, bool unknown_events_fail)
      : markers_(markers), next_(next), unknown_events_fail_(unknown_events_fail) {}

  absl::Status OnEvent(uint64_t event_id, uint64_t clk, const vm::Executor& executor,
                       vm::AdviceProvider& advice) override {
    if (auto it = markers_->by_id.find(event_id); it != markers_->by_id.end()) {
      hits_.push_back(MarkerHit{clk, it->second});
      return absl::OkStatus();
    }
    if (next_ != nullptr) return next_->OnEvent(event_id, clk, executor, advice);
    if (unknown_events_fail_) {
      return absl::NotFoundError(
          absl::StrCat("no event handler registered for event id ", event_id));
    }
    return absl::OkStatus();
  }
  // A v0.16 `trace.N` is a marker like `emit.N` (both are named by the number N).
  void OnTrace(uint64_t trace_id, uint64_t clk) override {
    if (auto it = markers_->by_id.find(trace_id); it != markers_->by_id.end()) {
      hits_.push_back(MarkerHit{clk, it->second});
    }
    if (next_ != nullptr) next_->OnTrace(trace_id, clk);
  }
  bool AnswersPrecompile(uint64_t event_id) const override {
    return next_ != nullptr && next_->AnswersPrecompile(event_id);
  }
  absl::Status OnPrecompileAnswered(uint64_t event_id, uint64_t clk,
                                    std::span<const vm::Felt> pushed,
                                    const vm::PrecompileRequest* request) override {
    if (next_ == nullptr) return absl::OkStatus();
    return next_->OnPrecompileAnswered(event_id, clk, pushed, request);
  }

  const std::vector<MarkerHit>& hits() const { return hits_; }

 private:
  const Markers* markers_;
  vm::Host* next_;
  bool unknown_events_fail_;
  std::vector<MarkerHit> hits_;
};

void AddSpan(PhaseStats& phase, uint64_t cycles, bool open) {
  phase.min = phase.count == 0 ? cycles : std::min(phase.min, cycles);
  phase.max = phase.count == 0 ? cycles : std::max(phase.max, cycles);
  ++phase.count;
  phase.total += cycles;
  phase.open = phase.open || open;
}

std::vector<PhaseStats> Phases(const StatsOptions& options, const Markers& markers,
                               const std::vector<MarkerHit>& hits, uint64_t end_clk) {
  std::vector<PhaseStats> phases;
  for (const PhasePair& pair : options.phases) {
    PhaseStats phase{.name = absl::StrCat(pair.start, "..", pair.end)};
    const uint32_t start = markers.by_id.at(EventIdOfName(pair.start));
    const uint32_t end = markers.by_id.at(EventIdOfName(pair.end));
    std::vector<uint64_t> open;  // clks of the START markers not yet closed, innermost last
    for (const MarkerHit& hit : hits) {
      // START == END: each marker closes the open span, or opens one.
      if (hit.marker == end && !open.empty()) {
        AddSpan(phase, hit.clk - open.back(), false);
        open.pop_back();
      } else if (hit.marker == start) {
        open.push_back(hit.clk);
      }
    }
    for (uint64_t clk : open) AddSpan(phase, end_clk - clk, true);
    phases.push_back(std::move(phase));
  }
  // Sequential markers: each runs until the next one.
  absl::flat_hash_map<uint32_t, size_t> index;  // marker -> phases index
  const MarkerHit* current = nullptr;
  auto close = [&](uint64_t clk, bool open) {
    auto [it, inserted] = index.try_emplace(current->marker, phases.size());
    if (inserted) phases.push_back(PhaseStats{.name = markers.names[current->marker]});
    AddSpan(phases[it->second], clk - current->clk, open);
  };
  for (const MarkerHit& hit : hits) {
    if (!markers.sequential[hit.marker]) continue;
    if (current != nullptr) close(hit.clk, false);
    current = &hit;
  }
  if (current != nullptr) close(end_clk, true);
  return phases;
}

template <typename T>
void SortByCycles(std::vector<T>& rows, uint64_t T::*key) {
  std::sort(rows.begin(), rows.end(), [key](const T& a, const T& b) {
    return a.*key != b.*key ? a.*key > b.*key : a.name < b.name;
  });
}

// Per-instruction and per-operation tables from the row counts: the executor's per-segment
// tally (vm::RowCounts::Tally), named here, once per distinct instruction and operation.
void CountInstructions(const vm::Program& program, const vm::RowCounts& counts, RunStats& stats) {
  const vm::InstructionTally tally = counts.Tally(program);
  const std::vector<std::string>& mnemonics = program.row_tally.segments.empty()
                                                  ? vm::BuildRowTally(program).mnemonics
                                                  : program.row_tally.mnemonics;
  absl::flat_hash_map<std::string, InstructionStats> instructions;
  for (size_t m = 0; m < tally.count.size() && m < mnemonics.size(); ++m) {
    if (tally.count[m] == 0 && tally.cycles[m] == 0) continue;
    InstructionStats& row = instructions[mnemonics[m]];
    row.count += tally.count[m];
    row.cycles += tally.cycles[m];
  }
  // Rows of no instruction, named after their operation: "(SPAN)", "(END)", "(NOOP)" (padding).
  for (size_t i = 0; i < vm::kNumOpcodes; ++i) {
    if (tally.block_rows[i] == 0) continue;
    InstructionStats& row =
        instructions[absl::StrCat("(", std::string(vm::OpcodeName(vm::kAllOpcodes[i])), ")")];
    row.count += tally.block_rows[i];
    row.cycles += tally.block_rows[i];
  }
  for (auto& [name, row] : instructions) {
    row.name = name;
    stats.instructions.push_back(std::move(row));
  }
  // Distinct opcodes with one MAST name (LOOP and the LOOP that enters without popping) are
  // one operation to the user.
  absl::flat_hash_map<std::string, InstructionStats> operations;
  for (size_t i = 0; i < vm::kNumOpcodes; ++i) {
    if (tally.op_rows[i] == 0) continue;
    InstructionStats& row = operations[std::string(vm::OpcodeName(vm::kAllOpcodes[i]))];
    row.count += tally.op_rows[i];
    row.cycles += tally.op_rows[i];
  }
  for (auto& [name, row] : operations) {
    row.name = name;
    stats.operations.push_back(std::move(row));
  }
  SortByCycles(stats.instructions, &InstructionStats::cycles);
  SortByCycles(stats.operations, &InstructionStats::cycles);
}

void AppendU64(std::string& out, uint64_t v) {
  for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
}

void AppendFelts(std::string& out, const std::vector<vm::Felt>& felts) {
  AppendU64(out, felts.size());
  for (const vm::Felt& f : felts) AppendU64(out, f.value());
}

void AppendWord(std::string& out, const vm::Word& w) {
  for (const vm::Felt& f : w) AppendU64(out, f.value());
}

// The trace-shape stats of a finished run: per procedure (by name, in `procedures` order) the
// self and inclusive rows of each kind, from the per-node buckets weighed like cycles.
TraceShapeStats BuildTraceShapeStats(vm::TraceShape totals, const vm::TraceShapeRules& rules,
                                     const profile::Profile& profile,
                                     const std::vector<ProcedureStats>& procedures) {
  TraceShapeStats out;
  out.rules = &rules;
  out.nodes = std::move(totals.buckets);
  out.nodes.resize(std::max(out.nodes.size(), profile.num_nodes()));
  totals.buckets.clear();
  out.totals = std::move(totals);
  const vm::TraceShape& t = out.totals;
  out.overhead[static_cast<size_t>(TraceKind::kHasher)] = t.hasher_controller_padding;
  out.overhead[static_cast<size_t>(TraceKind::kRange)] = t.overhead.range_rows;
  out.overhead[static_cast<size_t>(TraceKind::kChiplets)] = t.OverheadChipletRows(rules);
  // Rows requested outside every procedure (none in an assembled program) count as overhead.
  if (!out.nodes.empty()) {
    for (TraceKind kind : kAllTraceKinds) {
      out.overhead[static_cast<size_t>(kind)] += TraceKindRows(out.nodes[0], kind, rules);
    }
  }

  absl::flat_hash_map<std::string, size_t> row_of;
  for (const ProcedureStats& p : procedures) {
    row_of.emplace(p.name, out.procedures.size());
    out.procedures.push_back(ProcedureTraceShape{.name = p.name});
  }
  for (TraceKind kind : kAllTraceKinds) {
    const profile::Profile weighted = TraceWeightedProfile(profile, out, kind);
    for (const profile::FrameTotal& f : profile::FrameTotals(weighted)) {
      auto it = row_of.find(weighted.frame_name(f.frame));
      if (it == row_of.end()) continue;
      out.procedures[it->second].self[static_cast<size_t>(kind)] = f.self;
      out.procedures[it->second].inclusive[static_cast<size_t>(kind)] = f.inclusive;
    }
  }
  for (profile::Profile::NodeId n = 1; n < profile.num_nodes(); ++n) {
    auto it = row_of.find(profile.frame_name(profile.frame(n)));
    if (it == row_of.end()) continue;
    out.procedures[it->second].hasher_requests += out.nodes[n].hasher_requests;
    out.procedures[it->second].hasher_dedup_hits += out.nodes[n].hasher_dedup_hits;
  }
  return out;
}

}  // namespace

absl::string_view TraceKindName(TraceKind kind) {
  switch (kind) {
    case TraceKind::kHasher:
      return "hasher";
    case TraceKind::kBitwise:
      return "bitwise";
    case TraceKind::kMemory:
      return "memory";
    case TraceKind::kAce:
      return "ace";
    case TraceKind::kRange:
      return "range";
    case TraceKind::kChiplets:
      return "chiplets";
  }
  return "chiplets";
}

absl::StatusOr<TraceKind> ParseTraceKind(absl::string_view name) {
  for (TraceKind kind : kAllTraceKinds) {
    if (TraceKindName(kind) == name) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown trace row kind '", name,
                   "' (expected hasher, bitwise, memory, ace, range or chiplets)"));
}

uint64_t TraceKindRows(const vm::TraceShapeCounts& counts, TraceKind kind,
                       const vm::TraceShapeRules& rules) {
  switch (kind) {
    case TraceKind::kHasher:
      return counts.HasherRows(rules);
    case TraceKind::kBitwise:
      return counts.bitwise_rows;
    case TraceKind::kMemory:
      return counts.memory_rows;
    case TraceKind::kAce:
      return counts.ace_rows;
    case TraceKind::kRange:
      return counts.range_rows;
    case TraceKind::kChiplets:
      return counts.ChipletRows(rules);
  }
  return 0;
}

uint64_t TraceShapeStats::Total(TraceKind kind) const {
  switch (kind) {
    case TraceKind::kHasher:
      return totals.hasher_rows;
    case TraceKind::kBitwise:
      return totals.bitwise_rows;
    case TraceKind::kMemory:
      return totals.memory_rows;
    case TraceKind::kAce:
      return totals.ace_rows;
    case TraceKind::kRange:
      return totals.range_rows;
    case TraceKind::kChiplets:
      return totals.chiplets_rows;
  }
  return 0;
}

profile::Profile TraceWeightedProfile(const profile::Profile& cycles, const TraceShapeStats& shape,
                                      TraceKind kind) {
  profile::Profile out;
  out.Reserve(cycles.num_nodes() + 1);
  std::vector<profile::Profile::NodeId> node_of(cycles.num_nodes(), profile::Profile::kRoot);
  std::vector<profile::Profile::FrameId> frame_of(cycles.num_frames(), profile::Profile::kNoFrame);
  for (profile::Profile::NodeId n = 0; n < cycles.num_nodes(); ++n) {
    if (n != profile::Profile::kRoot) {
      const profile::Profile::FrameId f = cycles.frame(n);
      if (frame_of[f] == profile::Profile::kNoFrame) {
        frame_of[f] = out.InternFrame(cycles.frame_name(f));
      }
      node_of[n] = out.Child(node_of[cycles.parent(n)], frame_of[f]);
    }
    if (n != profile::Profile::kRoot && n < shape.nodes.size()) {  // the root's: overhead
      const uint64_t rows = TraceKindRows(shape.nodes[n], kind, *shape.rules);
      if (rows != 0) out.AddSelf(node_of[n], rows);
    }
  }
  const uint64_t overhead = shape.overhead[static_cast<size_t>(kind)];
  if (overhead != 0) {
    out.AddSelf(out.Child(profile::Profile::kRoot, out.InternFrame(kTraceOverheadFrame)), overhead);
  }
  return out;
}

absl::StatusOr<PhasePair> ParsePhasePair(absl::string_view flag) {
  const size_t eq = flag.find('=');
  if (eq == absl::string_view::npos || eq == 0 || eq + 1 == flag.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--phase '", flag, "': expected START=END (two event names)"));
  }
  return PhasePair{std::string(flag.substr(0, eq)), std::string(flag.substr(eq + 1))};
}

uint64_t EventIdOfName(absl::string_view name) {
  uint64_t id = 0;
  if (!name.empty() && name[0] >= '0' && name[0] <= '9' && absl::SimpleAtoi(name, &id)) {
    return id;
  }
  // As the v0.25 parser evaluates event("name"): the first 8 bytes of BLAKE3(name),
  // little-endian, reduced mod p.
  const std::array<uint8_t, 32> digest = vm::Blake3(name);
  uint64_t v = 0;
  for (size_t k = 0; k < 8; ++k) v |= static_cast<uint64_t>(digest[k]) << (8 * k);
  return vm::Felt::FromU64(v).value();
}

std::string ProgramDigest(const vm::Program& program) {
  std::string out = "0x";
  if (program.entry_procedure >= program.procedures.size()) return out;
  for (const vm::Felt& e : program.procedures[program.entry_procedure].mast_root) {
    for (int b = 0; b < 8; ++b) {
      absl::StrAppend(&out, absl::Hex((e.value() >> (8 * b)) & 0xFF, absl::kZeroPad2));
    }
  }
  return out;
}

std::string InputsDigest(const vm::ProgramInputs& inputs) {
  std::string bytes = "flamefleet.inputs/1";
  AppendFelts(bytes, inputs.stack);
  AppendFelts(bytes, inputs.advice_stack);
  AppendU64(bytes, inputs.advice_map.size());
  for (const auto& [key, values] : inputs.advice_map) {
    AppendWord(bytes, key);
    AppendFelts(bytes, values);
  }
  AppendU64(bytes, inputs.merkle_store.size());
  for (const vm::MerkleStoreInput& m : inputs.merkle_store) {
    AppendU64(bytes, static_cast<uint64_t>(m.kind));
    AppendU64(bytes, m.indices.size());
    for (uint64_t i : m.indices) AppendU64(bytes, i);
    AppendU64(bytes, m.leaves.size());
    for (const vm::Word& w : m.leaves) AppendWord(bytes, w);
  }
  AppendU64(bytes, inputs.max_cycles.has_value() ? 1 : 0);
  AppendU64(bytes, inputs.max_cycles.value_or(0));
  return SourceDigest(bytes);
}

absl::StatusOr<StatsRun> ProfileProgramWithStats(const vm::Program& program,
                                                 const vm::ProgramInputs& inputs,
                                                 const vm::ExecutionOptions& options,
                                                 const StatsOptions& stats,
                                                 const std::atomic<bool>* cancel, vm::Host* host) {
  FLAMEFLEET_ASSIGN_OR_RETURN(internal::ExecutionSetup setup,
                              internal::PrepareExecution(program, inputs, options));
  const Markers markers = CollectMarkers(program, stats);
  MarkerHost marker_host(&markers, host, program.dialect->events->layout().unknown_events_fail);
  // Without markers the host is the caller's, so events behave exactly as in ProfileProgram.
  vm::Host* run_host = markers.names.empty() ? host : &marker_host;

  StatsRun run;
  CycleRecorder recorder(program, &run.profile);
  vm::RowCounts counts;
  vm::Executor exec(program, inputs.stack, std::move(setup.advice), setup.options, run_host,
                    &recorder);
  if (stats.count_instructions) exec.CountRows(&counts);
  std::optional<vm::TraceShapeRecorder> shape;
  if (stats.trace_shape && program.dialect->trace_shape != nullptr) {
    shape.emplace(program);
    exec.RecordTraceShape(&*shape);
    recorder.set_trace_shape(&*shape);
  }
  FLAMEFLEET_RETURN_IF_ERROR(internal::RunCancellable(exec, cancel));
  recorder.Finish(exec.clk());
  absl::StatusOr<vm::RunResult> result = vm::FinishRun(exec);
  if (result.ok()) {
    run.result = *std::move(result);
  } else {
    run.status = result.status();
    run.result.cycles = exec.clk();
    run.result.stack = exec.StackTop(16);
  }

  RunStats& s = run.stats;
  std::vector<profile::FrameTotal> totals = profile::FrameTotals(run.profile);
  absl::flat_hash_map<absl::string_view, const profile::FrameTotal*> by_name;
  for (const profile::FrameTotal& t : totals) by_name[run.profile.frame_name(t.frame)] = &t;
  for (uint32_t p = 0; p < program.procedures.size(); ++p) {
    const uint64_t calls = recorder.calls()[p];
    auto it = by_name.find(program.procedures[p].name);
    if (calls == 0 && it == by_name.end()) continue;
    ProcedureStats row{.name = program.procedures[p].name, .calls = calls};
    if (it != by_name.end()) {
      row.self = it->second->self;
      row.inclusive = it->second->inclusive;
      by_name.erase(it);  // two procedures with one name (never in practice) count once
    }
    s.procedures.push_back(std::move(row));
  }
  SortByCycles(s.procedures, &ProcedureStats::inclusive);
  if (stats.count_instructions) CountInstructions(program, counts, s);
  s.phases = Phases(stats, markers, marker_host.hits(), exec.clk());
  s.mast = MastSize{program.num_mast_nodes, program.num_mast_ops};
  if (shape.has_value() && run.status.ok()) {
    s.trace_shape = BuildTraceShapeStats(shape->Finish(exec.clk()), *program.dialect->trace_shape,
                                         run.profile, s.procedures);
  }
  return run;
}

// SummaryJson(SummaryInput): runner/summary.cc, beside the wire form of the same summary.

}  // namespace flamefleet::runner
