#!/usr/bin/env bash
# Installs every Debian 12 package that flamefleet's build, tests and benchmarks need.
# Idempotent: packages already present are skipped by apt. Run as root.
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake ninja-build pkg-config clang clang-format
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev libsecp256k1-dev libsqlite3-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev zlib1g-dev
  libgoogle-glog-dev libcpp-httplib-dev
  chromium
  yamllint docker-compose
  golang-go
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js runs the headless-browser test of the SVGs; the machines ship it, else use Debian's.
if ! command -v node >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

# kubectl renders deploy/k8s (its built-in kustomize). Debian's is kubernetes-client (1.20);
# a kubectl already on the machine (e.g. from the Google Cloud CLI, which owns /usr/bin/kubectl
# and would conflict) is used as it is.
if ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# playwright-core drives Debian's chromium; it never downloads a browser of its own.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -d "$ROOT/tests/browser/node_modules/playwright-core" ]]; then
  echo "install-deps: npm ci in tests/browser"
  (cd "$ROOT/tests/browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
fi

# deploy/validate.sh's schema checks (tests/deploy): exact versions from package-lock.json.
if [[ ! -d "$ROOT/tests/deploy/node_modules/kubernetes-models" ]]; then
  echo "install-deps: npm ci in tests/deploy"
  (cd "$ROOT/tests/deploy" && npm ci --no-audit --no-fund --silent)
fi

# ajv, the speedscope app (with its file-format schema) and playwright-core for the export
# tests in tests/cli/speedscope.
if [[ ! -d "$ROOT/tests/cli/speedscope/node_modules/playwright-core" ]]; then
  echo "install-deps: npm ci in tests/cli/speedscope"
  (cd "$ROOT/tests/cli/speedscope" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
fi
