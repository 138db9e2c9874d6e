#!/usr/bin/env bash
# Runs whole GoogleTest binaries, one process per binary (ctest starts one process per case,
# which under ASan costs more than the cases themselves: 661 s for 2,149 cases in session 11),
# nproc binaries at a time, each in its own build folder as ctest would. Prints every binary's
# output and then one line in ctest's form: "N% tests passed, F tests failed out of T".
# Usage: scripts/run-test-binaries.sh BUILD_DIR BINARY_NAME...
set -euo pipefail
build="$(cd "$1" && pwd)"
shift
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

run_one() {  # run_one BUILD LOGS NAME
  local bin
  bin="$(find "$1" -type f -name "$3" -perm -u+x -not -path '*/CMakeFiles/*' | head -1)"
  if [[ -z "$bin" ]]; then
    echo "no test binary named $3 under $1" >"$2/$3.log"
    echo 1 >"$2/$3.rc"
    return
  fi
  local rc=0
  (cd "$(dirname "$bin")" && "$bin" --gtest_brief=1) >"$2/$3.log" 2>&1 || rc=$?
  echo "$rc" >"$2/$3.rc"
}
export -f run_one

printf '%s\n' "$@" | xargs -P"$(nproc)" -I{} bash -c 'run_one "$0" "$1" "$2"' "$build" "$logs" {}

passed=0; failed=0; status=0
for name in "$@"; do
  echo "::: $name (exit $(cat "$logs/$name.rc"))"
  cat "$logs/$name.log"
  p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\.$/\1/p' "$logs/$name.log" | tail -1)
  f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?, listed below:$/\1/p' "$logs/$name.log" | tail -1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [[ "$(cat "$logs/$name.rc")" != 0 ]]; then
    status=1
    # A binary that died (a sanitizer report, a crash) counts as one failure beyond its cases.
    [[ -n "$f" ]] || failed=$((failed + 1))
  fi
done
total=$((passed + failed))
echo "$(( total == 0 ? 0 : 100 * passed / total ))% tests passed, $failed tests failed out of $total"
exit "$status"
