#!/usr/bin/env bash
# Builds flamefleet (Release) and runs every test with ctest. Installs the Debian packages
# first (needs root). Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash deploy/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
