#!/usr/bin/env bash
# Every flag file of deploy/ (the base and the secure overlay) names only flags the service
# binaries really have, with values they accept: each service is started with exactly the
# --flagfile list its manifest passes plus one argument that makes it stop right after parsing
# (absl reports a bad flag as "ERROR: ..." and exits before that).
# Usage: flags_parse.sh ROOT COORDINATOR RENDERER WORKER
set -euo pipefail
root=$1 coordinator=$2 renderer=$3 worker=$4
check() {
  local bin=$1 files=$2 out
  local -a stop
  case "$(basename "$bin")" in
    flamefleet-coordinator) stop=(--lease_ms=0) ;;       # "--lease-ms must be positive"
    flamefleet-renderer) stop=(--listen=not-an-address) ;;  # cannot bind
    flamefleet-worker) stop=(--coordinator=) ;;          # "--coordinator ADDR is required"
  esac
  out="$(timeout 20 "$bin" --flagfile="$files" "${stop[@]}" 2>&1 || true)"
  if grep -q "^ERROR: " <<<"$out"; then
    echo "FAIL $(basename "$bin") --flagfile=$files:" >&2
    grep "^ERROR: " <<<"$out" >&2
    exit 1
  fi
  echo "ok   $(basename "$bin") --flagfile=$files"
}
for flags in "$root/deploy/k8s/flags" "$root/deploy/overlays/secure/flags"; do
  base="$root/deploy/k8s/flags"
  check "$coordinator" "$base/coordinator.flags,$flags/server-security.flags"
  check "$renderer" "$base/renderer.flags,$flags/server-security.flags"
  check "$worker" "$base/worker.flags,$flags/client-security.flags"
done
# The check can fail: a flag no service has is refused.
bad="$(mktemp)"
trap 'rm -f "$bad"' EXIT
echo "--no_such_flag=1" >"$bad"
out="$("$coordinator" --flagfile="$bad" --lease_ms=0 2>&1 || true)"
if grep -q "^ERROR: Unknown command line flag" <<<"$out"; then
  echo "ok   an unknown flag in a flag file is reported"
else
  echo "FAIL an unknown flag in a flag file went unnoticed" >&2
  exit 1
fi
