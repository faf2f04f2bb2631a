#!/usr/bin/env bash
# The main job on the bundled example: builds pdc, exports the MLP of
# examples/mlp from PyTorch to ONNX, compiles it into a 2-stage
# PipeDream-2BW plan and trains it for 200 steps across 2 MPI ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
work=build/example-mlp
mkdir -p "$work"
/usr/bin/python3 examples/mlp/export.py --out "$work/mlp.onnx" --data-dir "$work/data"
build/bin/pdc "$work/mlp.onnx" -o "$work/plan" --stages 2 --microbatches 4 \
  --schedule 2bw --optimizer adam --lr 0.003
"$work/plan/run" --steps 200 --log-every 20 --data "$work/data" \
  --save-onnx "$work/mlp-trained.onnx"
