#!/usr/bin/env bash
# Installs every dependency of pdc on Debian 12 (bookworm) with apt.
# Idempotent: packages already present are skipped. Run as root.
set -euo pipefail

PKGS=(
  # build
  cmake ninja-build ccache g++ git
  # MLIR/LLVM 19 (compiler)
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools clang-19 lld-19
  # ONNX import
  libonnx-dev libprotobuf-dev protobuf-compiler
  # runtime: BLAS and MPI
  libopenblas-dev libsleef-dev libdnnl-dev libxsmm-dev libopenmpi-dev openmpi-bin nlohmann-json3-dev
  # tests
  libgtest-dev python3-numpy python3-onnx python3-torch python3-torchvision
  libonnx-testdata
  # the PyPI venv of today's exporter (scripts/setup-venv.sh)
  python3-venv
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
