#!/usr/bin/env bash
# The nightly profile (run by the flamefleet-nightly CronJob; usable by hand too):
#   submit $SUITE_DIR as a batch labelled suite=nightly, night=YYYY-MM-DD -> watch it ->
#   fetch its flamegraphs -> aggregate tonight's suite=nightly batches -> diff against the
#   previous night -> publish everything under $RESULTS_DIR/YYYY-MM-DD/ and point
#   $RESULTS_DIR/latest at it.
# Environment: SUITE_DIR, RESULTS_DIR (required); FAIL_ABOVE (percent, default 5);
# SUBMIT_ARGS (extra `flamefleet submit` arguments, e.g. "--lib std=/suite/stdlib");
# FLAMEFLEET_COORDINATOR and, with TLS/token, FLAMEFLEET_TLS_CA/_CERT/_KEY and
# FLAMEFLEET_AUTH_TOKEN_FILE (read by the CLI).
# Exit status: 0 all jobs succeeded and no regression above FAIL_ABOVE; 1 a step failed or a
# job failed; 3 the diff against the previous night exceeded FAIL_ABOVE (results are
# published in every case that got as far as a batch).
set -uo pipefail

suite="${SUITE_DIR:?SUITE_DIR is required}"
results="${RESULTS_DIR:?RESULTS_DIR is required}"
fail_above="${FAIL_ABOVE:-5}"
night="$(date -u +%Y-%m-%d)"
dir="$results/$night"
mkdir -p "$dir" || exit 1

# shellcheck disable=SC2086  # SUBMIT_ARGS is a list of words on purpose
if ! id="$(flamefleet submit "$suite" --label suite=nightly --label "night=$night" \
             ${SUBMIT_ARGS:-})"; then
  echo "nightly: submit of $suite failed" >&2
  exit 1
fi
echo "nightly: batch $id ($suite)"
echo "$id" > "$dir/batch-id"

status=0
flamefleet watch "$id" || status=1
flamefleet status "$id" --json > "$dir/batch.json" || status=1
flamefleet fetch "$id" -o "$dir/batch" || status=1

for out in aggregate.svg aggregate.folded aggregate.pb.gz; do
  flamefleet aggregate --label suite=nightly --label "night=$night" --since 24h \
    -o "$dir/$out" || { echo "nightly: aggregate -> $out failed" >&2; status=1; }
done

prev=""
for d in "$results"/20??-??-??; do
  [[ -d $d && $d != "$dir" && -s $d/aggregate.folded ]] && prev="$d"  # glob order = date order
done
if [[ -n $prev && -s $dir/aggregate.folded ]]; then
  # Per-job deltas (the gate applies to every test) when both nights were fetched whole;
  # else the two aggregates, as one job.
  before="$prev/aggregate.folded" after="$dir/aggregate.folded"
  if [[ -s $prev/batch/aggregate.folded && -s $dir/batch/aggregate.folded ]]; then
    before="$prev/batch" after="$dir/batch"
  fi
  flamefleet diff "$before" "$after" -o "$dir/diff.svg" --fail-above "$fail_above"
  rc=$?
  if ((rc != 0)); then
    echo "nightly: diff against ${prev##*/} is above ${fail_above}% (exit $rc)" >&2
    ((status == 0)) && status=3
  fi
  echo "nightly: diff against ${prev##*/} -> $dir/diff.svg"
else
  echo "nightly: no previous night in $results; no diff"
fi

ln -sfn "$night" "$results/latest"
echo "nightly: published $dir/aggregate.svg (latest -> $night), exit $status"
exit "$status"
