#!/usr/bin/env python3
"""Export the GPT example with today's PyTorch exporter (torch 2.x, opset 18+).

The same model, options and dataset as export.py, exported by torch.onnx.export
(the torch.export-based "dynamo" exporter, the default of a current PyTorch
release) with optimize=False: the export to train. It keeps every parameter
as its own initializer under its PyTorch name, transposes as nodes and
literals as Constant nodes (plus SplitToSequence/SequenceAt, CastLike and
Range, which pdc imports).

--optimize runs the exporter's ONNX optimizer (torch.onnx.export's default,
made for inference). It deduplicates initializers by value, so distinct
parameters with equal initial values become one (all LayerNorm weights, all
LayerNorm biases): training the result trains a different model, and this
cannot be undone from the graph. It also folds transposed weights into new
initializers (val_N), which unties the LM head from the token embedding
(val_99 is a transposed copy of head.weight), folds the causal mask into a
BOOL initializer and scalar literals into rank-0 initializers. pdc compiles
such a model (its loss and gradients are right) but warns that it is not the
PyTorch model to train.

The two inputs are distinct tensors (idx, idx.clone()): passing the same
tensor twice makes the exporter merge the two graph inputs.

Needs the venv of scripts/setup-venv.sh (torch 2.x, onnx, onnxscript); run
with its python, or with any python when the venv is at $PDC_VENV or
~/.cache/pdc-venv.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pdc_venv import reexec_in_venv  # noqa: E402

reexec_in_venv("onnxscript")  # the exporter needs it

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export as gpt  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="gpt-torch2.onnx")
    p.add_argument("--opset", type=int, default=18, help="ONNX opset (18 or newer)")
    p.add_argument("--eval", action="store_true", help="export in eval mode")
    p.add_argument("--optimize", action="store_true",
                   help="run the exporter's ONNX optimizer (inference only: it "
                   "merges equal-valued parameters and unties the LM head)")
    gpt.add_model_args(p)
    a = p.parse_args()
    model = gpt.build_model(a)
    model.train(not a.eval)
    idx = torch.zeros(a.batch, a.seq, dtype=torch.long)
    torch.onnx.export(model, (idx, idx.clone()), a.out, opset_version=a.opset,
                      input_names=["idx", "targets"], output_names=["loss"],
                      external_data=False, optimize=a.optimize,
                      verbose=False)
    gpt.write_data(a)
    if not a.quiet:
        print(f"torch {torch.__version__}")
        gpt.describe(a.out)


if __name__ == "__main__":
    main()
