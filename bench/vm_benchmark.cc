// VM throughput in cycles per second (items_per_second = VM cycles / s) on four program shapes,
// with and without a call-stack observer attached, and on two hash-heavy (hperm) loops, each
// under both dialects: BM_<Shape> runs the v0.16 program, BM_<Shape>V025 its v0.25 port (same
// workload, bench/bench_programs.h), so the two dialects' cycles per second compare side by
// side in one run; and the bare RPO and Poseidon2 permutations in permutations per second.
//
//   ./build/bench/vm_benchmark --benchmark_filter=Fib
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_programs.h"
#include "benchmark/benchmark.h"
#include "vm/crypto/poseidon2.h"
#include "vm/crypto/rpo.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

using bench::CallHeavy;
using bench::CallHeavyV025;
using bench::FibLike;
using bench::FibLikeV025;
using bench::HpermDense;
using bench::HpermDenseV025;
using bench::HpermHeavy;
using bench::HpermHeavyV025;
using bench::LoopHeavy;
using bench::LoopHeavyV025;
using bench::U32Heavy;
using bench::U32HeavyV025;

constexpr Dialect kV016 = Dialect::kV0_16;
constexpr Dialect kV025 = Dialect::kV0_25;

AssemblerOptions OptionsFor(Dialect dialect) {
  AssemblerOptions options;
  options.dialect = dialect;
  return options;
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

void RunBenchmark(benchmark::State& state, Dialect dialect, const std::string& source,
                  bool observe) {
  absl::StatusOr<Program> program = Assembler(OptionsFor(dialect)).AssembleSource("b.masm", source);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  uint64_t cycles = 0;
  for (auto _ : state) {
    CountingObserver observer;
    Executor exec(*program, {}, AdviceProvider(*program->dialect->hasher), ExecutionOptions{},
                  nullptr, observe ? &observer : nullptr);
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

void BM_FibLike(benchmark::State& s) { RunBenchmark(s, kV016, FibLike(), false); }
void BM_FibLikeObserved(benchmark::State& s) { RunBenchmark(s, kV016, FibLike(), true); }
void BM_LoopHeavy(benchmark::State& s) { RunBenchmark(s, kV016, LoopHeavy(), false); }
void BM_LoopHeavyObserved(benchmark::State& s) { RunBenchmark(s, kV016, LoopHeavy(), true); }
void BM_U32Heavy(benchmark::State& s) { RunBenchmark(s, kV016, U32Heavy(), false); }
void BM_U32HeavyObserved(benchmark::State& s) { RunBenchmark(s, kV016, U32Heavy(), true); }
void BM_CallHeavy(benchmark::State& s) { RunBenchmark(s, kV016, CallHeavy(), false); }
void BM_CallHeavyObserved(benchmark::State& s) { RunBenchmark(s, kV016, CallHeavy(), true); }
void BM_FibLikeV025(benchmark::State& s) { RunBenchmark(s, kV025, FibLikeV025(), false); }
void BM_FibLikeObservedV025(benchmark::State& s) { RunBenchmark(s, kV025, FibLikeV025(), true); }
void BM_LoopHeavyV025(benchmark::State& s) { RunBenchmark(s, kV025, LoopHeavyV025(), false); }
void BM_LoopHeavyObservedV025(benchmark::State& s) {
  RunBenchmark(s, kV025, LoopHeavyV025(), true);
}
void BM_U32HeavyV025(benchmark::State& s) { RunBenchmark(s, kV025, U32HeavyV025(), false); }
void BM_U32HeavyObservedV025(benchmark::State& s) { RunBenchmark(s, kV025, U32HeavyV025(), true); }
void BM_CallHeavyV025(benchmark::State& s) { RunBenchmark(s, kV025, CallHeavyV025(), false); }
void BM_CallHeavyObservedV025(benchmark::State& s) {
  RunBenchmark(s, kV025, CallHeavyV025(), true);
}

// Hash-heavy programs; also reported as native permutations per second (RPO under v0.16,
// Poseidon2 under v0.25).
void RunHashBenchmark(benchmark::State& s, Dialect dialect, const std::string& source,
                      int64_t perms_per_run) {
  RunBenchmark(s, dialect, source, false);
  s.counters["hperm/s"] = benchmark::Counter(static_cast<double>(perms_per_run),
                                             benchmark::Counter::kIsIterationInvariantRate);
}
void BM_HpermHeavy(benchmark::State& s) { RunHashBenchmark(s, kV016, HpermHeavy(), 20000); }
void BM_HpermDense(benchmark::State& s) { RunHashBenchmark(s, kV016, HpermDense(), 8 * 5000); }
void BM_HpermHeavyV025(benchmark::State& s) { RunHashBenchmark(s, kV025, HpermHeavyV025(), 20000); }
void BM_HpermDenseV025(benchmark::State& s) {
  RunHashBenchmark(s, kV025, HpermDenseV025(), 8 * 5000);
}

BENCHMARK(BM_FibLike);
BENCHMARK(BM_FibLikeV025);
BENCHMARK(BM_FibLikeObserved);
BENCHMARK(BM_FibLikeObservedV025);
BENCHMARK(BM_LoopHeavy);
BENCHMARK(BM_LoopHeavyV025);
BENCHMARK(BM_LoopHeavyObserved);
BENCHMARK(BM_LoopHeavyObservedV025);
BENCHMARK(BM_U32Heavy);
BENCHMARK(BM_U32HeavyV025);
BENCHMARK(BM_U32HeavyObserved);
BENCHMARK(BM_U32HeavyObservedV025);
BENCHMARK(BM_CallHeavy);
BENCHMARK(BM_CallHeavyV025);
BENCHMARK(BM_CallHeavyObserved);
BENCHMARK(BM_CallHeavyObservedV025);
BENCHMARK(BM_HpermHeavy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HpermHeavyV025)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HpermDense)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HpermDenseV025)->Unit(benchmark::kMillisecond);

// The bare permutations behind HPERM: RPO-256 (v0.16) and Poseidon2 (v0.25), in
// permutations per second (items_per_second).
template <void (*kPermute)(HasherState&)>
void BM_Permute(benchmark::State& state) {
  HasherState s;
  for (int i = 0; i < kHasherStateWidth; ++i) s[i] = Felt(static_cast<uint64_t>(i));
  for (auto _ : state) {
    kPermute(s);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
void RpoPermute(HasherState& s) { Permute(s); }
BENCHMARK(BM_Permute<RpoPermute>)->Name("BM_RpoPermute");
BENCHMARK(BM_Permute<Poseidon2Permute>)->Name("BM_Poseidon2Permute");

// Assembly speed of a large program (not a cycle figure).
void BM_AssembleFibLike(benchmark::State& state) {
  std::string source = FibLike();
  for (auto _ : state) {
    auto program = Assembler(OptionsFor(kV016)).AssembleSource("b.masm", source);
    benchmark::DoNotOptimize(program);
  }
}
BENCHMARK(BM_AssembleFibLike)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flamefleet::vm

BENCHMARK_MAIN();
