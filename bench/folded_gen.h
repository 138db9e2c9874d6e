// A deterministic generator of synthetic folded stacks for benchmarks:
// realistic shared prefixes (each stack mutates a random earlier one), depth
// 5-40, tens of thousands of distinct MASM-style procedure names, heavy-tailed
// (Pareto) counts, output in generation (unsorted) order, every line distinct.
//
//   FoldedGenOptions options;
//   options.lines = 100000;
//   std::string text;
//   GenerateFolded(options, [&](absl::string_view chunk) { text.append(chunk);
//   });
#ifndef FLAMEFLEET_BENCH_FOLDED_GEN_H_
#define FLAMEFLEET_BENCH_FOLDED_GEN_H_

#include <cstdint>
#include <functional>

#include "absl/strings/string_view.h"

namespace flamefleet::bench {

// Generator knobs; defaults give data like the reference measurements in
// renderers.md.
struct FoldedGenOptions {
  uint64_t lines = 1000;   // distinct stacks written
  uint64_t seed = 42;      // same seed, same bytes
  uint32_t names = 60000;  // size of the procedure name pool
  uint64_t skip = 0;       // generate `skip` more stacks first and drop them (diff pairs)
  double noise_sigma = 0;  // multiply counts by lognormal(0, sigma) noise (diff pairs)
};

// Generates the folded text and hands it to `sink` in chunks of about 1 MiB.
// Thread-safe (no shared state).
void GenerateFolded(const FoldedGenOptions& options,
                    const std::function<void(absl::string_view)>& sink);

}  // namespace flamefleet::bench

#endif  // FLAMEFLEET_BENCH_FOLDED_GEN_H_
