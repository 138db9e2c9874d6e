// folded_gen: writes synthetic folded stacks to stdout (see
// bench/folded_gen.h).
//
//   folded_gen --lines 1000000 --seed 42 > 1m.folded
//   folded_gen --lines 100000 --skip 10000 --noise 0.3 > b.folded   # diff
//   partner
#include <cstdio>
#include <iostream>

#include "CLI/CLI.hpp"
#include "bench/folded_gen.h"

int main(int argc, char** argv) {
  CLI::App app{"Generate synthetic folded stacks"};
  flamefleet::bench::FoldedGenOptions options;
  app.add_option("--lines", options.lines, "distinct stacks to write");
  app.add_option("--seed", options.seed, "random seed");
  app.add_option("--names", options.names, "size of the name pool");
  app.add_option("--skip", options.skip, "drop the first N generated stacks");
  app.add_option("--noise", options.noise_sigma, "lognormal sigma of count noise");
  CLI11_PARSE(app, argc, argv);
  flamefleet::bench::GenerateFolded(
      options, [](absl::string_view chunk) { std::fwrite(chunk.data(), 1, chunk.size(), stdout); });
  return std::fflush(stdout) == 0 ? 0 : 1;
}
