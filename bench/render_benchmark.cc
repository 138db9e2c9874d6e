// Read + render benchmarks on synthetic folded input (bench/folded_gen.h).
//
//   render_benchmark --benchmark_filter=ReadRender
//
// Args: number of distinct input lines. The input is generated once per size, in memory,
// outside the timed region; the SVG goes to a discarding stream.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <streambuf>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "bench/folded_gen.h"
#include "benchmark/benchmark.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "renderer/flamegraph.h"

namespace flamefleet::bench {
namespace {

using profile::FoldedReader;
using profile::Profile;

// Returns the generated input for `lines`, cached across benchmarks in one run.
const std::string& Input(uint64_t lines) {
  // Function-local cache of immutable inputs (benchmark-only, single-threaded).
  static auto* cache = new absl::flat_hash_map<uint64_t, std::string>();
  std::string& text = (*cache)[lines];
  if (text.empty()) {
    FoldedGenOptions options;
    options.lines = lines;
    GenerateFolded(options,
                   [&](absl::string_view chunk) { text.append(chunk.data(), chunk.size()); });
  }
  return text;
}

class NullBuffer : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int overflow(int c) override { return c; }
};

enum Mode { kNormal, kReverse, kFlameChart, kInverted };

void ReadRender(benchmark::State& state, Mode mode) {
  const std::string& text = Input(static_cast<uint64_t>(state.range(0)));
  renderer::RenderOptions options;
  options.reverse = mode == kReverse;
  options.flamechart = mode == kFlameChart;
  options.inverted = mode == kInverted;
  NullBuffer null_buffer;
  std::ostream sink(&null_buffer);
  for (auto _ : state) {
    Profile p(options.flamechart ? Profile::ChildMatching::kAdjacent
                                 : Profile::ChildMatching::kByName);
    profile::FoldedReadOptions read_options;
    read_options.prune_fraction = renderer::MinVisibleFraction(options);
    FoldedReader reader(&p, nullptr, read_options);
    reader.ReadString(text).IgnoreError();  // generated counts never overflow
    benchmark::DoNotOptimize(renderer::RenderSvg(p, options, sink).ok());
    state.counters["nodes"] = static_cast<double>(p.num_nodes());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_ReadRender(benchmark::State& state) { ReadRender(state, kNormal); }
void BM_ReadRenderReverse(benchmark::State& state) { ReadRender(state, kReverse); }
void BM_ReadRenderFlameChart(benchmark::State& state) { ReadRender(state, kFlameChart); }
void BM_ReadRenderInverted(benchmark::State& state) { ReadRender(state, kInverted); }

void BM_ReadOnly(benchmark::State& state) {
  const std::string& text = Input(static_cast<uint64_t>(state.range(0)));
  for (auto _ : state) {
    Profile p;
    FoldedReader reader(&p);
    reader.ReadString(text).IgnoreError();  // generated counts never overflow
    benchmark::DoNotOptimize(p.total());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

// Reads a file of generated input. Args: lines, how (0: ReadStream on an std::ifstream, read() into
// chunks; 1: ReadFile with 1 thread, mapped; 2: ReadFile with 2 threads, parsing on a helper), and
// whether the profile is a flame chart (1) or merged by name (0). The file is written once per size
// under TMPDIR (default /tmp) and stays in the page cache.
void BM_ReadFile(benchmark::State& state) {
  const auto lines = static_cast<uint64_t>(state.range(0));
  const std::string& text = Input(lines);
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/render_benchmark_" +
                           std::to_string(lines) + ".folded";
  {
    std::ofstream file(path, std::ios::binary);
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!file) {
      state.SkipWithError("cannot write the input file");
      return;
    }
  }
  const bool flamechart = state.range(2) != 0;
  for (auto _ : state) {
    Profile p(flamechart ? Profile::ChildMatching::kAdjacent : Profile::ChildMatching::kByName);
    profile::FoldedReadOptions read_options;
    read_options.threads = static_cast<int>(state.range(1));
    if (flamechart) {
      renderer::RenderOptions options;
      options.flamechart = true;
      read_options.prune_fraction = renderer::MinVisibleFraction(options);
    }
    FoldedReader reader(&p, nullptr, read_options);
    std::ifstream in;
    if (read_options.threads == 0) in.open(path, std::ios::binary);
    const absl::Status status =
        read_options.threads == 0 ? reader.ReadStream(in, path) : reader.ReadFile(path);
    if (!status.ok()) {
      state.SkipWithError("ReadFile failed");
      break;
    }
    benchmark::DoNotOptimize(p.total());
  }
  std::remove(path.c_str());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

// One stack of `range(0)` distinct frames (issue #12: finding the names was quadratic in the depth;
// 100k frames took 25 s).
void BM_ReadDeepDistinctStack(benchmark::State& state) {
  std::string text;
  for (int64_t i = 0; i < state.range(0); ++i) {
    if (i > 0) text += ';';
    text += "frame" + std::to_string(i);
  }
  text += " 1\n";
  for (auto _ : state) {
    Profile p;
    FoldedReader reader(&p);
    reader.ReadString(text).IgnoreError();  // a count of 1 never overflows
    benchmark::DoNotOptimize(p.num_nodes());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

BENCHMARK(BM_ReadOnly)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadDeepDistinctStack)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadFile)->ArgsProduct({{100000}, {0, 1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRender)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRenderInverted)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRenderReverse)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRenderFlameChart)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flamefleet::bench

BENCHMARK_MAIN();
