#!/usr/bin/env bash
# A stand-in `flamefleet` CLI for deploy/validate.sh's nightly step: logs its arguments to
# $FAKE_LOG, writes the files the real commands would, and exits with $WATCH_RC / $DIFF_RC.
set -euo pipefail
echo "$*" >>"${FAKE_LOG:?}"
out() { local prev=""; for a in "$@"; do [[ $prev == -o ]] && echo "$a"; prev="$a"; done; }
case "$1" in
  submit) echo 42 ;;
  watch) echo SUCCEEDED; exit "${WATCH_RC:-0}" ;;
  status) echo '{"batch_id": "42"}' ;;
  fetch) mkdir -p "$(out "$@")" && echo '<svg/>' >"$(out "$@")/aggregate.svg" ;;
  aggregate) echo "main;work 7" >"$(out "$@")" ;;
  diff) echo '<svg/>' >"$(out "$@")"; exit "${DIFF_RC:-0}" ;;
  *) echo "fake flamefleet: unexpected command $1" >&2; exit 2 ;;
esac
