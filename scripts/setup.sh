#!/usr/bin/env bash
# Installs the Debian 12 packages vlbias needs (idempotent) and builds a Release
# build into build/: the vlbias command (build/vlbias) and the Python module (build/python). Usage: scripts/setup.sh [--deps-only] [--test-deps]
# --test-deps adds what only the tests need: headless Chromium (the HTML reports are
# loaded in a real browser), the DejaVu fonts the reports name, and pytest with scipy (the
# Python bindings are checked against the CLI and against numpy/scipy), clang-format
# (the tree's formatting is checked), and Slurm with munge (slurm-wlm: slurmctld, slurmd and
# the client commands; the job-array tests run a one-node Slurm, scripts/slurm_local.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build clang lld pkg-config
  libopenblas-dev libboost-math-dev libsimdjson-dev nlohmann-json3-dev
  libyaml-cpp-dev libcli11-dev libjpeg62-turbo-dev libpng-dev zlib1g-dev libsnappy-dev libzstd-dev libxml2-dev libsqlite3-dev libcurl4-openssl-dev libssl-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libdlib-dev libdlib-data
  python3-dev pybind11-dev python3-numpy
)
deps_only=false
for arg in "$@"; do
  case "$arg" in
    --deps-only) deps_only=true ;;
    --test-deps) packages+=(chromium fonts-dejavu-core python3-pytest python3-scipy python3-pip clang-format slurm-wlm munge) ;;
    *) echo "setup: unknown option $arg (expected --deps-only, --test-deps)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
$deps_only && exit 0

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target vlbias _vlbias
echo "setup: built build/vlbias and the Python module (PYTHONPATH=build/python)"
