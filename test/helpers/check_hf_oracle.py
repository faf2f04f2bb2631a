#!/usr/bin/env python3
"""Check the oracle (onnx_torch) against transformers on an exported Hugging Face model.

Exports a tiny transformers model with examples/hf/export.py's functions
(same options: --family, --exporter, --attn, --mask, --batch, --seq,
--samples, --seed; or checks an existing export given with --model, made
with those options), then compares on the first microbatch of the dataset
export.py writes:

1. reference (the venv's python, transformers and torch 2.x): the loss of
   the real module in float32 and in float64 (module.double(); transformers'
   loss still casts the logits to float32), and that every initializer of
   the ONNX file holds the module's parameter or buffer of that name;
2. oracle (Debian's /usr/bin/python3, torch 1.13): the loss of the ONNX
   graph evaluated by onnx_torch in float64 and in float32.

Prints the losses and PASS when both interpreter losses are within --tol
(relative, default 1e-5) of the module's float32 loss, else FAIL (exit 1).
The two phases run in their own interpreters: this script re-executes
itself with the venv's python ($PDC_VENV or ~/.cache/pdc-venv) for the
reference, passing the inputs and losses through a temporary directory.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.environ.get("PDC_VENV", os.path.expanduser("~/.cache/pdc-venv"))
DEBIAN_PYTHON = "/usr/bin/python3"


def parse_args():
    """Parse the command line (export.py's model options)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--family", default="gpt2",
                   choices=["gpt2", "llama", "bert", "mistral", "qwen2", "neox",
                            "gemma", "phi3"])
    p.add_argument("--exporter", choices=["torchscript", "dynamo"],
                   default="torchscript")
    p.add_argument("--attn", choices=["eager", "sdpa"], default="sdpa")
    p.add_argument("--mask", choices=["auto", "none", "ones", "input"],
                   default="auto")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--samples", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", help="check this export instead of exporting one")
    p.add_argument("--tol", type=float, default=1e-5, help="relative tolerance")
    p.add_argument("--workdir", help="keep the export and inputs here")
    p.add_argument("--phase", choices=["reference"], help=argparse.SUPPRESS)
    return p.parse_args()


def reference(a):
    """Venv phase: export (unless --model), write the first microbatch and
    the module's losses to a.workdir."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
    sys.path.insert(0, os.path.join(ROOT, "examples", "hf"))
    import export as hx
    mask = hx.mask_mode(a.family, a.exporter, a.mask)
    module = hx.wrap(hx.build_model(a.family, 0.0, a.seed, a.attn), mask)
    data = hx.make_dataset(a.family, mask, max(a.samples, a.batch), a.seq,
                           a.seed + 1)
    batch = {k: v[:a.batch] for k, v in data.items()}
    path = a.model or os.path.join(a.workdir, "model.onnx")
    if not a.model:
        hx.export(module, batch, path, a.exporter, 0.0)
    np.savez(os.path.join(a.workdir, "inputs.npz"), **batch)
    state = module.state_dict()
    mismatched = [t.name for t in onnx.load(path).graph.initializer
                  if t.name in state and not np.array_equal(
                      numpy_helper.to_array(t), state[t.name].numpy())]
    named = sum(t.name in state for t in onnx.load(path).graph.initializer)
    module.eval()
    args = [torch.from_numpy(v) for v in batch.values()]
    with torch.no_grad():
        loss32 = float(module(*args))
        loss64 = float(module.double()(*args))
    with open(os.path.join(a.workdir, "reference.json"), "w") as f:
        json.dump({"model": path, "loss32": loss32, "loss64": loss64,
                   "named": named, "mismatched": mismatched}, f)


def oracle(a, ref):
    """Debian phase: the interpreter's losses; returns {dtype name: loss}."""
    import numpy as np
    import torch
    sys.path.insert(0, HERE)
    from onnx_torch import OnnxModule
    inputs = {k: torch.from_numpy(v) for k, v in
              np.load(os.path.join(a.workdir, "inputs.npz")).items()}
    out = {}
    for dtype in (torch.float64, torch.float32):
        module = OnnxModule(ref["model"], dtype)
        with torch.no_grad():
            out[str(dtype).split(".")[1]] = float(module.loss({}, inputs))
    return out


def run_reference(a):
    """Runs this script's reference phase with the venv's python."""
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        sys.exit(f"error: no venv python at {python}; run scripts/setup-venv.sh")
    argv = [python, os.path.abspath(__file__), "--phase", "reference",
            "--workdir", a.workdir] + [arg for arg in sys.argv[1:]]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if done.returncode:
        sys.stdout.write(done.stdout[-4000:])
        sys.exit(f"error: reference phase failed ({done.returncode})")
    with open(os.path.join(a.workdir, "reference.json")) as f:
        return json.load(f)


def main():
    a = parse_args()
    if a.phase == "reference":
        reference(a)
        return
    if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    tmp = None
    if not a.workdir:
        tmp = tempfile.TemporaryDirectory(prefix="hf-oracle-")
        a.workdir = tmp.name
    os.makedirs(a.workdir, exist_ok=True)
    ref = run_reference(a)
    got = oracle(a, ref)
    name = f"{a.family} {a.exporter} attn={a.attn} mask={a.mask}"
    print(f"{name}: module loss float32 {ref['loss32']:.10g}, "
          f"float64 {ref['loss64']:.10g}; {ref['named']} initializers named "
          f"as module tensors, {len(ref['mismatched'])} differ")
    ok = not ref["mismatched"]
    for dtype, loss in got.items():
        rel = abs(loss - ref["loss32"]) / abs(ref["loss32"])
        rel64 = abs(loss - ref["loss64"]) / abs(ref["loss64"])
        ok &= rel <= a.tol
        print(f"  onnx_torch {dtype}: {loss:.10g}  rel. error vs module "
              f"float32 {rel:.2e}, vs float64 {rel64:.2e}")
    print(("PASS" if ok else "FAIL") + f": {name}")
    if tmp:
        tmp.cleanup()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
