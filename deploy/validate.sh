#!/usr/bin/env bash
# Static validation of everything in deploy/ (there is no container engine or cluster in CI).
#
#   deploy/validate.sh [STEP] [BINARY...]
#
# Steps (ctest runs each as its own test, tests/deploy/CMakeLists.txt; default: all):
#   lint        yamllint (deploy/.yamllint, strict) over every YAML file in deploy/
#   kustomize   `kubectl kustomize` renders deploy/k8s and deploy/overlays/secure (the latter
#               with throwaway secret files, as its real ones are never committed)
#   k8s         every rendered object against the Kubernetes API schemas + project rules
#               (tests/deploy/validate.mjs k8s)
#   compose     deploy/compose.yaml alone and with compose.tls.yaml: the Compose Specification
#               schema (validate.mjs compose) and `docker-compose config -q` (no daemon needed)
#   dockerfile  deploy/Dockerfile against the repository (validate.mjs dockerfile); given the
#               built BINARY paths, also that the runtime stage installs every library they load
#   nightly     the CronJob's script (deploy/k8s/flags/nightly.sh) against a stand-in CLI
#               (tests/deploy/fake-flamefleet.sh): the commands it runs, what it publishes where,
#               its exit status for a clean night, a regression and a failed job
#   negative    every broken input in tests/deploy/bad/ is rejected, for the expected reason
# Tools: yamllint, kubectl (Debian's kubernetes-client or any newer kubectl; $KUBECTL
# overrides), docker-compose, node + tests/deploy/node_modules; deploy/install-deps.sh installs
# them. A missing tool is an error, never a skip.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STEP="${1:-all}"
shift || true
BINARIES=("$@")
KUBECTL="${KUBECTL:-kubectl}"
VALIDATE=(node "$ROOT/tests/deploy/validate.mjs")
BAD="$ROOT/tests/deploy/bad"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

die() { echo "validate.sh: $*" >&2; exit 1; }
need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: run deploy/install-deps.sh"
}
need_node_modules() {
  need node
  [[ -d $ROOT/tests/deploy/node_modules/kubernetes-models ]] ||
    die "tests/deploy/node_modules missing: run deploy/install-deps.sh (npm ci in tests/deploy)"
}

# Renders DIR with kubectl's built-in kustomize into FILE; kustomize's deprecation warnings (for
# fields kept for kubectl 1.20's kustomize 2.0.3) are dropped, anything else fails.
render() {
  local dir="$1" out="$2"
  if ! "$KUBECTL" kustomize "$dir" >"$out" 2>"$WORK/kustomize.err"; then
    cat "$WORK/kustomize.err" >&2
    return 1
  fi
  grep -v "^# Warning: '[A-Za-z0-9]*' is deprecated" "$WORK/kustomize.err" >&2 || true
  [[ -s $out ]] || { echo "kustomize rendered nothing for $dir" >&2; return 1; }
}

# Copies deploy/ to the work dir and gives overlays/secure throwaway secret files.
render_all() {
  need "$KUBECTL"
  render deploy/k8s "$WORK/base.yaml"
  echo "ok   kubectl kustomize deploy/k8s: $(grep -c '^kind:' "$WORK/base.yaml") objects"
  mkdir -p "$WORK/deploy"
  cp -r deploy/k8s deploy/overlays "$WORK/deploy/"
  mkdir -p "$WORK/deploy/overlays/secure/secrets"
  for f in ca.crt tls.crt tls.key token; do
    echo "throwaway $f for rendering only" >"$WORK/deploy/overlays/secure/secrets/$f"
  done
  render "$WORK/deploy/overlays/secure" "$WORK/secure.yaml"
  echo "ok   kubectl kustomize deploy/overlays/secure: $(grep -c '^kind:' "$WORK/secure.yaml") objects"
}

step_lint() {
  need yamllint
  yamllint --strict -f parsable -c deploy/.yamllint deploy/
  echo "ok   yamllint deploy/"
}

step_kustomize() {
  need "$KUBECTL"
  echo "kubectl: $("$KUBECTL" version --client 2>/dev/null | head -1)"
  render_all
}

step_k8s() {
  need_node_modules
  render_all
  "${VALIDATE[@]}" k8s "$WORK/base.yaml"
  "${VALIDATE[@]}" k8s "$WORK/secure.yaml"
}

step_compose() {
  need_node_modules
  need docker-compose
  "${VALIDATE[@]}" compose deploy/compose.yaml
  "${VALIDATE[@]}" compose deploy/compose.yaml deploy/compose.tls.yaml
  docker-compose -f deploy/compose.yaml config -q
  docker-compose -f deploy/compose.yaml -f deploy/compose.tls.yaml config -q
  echo "ok   docker-compose config -q (compose.yaml, + compose.tls.yaml)"
}

step_dockerfile() {
  need_node_modules
  "${VALIDATE[@]}" dockerfile deploy/Dockerfile "$ROOT" "${BINARIES[@]}"
}

step_nightly() {
  local bin="$WORK/bin" res="$WORK/results" log="$WORK/fake.log" night rc
  mkdir -p "$bin" "$res/2000-01-01"
  cp tests/deploy/fake-flamefleet.sh "$bin/flamefleet"
  echo "main;work 5" >"$res/2000-01-01/aggregate.folded"
  night="$(date -u +%Y-%m-%d)"
  run_nightly() {
    : >"$log"
    PATH="$bin:$PATH" FAKE_LOG="$log" SUITE_DIR=/suite RESULTS_DIR="$res" FAIL_ABOVE=7 \
      SUBMIT_ARGS="--lib std=/suite/std" bash deploy/k8s/flags/nightly.sh >"$WORK/nightly.out" 2>&1
  }
  rc=0; run_nightly || rc=$?
  ((rc == 0)) || { cat "$WORK/nightly.out"; die "nightly: a clean night exited $rc"; }
  for f in batch-id batch.json batch/aggregate.svg aggregate.svg aggregate.folded aggregate.pb.gz diff.svg; do
    [[ -s $res/$night/$f ]] || die "nightly: $night/$f was not published"
  done
  [[ $(readlink "$res/latest") == "$night" ]] || die "nightly: latest does not point at $night"
  for want in "submit /suite --label suite=nightly --label night=$night --lib std=/suite/std" \
              "watch 42" "fetch 42 -o $res/$night/batch" \
              "aggregate --label suite=nightly --label night=$night --since 24h -o $res/$night/aggregate.svg" \
              "diff $res/2000-01-01/aggregate.folded $res/$night/aggregate.folded -o $res/$night/diff.svg --fail-above 7"; do
    grep -qxF -- "$want" "$log" || { cat "$log"; die "nightly: did not run: flamefleet $want"; }
  done
  echo "ok   nightly: clean night -> exit 0, published $night/{aggregate.svg,aggregate.folded,aggregate.pb.gz,diff.svg,batch/}, latest -> $night"
  rc=0; DIFF_RC=1 run_nightly || rc=$?
  ((rc == 3)) || { cat "$WORK/nightly.out"; die "nightly: a regression above FAIL_ABOVE exited $rc, not 3"; }
  echo "ok   nightly: diff --fail-above exceeded -> exit 3"
  rc=0; WATCH_RC=1 run_nightly || rc=$?
  ((rc == 1)) || { cat "$WORK/nightly.out"; die "nightly: a failed job exited $rc, not 1"; }
  [[ -s $res/$night/aggregate.svg ]] || die "nightly: nothing published after a failed job"
  echo "ok   nightly: failed job -> exit 1, aggregate still published"
}

# expect_reject NAME PATTERN COMMAND...: COMMAND must fail and print PATTERN (grep -E).
rejected=0
expect_reject() {
  local name="$1" pattern="$2"
  shift 2
  local out="$WORK/neg.out"
  if "$@" >"$out" 2>&1; then
    cat "$out"
    die "negative test '$name': the bad input was ACCEPTED: $*"
  fi
  if ! grep -Eq -- "$pattern" "$out"; then
    cat "$out"
    die "negative test '$name': rejected, but not for the expected reason /$pattern/"
  fi
  echo "ok   rejected $name: $(grep -E -m1 -- "$pattern" "$out")"
  rejected=$((rejected + 1))
}

step_negative() {
  need yamllint
  need docker-compose
  need_node_modules
  # The real inputs pass (so the checks below fail for the bad parts alone).
  step_lint >/dev/null
  step_compose >/dev/null
  render_all >/dev/null
  "${VALIDATE[@]}" k8s "$WORK/base.yaml" >/dev/null || die "the real manifests do not validate"
  echo "ok   the real inputs are accepted"

  expect_reject "yamllint: truthy 'yes' and trailing spaces" "truthy value should be one of|trailing spaces" \
    yamllint --strict -f parsable -c deploy/.yamllint "$BAD/yamllint-truthy.yaml"
  expect_reject "kustomize: a resource file that does not exist" "does-not-exist.yaml" \
    "$KUBECTL" kustomize "$BAD/kustomize-missing-resource"
  # Each bad object is checked together with the real render, so it alone makes the difference.
  expect_reject "k8s: a string where an integer belongs (replicas: \"2\")" "/spec/replicas must be integer" \
    "${VALIDATE[@]}" k8s "$WORK/base.yaml" "$BAD/k8s-replicas-string.yaml"
  expect_reject "k8s: a container without its required name" "must have required property 'name'|must have required property name" \
    "${VALIDATE[@]}" k8s "$WORK/base.yaml" "$BAD/k8s-container-without-name.yaml"
  expect_reject "k8s: a Service port without its required port number" "must have required property 'port'|must have required property port" \
    "${VALIDATE[@]}" k8s "$WORK/base.yaml" "$BAD/k8s-service-port-missing.yaml"
  expect_reject "k8s: an unknown kind" "unknown apiVersion/kind" \
    "${VALIDATE[@]}" k8s "$WORK/base.yaml" "$BAD/k8s-unknown-kind.yaml"
  expect_reject "k8s: a mount without a volume, a root-writable container, a missing ConfigMap" \
    "volumeMount results has no volume" \
    "${VALIDATE[@]}" k8s "$WORK/base.yaml" "$BAD/k8s-policy.yaml"
  grep -q "readOnlyRootFilesystem is not true" "$WORK/neg.out" || die "k8s-policy: readOnlyRootFilesystem not flagged"
  grep -q "names ConfigMap flamefleet-missing" "$WORK/neg.out" || die "k8s-policy: missing ConfigMap not flagged"
  expect_reject "compose (schema): a misspelt service key" "additional properties \(helthcheck\)" \
    "${VALIDATE[@]}" compose "$BAD/compose-bad-key.yaml"
  expect_reject "compose (docker-compose): a misspelt service key" "Unsupported config option.*helthcheck" \
    docker-compose -f "$BAD/compose-bad-key.yaml" config -q
  expect_reject "compose (schema): a string where an integer belongs" "/deploy/replicas must be integer" \
    "${VALIDATE[@]}" compose "$BAD/compose-bad-type.yaml"
  expect_reject "compose (docker-compose): a string where an integer belongs" "replicas" \
    docker-compose -f "$BAD/compose-bad-type.yaml" config -q
  expect_reject "compose: depends_on a service that does not exist" "depends_on coordinatr, which is not a service" \
    "${VALIDATE[@]}" compose "$BAD/compose-undefined-dependency.yaml"
  expect_reject "compose: an obsolete top-level version key" "obsolete" \
    "${VALIDATE[@]}" compose "$BAD/compose-version-key.yaml"
  expect_reject "Dockerfile: COPY of a path the repository lacks" "COPY sources/: not in the repository" \
    "${VALIDATE[@]}" dockerfile "$BAD/Dockerfile" "$ROOT" "${BINARIES[@]}"
  for reason in "no option\(FLAMEFLEET_BUILD_TEST\)" "has no add_executable\(flamefleet-render\)" \
                "USER 0 is not a numeric non-root UID" "secrets must not be baked" \
                "not a Debian 12 image" "apt package libgrpc\+\+1.52 is unknown"; do
    grep -Eq "$reason" "$WORK/neg.out" || { cat "$WORK/neg.out"; die "Dockerfile: /$reason/ not flagged"; }
    echo "ok   rejected Dockerfile: $(grep -E -m1 "$reason" "$WORK/neg.out")"
  done
  if ((${#BINARIES[@]})); then
    grep -q "runtime stage lacks libgoogle-glog0v6" "$WORK/neg.out" ||
      { cat "$WORK/neg.out"; die "Dockerfile: the missing runtime library package was not flagged"; }
    echo "ok   rejected Dockerfile: runtime stage lacks libgoogle-glog0v6"
  fi
  echo "ok   $rejected bad inputs rejected for the expected reasons"
}

case "$STEP" in
  lint) step_lint ;;
  kustomize) step_kustomize ;;
  k8s) step_k8s ;;
  compose) step_compose ;;
  dockerfile) step_dockerfile ;;
  nightly) step_nightly ;;
  negative) step_negative ;;
  all) step_lint; step_kustomize; step_k8s; step_compose; step_dockerfile; step_nightly; step_negative ;;
  *) echo "usage: deploy/validate.sh [lint|kustomize|k8s|compose|dockerfile|nightly|negative|all] [BINARY...]" >&2
     exit 2 ;;
esac
