#!/usr/bin/env python3
"""Compare pdc's forward loss of a whole model with onnxruntime's.

Evaluates MODEL with onnxruntime on the first microbatch of --data (one
NAME.npy per graph input, first axis = sample, as many rows as the model's
batch dimension, or --microbatch), compiles it with pdc (1 stage, 1 microbatch, flush, sgd),
runs one step and checks `step 1 loss` against onnxruntime's loss:
|pdc - ort| <= --tol * max(|ort|, 1). Prints both and PASS, or FAIL and
exits 1.

Needs onnxruntime: run with the venv of scripts/setup-venv.sh (lit:
%venv_python, feature pdc-venv).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime


def first_microbatch(model, data_dir, microbatch):
    """{input name: rows of the first microbatch}."""
    inits = {t.name for t in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in inits:
            continue
        data = np.load(os.path.join(data_dir, value.name + ".npy"))
        dims = value.type.tensor_type.shape.dim
        rows = microbatch or (dims[0].dim_value if dims and dims[0].dim_value
                              else len(data))
        feeds[value.name] = data[:rows]
    return feeds


def pdc_loss(pdc, model_path, data_dir, batch, dims, work):
    plan = os.path.join(work, "plan")
    subprocess.run([pdc, model_path, "-o", plan, "--stages", "1", "--microbatches", "1",
                    "--microbatch", str(batch), "--schedule", "flush",
                    "--optimizer", "sgd", "--lr", "1"] + [f"--dim={d}" for d in dims],
                   check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([os.path.join(plan, "run"), "--steps", "1", "--data", data_dir],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"^step 1 loss (\S+)", out, re.M).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--data", required=True)
    p.add_argument("--pdc", required=True)
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--microbatch", type=int,
                   help="rows of the microbatch (default: the model's dim 0)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="size of a symbolic dimension, passed to pdc")
    a = p.parse_args()
    model = onnx.load(a.model)
    feeds = first_microbatch(model, a.data, a.microbatch)
    session = onnxruntime.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    want = float(session.run(None, feeds)[0])
    batch = len(next(iter(feeds.values())))
    with tempfile.TemporaryDirectory(prefix="pdc-ort-") as work:
        got = pdc_loss(a.pdc, a.model, a.data, batch, a.dim, work)
    print(f"ort check: onnxruntime {onnxruntime.__version__} loss {want:.6f}, "
          f"pdc {got:.6f}")
    if abs(got - want) <= a.tol * max(abs(want), 1.0):
        print("PASS")
        return 0
    print("FAIL")
    return 1


if __name__ == "__main__":
    sys.exit(main())
