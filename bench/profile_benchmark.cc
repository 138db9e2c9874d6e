// Cost of profiling: VM cycles per second with no observer, with flamefleet's nested
// CycleRecorder, with everything of summary.json on (calls, instruction and operation counts,
// a phase's markers: *Stats; issue #16 budgets it at 10 % over *Nested), with the executor's row
// counting alone (*CountOnly: the counted dispatch loop against *NoProfile), with --flat sampling,
// and with the miden-debug approach (a `;`-joined stack string built and inserted into an ordered
// map every cycle), on the same programs. Trace shape (issue #18, target <= 15 % over the
// cycles-only profile): *V025Stats (summary.json without the trace shape) against
// *V025StatsTrace (with it: every chiplet's rows, the range checker, attribution to procedures)
// on v0.25 programs, fib-like, hash-heavy and call-heavy (figures: docs/trace-shape.md#cost).
//
//   ./build/bench/profile_benchmark
#include <cstdint>
#include <map>
#include <string>

#include "bench/bench_programs.h"
#include "benchmark/benchmark.h"
#include "runner/runner.h"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

using bench::FibLike;
std::string CallHeavy() { return bench::CallHeavy(20000); }

vm::Program Assemble(const std::string& source, vm::Dialect dialect = vm::Dialect::kV0_16) {
  vm::AssemblerOptions options;
  options.dialect = dialect;  // v0.16: the programs of bench/bench_programs.h without V025
  return *vm::Assembler(options).AssembleSource("b.masm", source);
}

enum class Mode { kNone, kNested, kFlat, kSeedStyle, kStats, kStatsTrace, kCountOnly };

void Run(benchmark::State& state, const std::string& source, Mode mode,
         vm::Dialect dialect = vm::Dialect::kV0_16) {
  vm::Program program = Assemble(source, dialect);
  uint64_t cycles = 0;
  for (auto _ : state) {
    if (mode == Mode::kNone) {
      auto r = vm::RunProgram(program, vm::ProgramInputs{}, vm::ExecutionOptions{});
      cycles += r->cycles;
    } else if (mode == Mode::kCountOnly) {
      vm::RowCounts counts;
      vm::Executor exec(program, {}, vm::AdviceProvider(*program.dialect->hasher),
                        vm::ExecutionOptions{});
      exec.CountRows(&counts);
      exec.Run();
      cycles += exec.clk();
      benchmark::DoNotOptimize(counts.entries.size());
    } else if (mode == Mode::kStats || mode == Mode::kStatsTrace) {
      // Everything of summary.json on: calls, row counts, and a marker (none fires in these
      // programs, so the marker host is installed but the programs' cycles are unchanged); with
      // kStatsTrace also the trace shape.
      StatsOptions stats;
      stats.phases = {{"bench::start", "bench::end"}};
      stats.trace_shape = mode == Mode::kStatsTrace;
      auto r = ProfileProgramWithStats(program, vm::ProgramInputs{}, vm::ExecutionOptions{}, stats);
      cycles += r->result.cycles;
      benchmark::DoNotOptimize(r->stats.instructions.size());
    } else if (mode == Mode::kNested || mode == Mode::kFlat) {
      auto r = ProfileProgram(program, vm::ProgramInputs{}, vm::ExecutionOptions{},
                              mode == Mode::kNested ? StackMode::kNested : StackMode::kFlat);
      cycles += r->result.cycles;
      benchmark::DoNotOptimize(r->profile.total());
    } else {
      // What the debugger's flamegraph does: per cycle, join the frame names and count.
      vm::Executor exec(program, {}, vm::AdviceProvider(*program.dialect->hasher),
                        vm::ExecutionOptions{});
      std::map<std::string, uint64_t> samples;
      std::string key;
      while (exec.state() == vm::Executor::State::kPaused) {
        uint64_t before = exec.clk();
        exec.Step();
        if (exec.clk() == before) continue;
        key.clear();
        for (uint32_t f : exec.frames()) {
          if (!key.empty()) key += ';';
          key += program.procedures[f].name;
        }
        samples[key] += exec.clk() - before;
      }
      cycles += exec.clk();
      benchmark::DoNotOptimize(samples.size());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(cycles));
}

void BM_FibLikeNoProfile(benchmark::State& s) { Run(s, FibLike(), Mode::kNone); }
void BM_FibLikeNested(benchmark::State& s) { Run(s, FibLike(), Mode::kNested); }
void BM_FibLikeStats(benchmark::State& s) { Run(s, FibLike(), Mode::kStats); }
void BM_FibLikeCountOnly(benchmark::State& s) { Run(s, FibLike(), Mode::kCountOnly); }
void BM_FibLikeFlat(benchmark::State& s) { Run(s, FibLike(), Mode::kFlat); }
void BM_FibLikeSeedStyle(benchmark::State& s) { Run(s, FibLike(), Mode::kSeedStyle); }
void BM_CallHeavyNoProfile(benchmark::State& s) { Run(s, CallHeavy(), Mode::kNone); }
void BM_CallHeavyNested(benchmark::State& s) { Run(s, CallHeavy(), Mode::kNested); }
void BM_CallHeavyStats(benchmark::State& s) { Run(s, CallHeavy(), Mode::kStats); }
void BM_CallHeavyFlat(benchmark::State& s) { Run(s, CallHeavy(), Mode::kFlat); }
void BM_CallHeavySeedStyle(benchmark::State& s) { Run(s, CallHeavy(), Mode::kSeedStyle); }
constexpr vm::Dialect kV025 = vm::Dialect::kV0_25;
void BM_FibLikeV025Nested(benchmark::State& s) {
  Run(s, bench::FibLikeV025(), Mode::kNested, kV025);
}
void BM_FibLikeV025Stats(benchmark::State& s) { Run(s, bench::FibLikeV025(), Mode::kStats, kV025); }
void BM_FibLikeV025StatsTrace(benchmark::State& s) {
  Run(s, bench::FibLikeV025(), Mode::kStatsTrace, kV025);
}
void BM_HpermHeavyV025Nested(benchmark::State& s) {
  Run(s, bench::HpermHeavyV025(), Mode::kNested, kV025);
}
void BM_HpermHeavyV025Stats(benchmark::State& s) {
  Run(s, bench::HpermHeavyV025(), Mode::kStats, kV025);
}
void BM_HpermHeavyV025StatsTrace(benchmark::State& s) {
  Run(s, bench::HpermHeavyV025(), Mode::kStatsTrace, kV025);
}
void BM_CallHeavyV025Stats(benchmark::State& s) {
  Run(s, bench::CallHeavyV025(20000), Mode::kStats, kV025);
}
void BM_CallHeavyV025StatsTrace(benchmark::State& s) {
  Run(s, bench::CallHeavyV025(20000), Mode::kStatsTrace, kV025);
}

BENCHMARK(BM_FibLikeNoProfile);
BENCHMARK(BM_FibLikeNested);
BENCHMARK(BM_FibLikeStats);
BENCHMARK(BM_FibLikeCountOnly);
BENCHMARK(BM_FibLikeFlat);
BENCHMARK(BM_FibLikeSeedStyle);
BENCHMARK(BM_CallHeavyNoProfile);
BENCHMARK(BM_CallHeavyNested);
BENCHMARK(BM_CallHeavyStats);
BENCHMARK(BM_CallHeavyFlat);
BENCHMARK(BM_CallHeavySeedStyle);
BENCHMARK(BM_FibLikeV025Nested);
BENCHMARK(BM_FibLikeV025Stats);
BENCHMARK(BM_FibLikeV025StatsTrace);
BENCHMARK(BM_HpermHeavyV025Nested);
BENCHMARK(BM_HpermHeavyV025Stats);
BENCHMARK(BM_HpermHeavyV025StatsTrace);
BENCHMARK(BM_CallHeavyV025Stats);
BENCHMARK(BM_CallHeavyV025StatsTrace);

}  // namespace
}  // namespace flamefleet::runner

BENCHMARK_MAIN();
