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

}  // namespace flamefleet::bench

#endif  // FLAMEFLEET_BENCH_BENCH_PROGRAMS_H_
