#!/usr/bin/env bash
# Runs two builds of a Google Benchmark binary alternately (old, new, old, new, ...) on the same
# machine and prints, per benchmark, the median real time of each and the ratio new/old.
# Interleaving spreads machine noise over both sides; a ratio above 1.03 is a >3 % slowdown.
#
#   scripts/bench-compare.sh OLD/vm_benchmark NEW/vm_benchmark [ROUNDS] [-- BENCHMARK_FLAGS...]
#   scripts/bench-compare.sh /tmp/old/build/bench/vm_benchmark build/bench/vm_benchmark 5 \
#     -- --benchmark_filter=Fib --benchmark_min_time=0.5
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD NEW [ROUNDS] [-- BENCHMARK_FLAGS...]" >&2
  exit 2
fi
old="$1"; new="$2"; shift 2
rounds=5
if [[ $# -gt 0 && "$1" != "--" ]]; then rounds="$1"; shift; fi
[[ $# -gt 0 && "$1" == "--" ]] && shift
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for ((i = 1; i <= rounds; i++)); do
  for side in old new; do
    bin="$old"; [[ "$side" == new ]] && bin="$new"
    # JSON reporter (the CSV one aborts on per-benchmark counters): take each run's "name"
    # and "real_time" lines.
    "$bin" --benchmark_format=json "$@" 2>/dev/null | awk -v side="$side" '
      /"name":/ { gsub(/[",]/, "", $2); name = $2 }
      /"real_time":/ { gsub(/,/, "", $2); print side, name, $2 }' >> "$out/times"
  done
done
awk '
  { key = $1 " " $2; t[key, ++n[key]] = $3; names[$2] = 1 }
  function median(key,   k, i, j, tmp, m) {
    m = n[key]
    for (i = 1; i <= m; i++) tmp[i] = t[key, i] + 0
    for (i = 2; i <= m; i++) for (j = i; j > 1 && tmp[j - 1] > tmp[j]; j--) {
      k = tmp[j]; tmp[j] = tmp[j - 1]; tmp[j - 1] = k
    }
    return (m % 2) ? tmp[(m + 1) / 2] : (tmp[m / 2] + tmp[m / 2 + 1]) / 2
  }
  END {
    printf "%-28s %14s %14s %8s\n", "benchmark", "old (median)", "new (median)", "new/old"
    for (name in names) {
      o = median("old " name); w = median("new " name)
      printf "%-28s %14.0f %14.0f %8.3f\n", name, o, w, (o > 0 ? w / o : 0)
    }
  }' "$out/times" | { read -r header; echo "$header"; sort; }
