// Read + render benchmarks on synthetic folded input (bench/folded_gen.h).
//
//   render_benchmark --benchmark_filter=ReadRender
//   FLAMEGRAPH_PL=/path/to/flamegraph.pl render_benchmark --benchmark_filter=VsFlamegraphPl
//
// Args: number of distinct input lines. The input is generated once per size, in memory,
// outside the timed region; the SVG goes to a discarding stream. BM_VsFlamegraphPl renders a
// generated file the way `flamefleet render FILE -o OUT.svg` does and, side by side in the same
// iteration, runs flamegraph.pl (from $FLAMEGRAPH_PL, else `flamegraph.pl` on PATH) on the same
// file; it reports both times and their ratio. Without flamegraph.pl it only times flamefleet and
// says the comparison was skipped. flamegraph.pl is never part of this repository.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
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

// Writes the generated input for `lines` to a new file under TMPDIR (default /tmp), streaming (the
// 1M-line input is over 500 MB); returns its path, or "" if it cannot be written.
std::string WriteInputFile(uint64_t lines) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/render_benchmark_vs_" +
                           std::to_string(getpid()) + "_" + std::to_string(lines) + ".folded";
  std::ofstream file(path, std::ios::binary);
  FoldedGenOptions options;
  options.lines = lines;
  GenerateFolded(options, [&](absl::string_view chunk) {
    file.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  });
  file.close();
  if (!file) {
    std::remove(path.c_str());
    return "";
  }
  return path;
}

// Returns flamegraph.pl's path: $FLAMEGRAPH_PL if set, else the first `flamegraph.pl` on PATH.
std::optional<std::string> FindFlamegraphPl() {
  const char* env = std::getenv("FLAMEGRAPH_PL");
  if (env != nullptr && *env != '\0') {
    if (access(env, R_OK) == 0) return std::string(env);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = std::string(dir) + "/flamegraph.pl";
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return std::nullopt;
}

struct Timing {
  double wall = 0;  // seconds
  double cpu = 0;   // user + system seconds
};

double CpuSeconds(const rusage& r) {
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

// Runs `perl script input > output` and returns its wall and CPU time; nullopt if it could not be
// started or did not exit with 0.
std::optional<Timing> RunFlamegraphPl(const std::string& script, const std::string& input,
                                      const std::string& output) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string perl = "perl";
  std::vector<char*> argv = {perl.data(), const_cast<char*>(script.c_str()),
                             const_cast<char*>(input.c_str()), nullptr};
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "perl", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return std::nullopt;
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) return std::nullopt;
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return Timing{wall.count(), CpuSeconds(usage)};
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Renders `input` to `output` as `flamefleet render input -o output` does (cli/render_commands.cc:
// read with the renderer's prune fraction, then RenderSvg into the file); returns its times.
std::optional<Timing> RunFlamefleet(const std::string& input, const std::string& output) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuSeconds();
  renderer::RenderOptions options;
  Profile after;
  Profile before;
  profile::FoldedReadOptions read_options;
  read_options.prune_fraction = renderer::MinVisibleFraction(options);
  {
    FoldedReader reader(&after, &before, read_options);
    if (!reader.ReadFile(input).ok()) return std::nullopt;
  }
  std::ofstream file(output, std::ios::binary);
  if (!renderer::RenderSvg(after, options, file).ok()) return std::nullopt;
  file.close();
  if (!file) return std::nullopt;
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  return Timing{wall.count(), ProcessCpuSeconds() - cpu_start};
}

// Each iteration: flamefleet kRuns times, flamegraph.pl once, flamefleet kRuns times more; the
// ratio is flamegraph.pl's time over flamefleet's median (wall and CPU each). The machine may be
// shared: compare ratios, and repeat with --benchmark_repetitions.
void BM_VsFlamegraphPl(benchmark::State& state) {
  constexpr int kRuns = 3;
  const auto lines = static_cast<uint64_t>(state.range(0));
  const std::string input = WriteInputFile(lines);
  if (input.empty()) {
    state.SkipWithError("cannot write the input file");
    return;
  }
  const std::string svg = input + ".svg";
  const std::string perl_svg = input + ".pl.svg";
  const std::optional<std::string> script = FindFlamegraphPl();
  if (!script.has_value()) {
    std::cerr << "render_benchmark: flamegraph.pl not found ($FLAMEGRAPH_PL or PATH): timing "
                 "flamefleet only, comparison skipped\n";
    state.SetLabel("flamegraph.pl not found: comparison skipped");
  }
  std::vector<double> walls, cpus, perl_walls, perl_cpus;
  for (auto _ : state) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < kRuns; ++i) {
        const std::optional<Timing> t = RunFlamefleet(input, svg);
        if (!t.has_value()) {
          state.SkipWithError("flamefleet render failed");
          break;
        }
        walls.push_back(t->wall);
        cpus.push_back(t->cpu);
      }
      if (pass == 0 && script.has_value()) {
        const std::optional<Timing> t = RunFlamegraphPl(*script, input, perl_svg);
        if (!t.has_value()) {
          state.SkipWithError("flamegraph.pl failed");
          break;
        }
        perl_walls.push_back(t->wall);
        perl_cpus.push_back(t->cpu);
      }
    }
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<int64_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double wall = median(walls), cpu = median(cpus);
  state.counters["flamefleet_s"] = wall;
  state.counters["flamefleet_cpu_s"] = cpu;
  if (!perl_walls.empty()) {
    const double perl_wall = median(perl_walls), perl_cpu = median(perl_cpus);
    state.counters["flamegraph_pl_s"] = perl_wall;
    state.counters["flamegraph_pl_cpu_s"] = perl_cpu;
    state.counters["ratio"] = wall > 0 ? perl_wall / wall : 0;
    state.counters["ratio_cpu"] = cpu > 0 ? perl_cpu / cpu : 0;
  }
  std::remove(svg.c_str());
  std::remove(perl_svg.c_str());
  std::remove(input.c_str());
}

BENCHMARK(BM_ReadOnly)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadDeepDistinctStack)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadFile)->ArgsProduct({{100000}, {0, 1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRender)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRenderInverted)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRenderReverse)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadRenderFlameChart)->Arg(100000)->Unit(benchmark::kMillisecond);
// flamegraph.pl takes about 5 s on 100k lines and 50 s on 1M lines: one iteration each.
BENCHMARK(BM_VsFlamegraphPl)
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
}  // namespace flamefleet::bench

BENCHMARK_MAIN();
