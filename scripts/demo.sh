#!/usr/bin/env bash
# Builds flamefleet and profiles the demo suites on the embedded local fleet (coordinator,
# renderer and one worker per core on loopback), one run per Miden dialect: examples/v0_25
# (current Miden Assembly, VM v0.25.7) and examples/v0_16 (classic v0.16 MASM), the same eight
# computations in each. Each run writes OUT/<suite>/aggregate.svg, aggregate.folded and
# jobs/<name>.svg/.folded. Installs the Debian packages first (needs root).
# Usage: scripts/demo.sh [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-out}"
cd "$ROOT"
bash deploy/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target flamefleet flamefleet-coordinator flamefleet-worker flamefleet-renderer
for suite in v0_25 v0_16; do
  # Each suite's flamefleet.toml names its dialect and libraries.
  ./build/cli/flamefleet run "examples/$suite" -o "$OUT/$suite"
done
echo "open $OUT/<suite>/aggregate.svg (all programs) or $OUT/<suite>/jobs/<name>.svg in a browser"
