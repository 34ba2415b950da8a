#!/bin/sh
# Installs what epgraph's build, examples and tests need on Debian 12 (bookworm).
#   tools/install-deps.sh            build + tests: cmake, ninja, g++, Catch2, nlohmann_json, libzip,
#                                    simdjson (epgraph::json's parser; the benchmark's yardstick)
#   tools/install-deps.sh --ci       also clang (+ sanitizer runtime), clang-format, python3-pip
#   tools/install-deps.sh --bench    the same as without an option (kept for older instructions)
# Runs apt-get as root, or through sudo when not root. Does nothing when
# EPGRAPH_NO_APT=1 (for machines where everything is installed already).
# SPDX-License-Identifier: BSD-3-Clause
set -eu
[ "${EPGRAPH_NO_APT:-0}" = 1 ] && exit 0
packages="cmake ninja-build g++ pkg-config catch2 nlohmann-json3-dev libzip-dev libsimdjson-dev"
if [ "${1:-}" = "--ci" ]; then
  packages="$packages clang libclang-rt-14-dev clang-format git python3 python3-pip libbenchmark-dev"
fi
missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  echo "install-deps: already installed: $packages"
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo"
else
  echo "install-deps: not root and no sudo; install these Debian packages yourself:$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: installed$missing"
