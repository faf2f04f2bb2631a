#!/usr/bin/env bash
# Creates the Python venv of today's exporter (torch 2.x, onnx, onnxscript,
# onnxruntime from PyPI, plus transformers and torchvision for the models
# users export: examples/hf) used by the optional tests gated on the lit
# feature `pdc-venv` (test/lit.cfg.py). Debian's torch 1.13 stays the core oracle;
# scripts/test.sh (and so CI) creates it while the build runs.
#
# Idempotent: an existing venv whose packages all import is left alone; one
# that lacks some (e.g. made before transformers was added) gets them.
# Location: $PDC_VENV, else ~/.cache/pdc-venv. Prints the time each step took.
#   bash scripts/setup-venv.sh          # create or verify
#   bash scripts/setup-venv.sh --force  # recreate from scratch
set -euo pipefail

VENV="${PDC_VENV:-$HOME/.cache/pdc-venv}"
PY=/usr/bin/python3
PKGS=(torch onnx onnxscript onnxruntime numpy transformers torchvision)
CHECK='import torch, onnx, onnxscript, onnxruntime, numpy, transformers, torchvision
print("torch", torch.__version__, "onnx", onnx.__version__,
      "onnxscript", onnxscript.__version__, "onnxruntime", onnxruntime.__version__,
      "transformers", transformers.__version__, "torchvision", torchvision.__version__)'

if [ "${1:-}" = "--force" ]; then
  rm -rf "$VENV"
fi

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$CHECK" 2>/dev/null; then
  echo "setup-venv: $VENV is ready"
  exit 0
fi

start=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  mkdir -p "$(dirname "$VENV")"
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
t0=$(date +%s)
# Plain PyPI: the CPU-only index of pytorch.org is not reachable here, so the
# default Linux wheel comes with its CUDA runtime wheels (unused on CPU).
"$VENV/bin/python" -m pip install --quiet torch
t1=$(date +%s)
"$VENV/bin/python" -m pip install --quiet onnx onnxscript onnxruntime numpy
t2=$(date +%s)
# torchvision pinned to the torch just installed (pip would otherwise be free
# to move torch to satisfy the newest torchvision).
TORCH_VERSION=$("$VENV/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])')
"$VENV/bin/python" -m pip install --quiet transformers torchvision "torch==$TORCH_VERSION"
t3=$(date +%s)
"$VENV/bin/python" -c "$CHECK"
echo "setup-venv: torch $((t1 - t0)) s, onnx/onnxscript/onnxruntime $((t2 - t1)) s," \
     "transformers/torchvision $((t3 - t2)) s," \
     "total $((t3 - start)) s, $(du -sh "$VENV" | cut -f1) in $VENV"
