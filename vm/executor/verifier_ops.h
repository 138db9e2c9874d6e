// The recursive-verifier native operations of the Miden VM: FRIE2F4 (FRI folding by 4 over the
// quadratic extension), HORNERBASE / HORNEREXT (8 or 4 Horner steps of a polynomial
// evaluation at a point read from memory) and EVALCIRCUIT (the ACE chiplet: evaluate an
// arithmetic circuit laid out in memory and require it to be zero), in the layouts of both
// dialects. The executor's switch calls one function per operation (one row, one cycle);
// everything here runs outside the per-cycle path of the other operations.
//
// Classic (v0.16.4, processor/src/fast/{fri_ops,horner_ops,circuit_eval}.rs and
// processor/src/chiplets/ace/): the extension is F_p[x]/(x^2 - x + 2), pairs are stored high
// coefficient nearer the top, FRI's x includes the domain offset 7. Le (v0.25.7,
// processor/src/execution/operations/{fri_ops,crypto_ops}/mod.rs, eval_circuit.rs): the
// extension is F_p[x]/(x^2 - 7), low coefficients nearer the top, query values bit-reversed.
//
//   Felt* sp = ...;  // sp[-i] is stack position i; at least 16 positions are readable
//   verifier_ops::OpResult r = verifier_ops::HornerEvalBaseLe(sp, load);
//   if (!r.ok()) trap(r.kind, r.message);
//   r = verifier_ops::FriExt2Fold4Le(sp);  // then the caller drops one element
#ifndef FLAMEFLEET_VM_EXECUTOR_VERIFIER_OPS_H_
#define FLAMEFLEET_VM_EXECUTOR_VERIFIER_OPS_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "vm/executor/executor.h"
#include "vm/felt.h"

namespace flamefleet::vm::verifier_ops {

// Reads the element at `addr` of the current context's memory (0 where never written). The
// operations check the address (< 2^32, word alignment) before they call it.
using LoadElement = absl::FunctionRef<Felt(uint32_t addr)>;

// The outcome of one operation: ok(), or the trap the executor raises (its kind and message).
struct OpResult {
  TrapKind kind = TrapKind::kNone;
  std::string message;

  bool ok() const { return kind == TrapKind::kNone; }
};

// FRIE2F4 (v0.16.4): [v7, v6, v5, v4, v3, v2, v1, v0, f_pos, d_seg, poe, pe1, pe0, a1, a0,
// cptr, ...] (top first; query value i is (v_2i, v_2i+1), low first) folds the 4 query values
// at x = 7 * poe * tau^-d_seg with challenge alpha = (a0, a1). Checks d_seg <= 3 and that query
// value d_seg equals (pe0, pe1). On success writes the 15 new top elements [t0_1, t0_0, t1_1,
// t1_0, flags(d_seg) (flag 3 on top), poe^2, tau^-d_seg, cptr + 8, poe^4, f_pos, ne1, ne0] to
// positions 1..15 (sp[-1] .. sp[-15]); the caller then drops one element so that they become
// positions 0..14 and the element below the 16 moves into position 15. On failure nothing is
// written; the kind is kFriFoldingFailed.
OpResult FriExt2Fold4Classic(Felt* sp);

// FRIE2F4 (v0.25.7): [v0, v1, v2, v3, v4, v5, v6, v7, f_pos, p, poe, pe0, pe1, a0, a1, cptr,
// ...]: query value i is (v_2i, v_2i+1) in bit-reversed order, d_seg = p & 3, the folded
// position is p >> 2 (stack position 8 is not read) and x = poe * tau^-rev(d_seg) (no domain
// offset). Fails when poe is 0 or query value d_seg differs from (pe0, pe1). Writes [t0_0,
// t0_1, t1_0, t1_1, flags(rev(d_seg)) (flag 0 on top), poe^2, tau^-rev(d_seg), cptr + 8, poe^4,
// p >> 2, ne0, ne1] to positions 1..15 like FriExt2Fold4Classic.
OpResult FriExt2Fold4Le(Felt* sp);

// HORNERBASE (v0.16.4): acc = (s15, s14) (low, high); alpha = the first two elements of the
// word at address s13 (which must be word aligned and < 2^32); 8 Horner steps over the base
// coefficients s7 (highest degree) .. s0. Writes the new accumulator to s14 (high), s15 (low).
OpResult HornerEvalBaseClassic(Felt* sp, LoadElement load);

// HORNERBASE (v0.25.7): acc = (s14, s15) (low, high); alpha = (mem[s13], mem[s13 + 1]) (no
// alignment; both addresses must be < 2^32); 8 Horner steps over s0 (highest degree) .. s7.
OpResult HornerEvalBaseLe(Felt* sp, LoadElement load);

// HORNEREXT (v0.16.4): 4 Horner steps over the extension coefficients (s7, s6) (highest
// degree, as (low, high)) .. (s1, s0); alpha and the accumulator as HornerEvalBaseClassic.
OpResult HornerEvalExtClassic(Felt* sp, LoadElement load);

// HORNEREXT (v0.25.7): 4 Horner steps over (s0, s1) (highest degree, as (low, high)) ..
// (s6, s7); alpha = the first two elements of the word at address s13 (word aligned); the
// accumulator as HornerEvalBaseLe.
OpResult HornerEvalExtLe(Felt* sp, LoadElement load);

// EVALCIRCUIT (v0.16.4 `arithmetic_circuit_eval`): [ptr, num_vars, num_eval, ...] unchanged.
// Reads num_vars / 2 words from ptr (the inputs and constants, two extension elements per
// word, low coefficient first) and then num_eval gate encodings (one element each:
// id_l | id_r << 30 | op << 60, op 0 = sub, 1 = mul, 2 = add); wire ids count down from
// num_vars + num_eval - 1 in the order the wires are produced. Fails (kind
// kCircuitEvaluationFailed) unless num_vars is even and non-zero, num_eval is a non-zero
// multiple of 4, there are fewer than 2^30 wires, every gate decodes and reads wires already
// produced, and the last wire is zero; memory errors trap as the memory operations do. The
// wire values need 16 bytes each: more than `max_scratch_bytes` traps with kMemoryLimit.
OpResult EvalCircuitClassic(const Felt* sp, LoadElement load, uint64_t max_scratch_bytes);

// EVALCIRCUIT (v0.25.7 `eval_circuit`): as EvalCircuitClassic over F_p[x]/(x^2 - 7), with
// v0.25.7's error messages.
OpResult EvalCircuitLe(const Felt* sp, LoadElement load, uint64_t max_scratch_bytes);

}  // namespace flamefleet::vm::verifier_ops

#endif  // FLAMEFLEET_VM_EXECUTOR_VERIFIER_OPS_H_
