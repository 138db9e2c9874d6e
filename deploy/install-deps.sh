#!/usr/bin/env bash
# Installs every Debian 12 package that flamefleet's build, tests and benchmarks need.
# Idempotent: packages already present are skipped by apt. Run as root.
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake ninja-build pkg-config clang
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev zlib1g-dev
  libgoogle-glog-dev
  python3
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
