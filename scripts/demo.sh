#!/usr/bin/env bash
# Builds flamefleet and profiles every program in examples/ on the embedded local fleet
# (coordinator, renderer and one worker per core on loopback): writes out/aggregate.svg,
# out/aggregate.folded and out/jobs/<name>.svg/.folded. Installs the Debian packages first
# (needs root). Usage: scripts/demo.sh [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-out}"
cd "$ROOT"
bash deploy/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target flamefleet flamefleet-coordinator flamefleet-worker flamefleet-renderer
./build/cli/flamefleet run examples/ -o "$OUT"
echo "open $OUT/aggregate.svg (all programs) or $OUT/jobs/<name>.svg in a browser"
