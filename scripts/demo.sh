#!/usr/bin/env bash
# Builds flamefleet and profiles every program in examples/: prints each program's final stack
# and cycle count and writes nested flamegraphs (SVG) and folded stacks to out/.
# Installs the Debian packages first (needs root). Usage: scripts/demo.sh [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-out}"
cd "$ROOT"
bash deploy/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target flamefleet
mkdir -p "$OUT"
FF=./build/cli/flamefleet
status=0
for program in examples/*.masm; do
  name="$(basename "$program" .masm)"
  libs=()
  if grep -q '^use\.ex::' "$program"; then libs=(--lib ex=examples/lib); fi
  echo "== $name"
  if ! "$FF" exec "$program" "${libs[@]}"; then status=1; continue; fi
  if "$FF" help profile >/dev/null 2>&1 || "$FF" profile --help >/dev/null 2>&1; then
    "$FF" profile "$program" "${libs[@]}" -o "$OUT/$name.svg" || status=1
    "$FF" profile "$program" "${libs[@]}" -o "$OUT/$name.folded" || status=1
  fi
done
echo "flamegraphs in $OUT/"
exit $status
