// TraceShapeRules: how one Miden dialect's prover shapes its traces, as data. The trace-shape
// recorder (vm/executor/trace_shape.h) is dialect-free and reads these numbers; a dialect whose
// VM this model does not describe has none (DialectSpec::trace_shape is null).
//
//   const TraceShapeRules* rules = program.dialect->trace_shape;   // null: not supported
//   if (rules != nullptr) { TraceShapeRecorder recorder(program); ... }
#ifndef FLAMEFLEET_VM_EXECUTOR_TRACE_SHAPE_RULES_H_
#define FLAMEFLEET_VM_EXECUTOR_TRACE_SHAPE_RULES_H_

#include <cstdint>

namespace flamefleet::vm {

struct TraceShapeRules {
  // Hasher chiplet: each permutation request writes this many controller rows; the controller
  // region is padded up to a multiple of `controller_alignment`; each distinct input state gets
  // one permutation cycle of `permutation_rows`.
  uint32_t controller_rows_per_request = 2;
  uint32_t controller_alignment = 16;
  uint32_t permutation_rows = 16;
  // Bitwise chiplet rows per U32AND / U32XOR.
  uint32_t bitwise_rows_per_op = 8;
  // The first capacity element of the hasher state (the domain of a control block is the
  // element after it); the rate is the other 8 elements, starting at Hasher::rate_start().
  uint32_t capacity_start = 8;
  // Rows appended to the core trace after the last cycle (the HALT row).
  uint32_t core_extra_rows = 1;
  // Rows the chiplets trace always has besides its chiplets (the mandatory padding row).
  uint32_t chiplets_extra_rows = 1;
  // Each AIR is padded to the next power of two, and at least this (MIN_TRACE_LEN).
  uint64_t min_trace_len = 64;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_EXECUTOR_TRACE_SHAPE_RULES_H_
