// MASM programs shared by the VM and profiling benchmarks, one per workload shape.
#ifndef FLAMEFLEET_BENCH_BENCH_PROGRAMS_H_
#define FLAMEFLEET_BENCH_BENCH_PROGRAMS_H_

#include <string>

namespace flamefleet::bench {

// Straight-line: one big basic block, like the Fibonacci example (300k cycles).
inline std::string FibLike() { return "begin repeat.100000 swap dup.1 add end end"; }

// Loop-heavy: a counted while loop with a small body and an if in it.
// Hash-heavy: 20000 chained RPO permutations (hperm), 18 cycles per iteration of which one
// is HPERM (the shape of tests/testdata/vm/crypto/hperm_loop.masm).
inline std::string HpermHeavy() {
  return R"(begin
    push.1.2.3.4.5.6.7.8.9.10.11.12
    push.20000
    dup neq.0
    while.true
      movdn.12 hperm movup.12 sub.1 dup neq.0
    end
    drop dropw dropw dropw
  end)";
}

// Hash-heavy, denser: 8 hperm per loop iteration.
inline std::string HpermDense() {
  return R"(begin
    push.1.2.3.4.5.6.7.8.9.10.11.12
    push.5000
    dup neq.0
    while.true
      movdn.12 hperm hperm hperm hperm hperm hperm hperm hperm movup.12 sub.1 dup neq.0
    end
    drop dropw dropw dropw
  end)";
}

inline std::string LoopHeavy() {
  return R"(begin
    push.0 push.200000
    dup.0 neq.0
    while.true
      dup.0 is_odd
      if.true swap add.3 swap else swap mul.2 swap end
      sub.1 dup.0 neq.0
    end
    drop drop
  end)";
}

// u32-heavy: xorshift-style mixing with u32 operations.
inline std::string U32Heavy() {
  return R"(begin
    push.2463534242 push.100000
    dup.0 neq.0
    while.true
      swap
      dup.0 u32shl.13 u32xor
      dup.0 u32shr.17 u32xor
      dup.0 u32shl.5 u32xor
      dup.0 u32rotl.7 u32wrapping_add u32wrapping_add.12345
      u32and.4294967295
      swap sub.1 dup.0 neq.0
    end
    drop drop
  end)";
}

// Call-heavy: nested procedures, some inlined into the caller's block and some not.
inline std::string CallHeavy(int iterations = 50000) {
  return R"(
    proc.leaf push.3 mul add.1 end
    proc.branchy dup.0 is_odd if.true add.1 else add.2 end end
    proc.mid exec.leaf exec.branchy exec.leaf end
    begin
      push.1 push.)" +
         std::to_string(iterations) + R"(
      dup.0 neq.0
      while.true
        swap exec.mid u32split drop swap sub.1 dup.0 neq.0
      end
      drop drop
    end)";
}

// v0.25 ports of the programs above (Miden VM v0.25.7 syntax and semantics), the same workloads
// for the dialect comparison of bench/vm_benchmark. Cycle counts are those of the independent
// Python model of v0.25.7 (shared/tools/masm_model, --dialect v0.25), v0.16 figures beside them.
// The entry prologue (4 ops) and `while.true` = SPLIT(LOOP, NOOP) make each a few rows longer.

// FibLike in v0.25 (the source is valid in both dialects): 304 172 cycles (v0.16: 304 170).
inline std::string FibLikeV025() { return "begin repeat.100000 swap dup.1 add end end"; }

// HpermHeavy in v0.25: 20000 chained Poseidon2 permutations, 18 cycles per iteration.
// 360 050 cycles (v0.16: 360 043).
inline std::string HpermHeavyV025() {
  return R"(begin
    push.1.2.3.4.5.6.7.8.9.10.11.12
    push.20000
    dup neq.0
    while.true
      movdn.12 hperm movup.12 sub.1 dup neq.0
    end
    drop dropw dropw dropw
  end)";
}

// HpermDense in v0.25: 8 Poseidon2 permutations per loop iteration. 120 050 cycles (v0.16:
// 120 043).
inline std::string HpermDenseV025() {
  return R"(begin
    push.1.2.3.4.5.6.7.8.9.10.11.12
    push.5000
    dup neq.0
    while.true
      movdn.12 hperm hperm hperm hperm hperm hperm hperm hperm movup.12 sub.1 dup neq.0
    end
    drop dropw dropw dropw
  end)";
}

// LoopHeavy in v0.25 (`is_odd` is 6 ops now): 5 800 022 cycles (v0.16: 5 600 016); same
// final value as LoopHeavy.
inline std::string LoopHeavyV025() {
  return R"(begin
    push.0 push.200000
    dup.0 neq.0
    while.true
      dup.0 is_odd
      if.true swap add.3 swap else swap mul.2 swap end
      sub.1 dup.0 neq.0
    end
    drop drop
  end)";
}

// U32Heavy in v0.25 (u32shl and u32wrapping_add gain a SWAP): 4 500 025 cycles (v0.16:
// 3 800 017). Same final value as U32Heavy.
inline std::string U32HeavyV025() {
  return R"(begin
    push.2463534242 push.100000
    dup.0 neq.0
    while.true
      swap
      dup.0 u32shl.13 u32xor
      dup.0 u32shr.17 u32xor
      dup.0 u32shl.5 u32xor
      dup.0 u32rotl.7 u32wrapping_add u32wrapping_add.12345
      u32and.4294967295
      swap sub.1 dup.0 neq.0
    end
    drop drop
  end)";
}

// CallHeavy in v0.25: `proc` without the dot; U32SPLIT now leaves [lo, hi], so keeping the low
// limb (the value mod 2^32, as `u32split drop` did in v0.16) is `u32split swap drop`.
// 2 500 026 cycles at 50000 iterations (v0.16 CallHeavy: 2 400 017); same final value.
inline std::string CallHeavyV025(int iterations = 50000) {
  return R"(
    proc leaf push.3 mul add.1 end
    proc branchy dup.0 is_odd if.true add.1 else add.2 end end
    proc mid exec.leaf exec.branchy exec.leaf end
    begin
      push.1 push.)" +
         std::to_string(iterations) + R"(
      dup.0 neq.0
      while.true
        swap exec.mid u32split swap drop swap sub.1 dup.0 neq.0
      end
      drop drop
    end)";
}

}  // namespace flamefleet::bench

#endif  // FLAMEFLEET_BENCH_BENCH_PROGRAMS_H_
