#!/usr/bin/env bash
# Compares what two builds of flamefleet's VM compute for the conformance corpus and the
# examples: procedures and MAST roots, linearised code, final stacks, cycle counts, errors and
# the nested and flat folded profiles (tests/tools/engine_dump). A pure refactor of the VM must
# print "identical".
#
#   scripts/compare-engines.sh OLD/engine_dump NEW/engine_dump
#
# Build an old engine_dump from an earlier commit in a separate worktree, e.g.
#   git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=Release && ninja -C /tmp/old/build engine_dump
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 OLD_ENGINE_DUMP NEW_ENGINE_DUMP" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
for side in old new; do
  bin="$1"
  [[ "$side" == new ]] && bin="$2"
  # Both builds need engine_dump --dialect (from #14 on; an older one prints its usage).
  (cd "$root" && "$bin" --corpus tests/testdata/vm --dialect v0.16) > "$out/$side.corpus"
  (cd "$root" && "$bin" --corpus tests/testdata/vm/v0_25 --dialect v0.25) > "$out/$side.corpus25"
  (cd "$root" && "$bin" --suite examples/v0_16 --dialect v0.16 --lib ex=examples/v0_16/lib) \
    > "$out/$side.examples"
  (cd "$root" && "$bin" --suite examples/v0_25 --dialect v0.25 --lib ex=examples/v0_25/lib) \
    > "$out/$side.examples25"
done
for part in corpus corpus25 examples examples25; do
  programs=$(grep -c '^== ' "$out/new.$part" || true)
  if cmp -s "$out/old.$part" "$out/new.$part"; then
    echo "$part: identical ($programs programs, $(wc -c < "$out/new.$part") bytes)"
  else
    echo "$part: DIFFERENT"
    diff -u "$out/old.$part" "$out/new.$part" | head -40
    status=1
  fi
done
exit $status
