// VM throughput in cycles per second (items_per_second = VM cycles / s) on four program shapes,
// with and without a call-stack observer attached, and on two hash-heavy (hperm) loops; the
// bare RPO and Poseidon2 permutations in permutations per second.
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
using bench::FibLike;
using bench::HpermDense;
using bench::HpermHeavy;
using bench::LoopHeavy;
using bench::U32Heavy;

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

void BM_FibLike(benchmark::State& s) { RunBenchmark(s, FibLike(), false); }
void BM_FibLikeObserved(benchmark::State& s) { RunBenchmark(s, FibLike(), true); }
void BM_LoopHeavy(benchmark::State& s) { RunBenchmark(s, LoopHeavy(), false); }
void BM_LoopHeavyObserved(benchmark::State& s) { RunBenchmark(s, LoopHeavy(), true); }
void BM_U32Heavy(benchmark::State& s) { RunBenchmark(s, U32Heavy(), false); }
void BM_U32HeavyObserved(benchmark::State& s) { RunBenchmark(s, U32Heavy(), true); }
void BM_CallHeavy(benchmark::State& s) { RunBenchmark(s, CallHeavy(), false); }
void BM_CallHeavyObserved(benchmark::State& s) { RunBenchmark(s, CallHeavy(), true); }

// Hash-heavy programs; also reported as RPO permutations per second.
void RunHashBenchmark(benchmark::State& s, const std::string& source, int64_t perms_per_run) {
  RunBenchmark(s, source, false);
  s.counters["hperm/s"] = benchmark::Counter(static_cast<double>(perms_per_run),
                                             benchmark::Counter::kIsIterationInvariantRate);
}
void BM_HpermHeavy(benchmark::State& s) { RunHashBenchmark(s, HpermHeavy(), 20000); }
void BM_HpermDense(benchmark::State& s) { RunHashBenchmark(s, HpermDense(), 8 * 5000); }

BENCHMARK(BM_FibLike);
BENCHMARK(BM_FibLikeObserved);
BENCHMARK(BM_LoopHeavy);
BENCHMARK(BM_LoopHeavyObserved);
BENCHMARK(BM_U32Heavy);
BENCHMARK(BM_U32HeavyObserved);
BENCHMARK(BM_CallHeavy);
BENCHMARK(BM_CallHeavyObserved);
BENCHMARK(BM_HpermHeavy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HpermDense)->Unit(benchmark::kMillisecond);

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
    auto program = Assembler(AssemblerOptions{}).AssembleSource("b.masm", source);
    benchmark::DoNotOptimize(program);
  }
}
BENCHMARK(BM_AssembleFibLike)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flamefleet::vm

BENCHMARK_MAIN();
