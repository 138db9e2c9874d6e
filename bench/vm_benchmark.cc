// VM throughput in cycles per second (items_per_second = VM cycles / s) on four program shapes,
// with and without a call-stack observer attached.
//
//   ./build/bench/vm_benchmark --benchmark_filter=Fib
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

// Straight-line: one big basic block, like the Fibonacci example.
std::string FibLike() { return "begin repeat.100000 swap dup.1 add end end"; }

// Loop-heavy: a counted while loop with a small body and an if in it.
std::string LoopHeavy() {
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
std::string U32Heavy() {
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
std::string CallHeavy() {
  return R"(
    proc.leaf push.3 mul add.1 end
    proc.branchy dup.0 is_odd if.true add.1 else add.2 end end
    proc.mid exec.leaf exec.branchy exec.leaf end
    begin
      push.1 push.50000
      dup.0 neq.0
      while.true
        swap exec.mid u32split drop swap sub.1 dup.0 neq.0
      end
      drop drop
    end)";
}

// A cheap observer: keeps the frame depth and counts transitions, like a profiler's cursor.
class CountingObserver : public CallStackObserver {
 public:
  void OnEnter(uint32_t procedure, uint64_t clk) override {
    stack_[depth_++ & 63] = procedure;
    last_ = clk;
  }
  void OnLeave(uint64_t clk) override {
    --depth_;
    last_ = clk;
  }
  uint64_t last_ = 0;

 private:
  uint32_t stack_[64] = {};
  uint32_t depth_ = 0;
};

void RunBenchmark(benchmark::State& state, const std::string& source, bool observe) {
  absl::StatusOr<Program> program = Assembler(AssemblerOptions{}).AssembleSource("b.masm", source);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  uint64_t cycles = 0;
  for (auto _ : state) {
    CountingObserver observer;
    Executor exec(*program, {}, AdviceProvider{}, ExecutionOptions{}, nullptr,
                  observe ? &observer : nullptr);
    exec.Run();
    if (exec.state() != Executor::State::kFinished) {
      state.SkipWithError(exec.trap().message.c_str());
      return;
    }
    cycles += exec.clk();
    benchmark::DoNotOptimize(observer.last_);
  }
  state.SetItemsProcessed(static_cast<int64_t>(cycles));
}

void BM_FibLike(benchmark::State& s) { RunBenchmark(s, FibLike(), false); }
void BM_FibLikeObserved(benchmark::State& s) { RunBenchmark(s, FibLike(), true); }
void BM_LoopHeavy(benchmark::State& s) { RunBenchmark(s, LoopHeavy(), false); }
void BM_LoopHeavyObserved(benchmark::State& s) { RunBenchmark(s, LoopHeavy(), true); }
void BM_U32Heavy(benchmark::State& s) { RunBenchmark(s, U32Heavy(), false); }
void BM_U32HeavyObserved(benchmark::State& s) { RunBenchmark(s, U32Heavy(), true); }
void BM_CallHeavy(benchmark::State& s) { RunBenchmark(s, CallHeavy(), false); }
void BM_CallHeavyObserved(benchmark::State& s) { RunBenchmark(s, CallHeavy(), true); }

BENCHMARK(BM_FibLike);
BENCHMARK(BM_FibLikeObserved);
BENCHMARK(BM_LoopHeavy);
BENCHMARK(BM_LoopHeavyObserved);
BENCHMARK(BM_U32Heavy);
BENCHMARK(BM_U32HeavyObserved);
BENCHMARK(BM_CallHeavy);
BENCHMARK(BM_CallHeavyObserved);

// Assembly speed of a large program (not a cycle figure).
void BM_AssembleFibLike(benchmark::State& state) {
  std::string source = FibLike();
  for (auto _ : state) {
    auto program = Assembler(AssemblerOptions{}).AssembleSource("b.masm", source);
    benchmark::DoNotOptimize(program);
  }
}
BENCHMARK(BM_AssembleFibLike)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flamefleet::vm

BENCHMARK_MAIN();
