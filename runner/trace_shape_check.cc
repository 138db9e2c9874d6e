// The one consistency check of a job's trace shape (runner/run_stats.h CheckTraceShape): the
// rules of docs/trace-shape.md, with the numbers of the dialect's vm::TraceShapeRules, applied to
// a shape read from outside (a worker's summary, a summary.json file).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "runner/run_stats.h"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

size_t At(TraceKind kind) { return static_cast<size_t>(kind); }

// a * b, or nullopt when it overflows.
std::optional<uint64_t> Mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The sum of `terms`, or nullopt when it overflows.
std::optional<uint64_t> Sum(std::initializer_list<uint64_t> terms) {
  uint64_t r = 0;
  for (uint64_t t : terms) {
    if (__builtin_add_overflow(r, t, &r)) return std::nullopt;
  }
  return r;
}

// max(min_len, next_pow2(rows)), or nullopt when the power of two exceeds 64 bits.
std::optional<uint64_t> Height(uint64_t rows, uint64_t min_len) {
  if (rows > (uint64_t{1} << 63)) return std::nullopt;
  return std::max(min_len, rows <= 1 ? uint64_t{1} : std::bit_ceil(rows));
}

// `actual` must equal `expected` (nullopt: the expected value overflows 64 bits).
absl::Status Expect(absl::string_view field, uint64_t actual, std::optional<uint64_t> expected,
                    absl::string_view what) {
  if (!expected.has_value()) return Bad(field, absl::StrCat(what, " overflows 64 bits"));
  if (actual == *expected) return absl::OkStatus();
  return Bad(field, absl::StrCat(actual, " is not ", what, " = ", *expected));
}

std::string KindField(absl::string_view base, TraceKind kind) {
  return absl::StrCat(base, ".", TraceKindName(kind));
}

}  // namespace

absl::StatusOr<const vm::TraceShapeRules*> TraceShapeRulesOf(absl::string_view dialect) {
  absl::StatusOr<vm::Dialect> d = vm::ParseDialect(dialect);
  const vm::TraceShapeRules* rules =
      d.ok() && vm::DialectName(*d) == dialect ? vm::GetDialectSpec(*d).trace_shape : nullptr;
  if (rules == nullptr) {
    return Bad("trace_shape", absl::StrCat("dialect \"", absl::CHexEscape(dialect),
                                           "\" has no trace-shape rules (only v0.25 has a trace "
                                           "shape)"));
  }
  return rules;
}

absl::StatusOr<vm::TraceBound> ParseTraceBound(absl::string_view name) {
  for (vm::TraceBound b :
       {vm::TraceBound::kCore, vm::TraceBound::kRange, vm::TraceBound::kChiplets}) {
    if (vm::TraceBoundName(b) == name) return b;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", absl::CHexEscape(name), "\" is not a trace bound (expected core, range or chiplets)"));
}

absl::Status CheckTraceAttribution(const TraceRows& totals, const TraceRows& overhead,
                                   const std::vector<ProcedureTraceShape>& procedures,
                                   absl::string_view totals_field) {
  TraceRows sums = overhead;
  for (size_t i = 0; i < procedures.size(); ++i) {
    const ProcedureTraceShape& p = procedures[i];
    const std::string field = absl::StrCat("procedures[", i, "].trace");
    for (TraceKind kind : kAllTraceKinds) {
      const size_t k = At(kind);
      if (p.self[k] > p.inclusive[k]) {
        return Bad(KindField(absl::StrCat(field, ".self"), kind),
                   absl::StrCat(p.self[k], " exceeds inclusive ", p.inclusive[k]));
      }
      if (p.inclusive[k] > totals[k]) {
        return Bad(KindField(absl::StrCat(field, ".inclusive"), kind),
                   absl::StrCat(p.inclusive[k], " exceeds the total ", totals[k]));
      }
      if (__builtin_add_overflow(sums[k], p.self[k], &sums[k])) {
        return Bad(totals_field, "the procedures' trace rows overflow 64 bits");
      }
    }
  }
  for (TraceKind kind : kAllTraceKinds) {
    const size_t k = At(kind);
    if (sums[k] != totals[k]) {
      return Bad(totals_field, absl::StrCat("the procedures' self ", TraceKindName(kind),
                                            " rows and the overhead sum to ", sums[k],
                                            ", not the total ", totals[k]));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTraceShape(const TraceShapeStats& shape, uint64_t cycles) {
  const vm::TraceShapeRules& rules = *shape.rules;
  const vm::TraceShape& t = shape.totals;
  constexpr absl::string_view kField = "trace_shape";
  auto f = [](absl::string_view name) { return absl::StrCat("trace_shape.", name); };

  FLAMEFLEET_RETURN_IF_ERROR(Expect(f("core_rows"), t.core_rows,
                                    Sum({cycles, rules.core_extra_rows}),
                                    absl::StrCat("cycles + ", rules.core_extra_rows)));
  // The hasher: 2 controller rows per request, padded to 16, 16 rows per distinct state.
  if (t.hasher_states > t.hasher_requests) {
    return Bad(f("hasher.states"),
               absl::StrCat(t.hasher_states, " exceeds requests = ", t.hasher_requests));
  }
  FLAMEFLEET_RETURN_IF_ERROR(
      Expect(f("hasher.controller_rows"), t.hasher_controller_rows,
             Mul(t.hasher_requests, rules.controller_rows_per_request),
             absl::StrCat(rules.controller_rows_per_request, " x requests")));
  const uint64_t align = rules.controller_alignment;
  FLAMEFLEET_RETURN_IF_ERROR(
      Expect(f("hasher.controller_padding"), t.hasher_controller_padding,
             (align - t.hasher_controller_rows % align) % align,
             absl::StrCat("the padding of controller_rows to a multiple of ", align)));
  FLAMEFLEET_RETURN_IF_ERROR(Expect(f("hasher.permutation_rows"), t.hasher_permutation_rows,
                                    Mul(t.hasher_states, rules.permutation_rows),
                                    absl::StrCat(rules.permutation_rows, " x states")));
  FLAMEFLEET_RETURN_IF_ERROR(Expect(
      f("hasher.rows"), t.hasher_rows,
      Sum({t.hasher_controller_rows, t.hasher_controller_padding, t.hasher_permutation_rows}),
      "controller_rows + controller_padding + permutation_rows"));
  if (t.bitwise_rows % rules.bitwise_rows_per_op != 0) {
    return Bad(f("bitwise_rows"),
               absl::StrCat(t.bitwise_rows, " is not a multiple of ", rules.bitwise_rows_per_op,
                            " (rows per U32AND / U32XOR)"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(Expect(
      f("chiplets_rows"), t.chiplets_rows,
      Sum({t.hasher_rows, t.bitwise_rows, t.memory_rows, t.ace_rows, t.kernel_rom_rows,
           rules.chiplets_extra_rows}),
      absl::StrCat("hasher + bitwise + memory + ace + kernel_rom + ", rules.chiplets_extra_rows)));
  const std::string min = absl::StrCat(rules.min_trace_len);
  FLAMEFLEET_RETURN_IF_ERROR(
      Expect(f("core_height"), t.core_height,
             Height(std::max(t.core_rows, t.range_rows), rules.min_trace_len),
             absl::StrCat("max(", min, ", next_pow2(max(core_rows, range_rows)))")));
  FLAMEFLEET_RETURN_IF_ERROR(Expect(f("chiplets_height"), t.chiplets_height,
                                    Height(t.chiplets_rows, rules.min_trace_len),
                                    absl::StrCat("max(", min, ", next_pow2(chiplets_rows))")));
  if (t.padded_len != std::max(t.core_height, t.chiplets_height)) {
    return Bad(f("padded_len"), absl::StrCat(t.padded_len, " is not the larger height of ",
                                             t.core_height, " and ", t.chiplets_height));
  }
  // On a tie of the heights the core AIR sets the length.
  const vm::TraceBound bound = t.chiplets_height > t.core_height ? vm::TraceBound::kChiplets
                               : t.range_rows > t.core_rows      ? vm::TraceBound::kRange
                                                                 : vm::TraceBound::kCore;
  if (t.bound != bound) {
    return Bad(f("bound"), absl::StrCat("\"", vm::TraceBoundName(t.bound), "\" is not \"",
                                        vm::TraceBoundName(bound),
                                        "\", the trace that sets the padded length"));
  }

  TraceRows totals{};
  for (TraceKind kind : kAllTraceKinds) totals[At(kind)] = shape.Total(kind);
  // Per procedure: its hasher rows from its requests, its chiplets rows from its parts.
  uint64_t requests = 0, new_states = 0;
  for (size_t i = 0; i < shape.procedures.size(); ++i) {
    const ProcedureTraceShape& p = shape.procedures[i];
    const std::string field = absl::StrCat("procedures[", i, "].trace");
    if (p.hasher_dedup_hits > p.hasher_requests) {
      return Bad(
          absl::StrCat(field, ".hasher_dedup_hits"),
          absl::StrCat(p.hasher_dedup_hits, " exceeds hasher_requests = ", p.hasher_requests));
    }
    const std::optional<uint64_t> controller =
        Mul(p.hasher_requests, rules.controller_rows_per_request);
    const std::optional<uint64_t> permutations =
        Mul(p.hasher_requests - p.hasher_dedup_hits, rules.permutation_rows);
    FLAMEFLEET_RETURN_IF_ERROR(
        Expect(absl::StrCat(field, ".self.hasher"), p.self[At(TraceKind::kHasher)],
               controller && permutations ? Sum({*controller, *permutations}) : std::nullopt,
               absl::StrCat(rules.controller_rows_per_request, " x hasher_requests + ",
                            rules.permutation_rows, " x (hasher_requests - hasher_dedup_hits)")));
    for (const auto& [side, rows] :
         {std::pair<const char*, const TraceRows&>{"self", p.self},
          std::pair<const char*, const TraceRows&>{"inclusive", p.inclusive}}) {
      FLAMEFLEET_RETURN_IF_ERROR(
          Expect(absl::StrCat(field, ".", side, ".chiplets"), rows[At(TraceKind::kChiplets)],
                 Sum({rows[At(TraceKind::kHasher)], rows[At(TraceKind::kBitwise)],
                      rows[At(TraceKind::kMemory)], rows[At(TraceKind::kAce)]}),
                 "hasher + bitwise + memory + ace"));
    }
    if (__builtin_add_overflow(requests, p.hasher_requests, &requests) ||
        __builtin_add_overflow(new_states, p.hasher_requests - p.hasher_dedup_hits, &new_states)) {
      return Bad(kField, "the procedures' hasher requests overflow 64 bits");
    }
  }
  if (requests > t.hasher_requests) {
    return Bad(kField, absl::StrCat("the procedures' hasher_requests sum to ", requests,
                                    ", more than hasher.requests = ", t.hasher_requests));
  }
  if (new_states > t.hasher_states) {
    return Bad(kField,
               absl::StrCat("the procedures request ", new_states,
                            " new hasher states, more than hasher.states = ", t.hasher_states));
  }
  return CheckTraceAttribution(totals, shape.overhead, shape.procedures, kField);
}

}  // namespace flamefleet::runner
