#!/usr/bin/env python3
"""Finite-difference check of pdc's gradient rules.

Takes a small ONNX model whose float initializers are the values to
differentiate and whose single output is a scalar f32 (usually
`ReduceSum(Mul(op(...), R))` with R an initializer, so every output element
gets its own weight). It

1. builds the model from ONNX text; initializers written with one value for
   many elements (`float[3, 4] w = {0.0}`) get N(0, 1) values from --seed;
   graph inputs get N(0, 1) floats or integers in [0, --int-high);
2. compiles it with pdc (1 stage, 1 microbatch, flush, sgd) and runs one step
   with `run --dump-grads`, which writes the gradient of every parameter;
3. computes central finite differences of the same loss in float64 with the
   torch ONNX interpreter (test/helpers/onnx_torch) on --samples elements
   per parameter, and float64 autograd on all elements;
4. prints `grad check: ...` lines and PASS, or FAIL and exits 1.

With --data, MODEL is a binary .onnx (e.g. a whole exported GPT) checked on
the first microbatch of the given inputs (as many rows as the model's batch
dimension); use --samples 0 to compare with autograd only.

The checked error is max |g_pdc - g_ref| / max(max |g_ref|, 1e-3) per
parameter, against FD (sampled elements) and autograd (all elements). A
parameter whose autograd error exceeds --tol still passes when it is within
twice the error of torch's own float32 autograd of the same graph (printed:
gradients that are 0 in exact arithmetic, like a conv bias before
BatchNorm, are float32 round-off). The forward loss of pdc must match the
float64 interpreter too; the max relative error line counts such parameters
at --tol.

Runs only under Debian's /usr/bin/python3 (torch 1.13, onnx 1.12).
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

import onnx_from_text  # noqa: E402
from onnx_torch import OnnxModule  # noqa: E402


def build_model(text_path, out_path, seed):
    """ONNX text -> model with random initializers; returns the model."""
    with open(text_path) as f:
        lines = [l for l in f if not l.lstrip().startswith("//")]
    model = onnx.parser.parse_model("".join(lines))
    onnx_from_text.fill_initializers(model)
    rng = np.random.default_rng(seed)
    for i, t in enumerate(model.graph.initializer):
        data = numpy_helper.to_array(t)
        if data.dtype == np.float32 and data.size > 1 and np.all(data == data.flat[0]):
            data = rng.standard_normal(data.shape).astype(np.float32)
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(data, t.name))
    onnx.save(model, out_path)
    return model


def write_inputs(model, data_dir, seed, int_high):
    """One .npy per graph input (first axis = sample), random values."""
    rng = np.random.default_rng(seed + 1)
    inits = {t.name for t in model.graph.initializer}
    os.makedirs(data_dir, exist_ok=True)
    for value in model.graph.input:
        if value.name in inits:
            continue
        t = value.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        if t.elem_type == onnx.TensorProto.FLOAT:
            data = rng.standard_normal(shape).astype(np.float32)
        else:
            data = rng.integers(0, int_high, size=shape).astype(np.int64)
        np.save(os.path.join(data_dir, value.name + ".npy"), data)


def run_pdc(args, model_path, data_dir, work):
    """Compiles and runs one step; returns (loss, {param: grad})."""
    plan, grads = os.path.join(work, "plan"), os.path.join(work, "grads")
    os.makedirs(grads, exist_ok=True)
    subprocess.run([args.pdc, model_path, "-o", plan, "--stages", "1",
                    "--microbatches", "1", "--schedule", "flush",
                    "--optimizer", "sgd", "--lr", "1"] + args.pdc_arg,
                   check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([os.path.join(plan, "run"), "--steps", "1",
                          "--data", data_dir, "--dump-grads", grads],
                         check=True, capture_output=True, text=True).stdout
    loss = float(out.split("step 1 loss ")[1].split()[0])
    result = {}
    for f in os.listdir(grads):
        result[f[:-4].replace("__", "/")] = np.load(os.path.join(grads, f))
    return loss, result


def reference(model_path, data_dir, samples, seed):
    """float64 loss, autograd gradients and sampled central differences."""
    module = OnnxModule(model_path, dtype=torch.float64)
    # pdc's one step reads the first microbatch (dim 0 of the model's inputs).
    dims = {v.name: v.type.tensor_type.shape.dim for v in module.model.graph.input}
    inputs = {}
    for n in module.input_names:
        data = np.load(os.path.join(data_dir, n + ".npy"))
        rows = dims[n][0].dim_value if dims[n] and dims[n][0].dim_value else len(data)
        inputs[n] = torch.from_numpy(data[:rows].copy())
    weights = {n: module.params[n].clone().requires_grad_(True)
               for n in module.trainable()}
    loss = module.loss(weights, inputs)
    loss.backward()
    # Initializers the loss does not depend on differentiably (mask
    # buffers) get no gradient; pdc treats them as constants too.
    weights = {n: w for n, w in weights.items() if w.grad is not None}
    autograd = {n: w.grad.numpy() for n, w in weights.items()}
    fp32 = float32_autograd(model_path, inputs, autograd)
    rng = np.random.default_rng(seed + 2)
    fd = {}
    with torch.no_grad():
        for name, w in weights.items():
            flat = w.view(-1)
            picks = rng.choice(flat.numel(), min(samples, flat.numel()),
                               replace=False)
            values = {}
            for i in picks:
                h = 1e-6 * max(1.0, abs(float(flat[i])))
                old = float(flat[i])
                flat[i] = old + h
                plus = float(module.loss(weights, inputs))
                flat[i] = old - h
                minus = float(module.loss(weights, inputs))
                flat[i] = old
                values[int(i)] = (plus - minus) / (2 * h)
            fd[name] = values
    return float(loss), autograd, fd, fp32


def float32_autograd(model_path, inputs, names):
    """The same gradients from torch in float32: their distance to float64
    is the round-off a float32 implementation cannot avoid (e.g. a conv
    bias followed by BatchNorm has a true gradient of 0)."""
    module = OnnxModule(model_path, dtype=torch.float32)
    weights = {n: module.params[n].clone().requires_grad_(True) for n in names}
    module.loss(weights, inputs).backward()
    return {n: w.grad.numpy() for n, w in weights.items()}


def rel_error(a, b):
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-3))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="ONNX text model (.onnxtext), or a binary "
                   ".onnx model with --data")
    p.add_argument("--data", help="use these NAME.npy inputs (first axis = "
                   "one microbatch) with a binary model instead of random ones")
    p.add_argument("--pdc", default="pdc")
    p.add_argument("--pdc-arg", action="append", default=[],
                   help="extra pdc option (repeatable), e.g. --pdc-arg=--dim=T=8 "
                   "for a dynamic-axes export")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--int-high", type=int, default=2)
    p.add_argument("--samples", type=int, default=12)
    p.add_argument("--tol", type=float, default=1e-3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        if args.data:
            model_path, data_dir = os.path.abspath(args.model), args.data
        else:
            model_path = os.path.join(work, "model.onnx")
            model = build_model(args.model, model_path, args.seed)
            data_dir = os.path.join(work, "data")
            write_inputs(model, data_dir, args.seed, args.int_high)
        try:
            loss, grads = run_pdc(args, model_path, data_dir, work)
        except subprocess.CalledProcessError as e:
            print(e.stdout or "", e.stderr or "", sep="\n")
            print("FAIL: pdc failed")
            return 1
        ref_loss, autograd, fd, fp32 = reference(model_path, data_dir,
                                                 args.samples, args.seed)
    worst_fd = worst_ag = 0.0
    for name, g in sorted(autograd.items()):
        mine = grads[name].astype(np.float64)
        idx = sorted(fd[name])
        err_fd = rel_error(mine.reshape(-1)[idx],
                           np.array([fd[name][i] for i in idx])) if idx else 0.0
        err_ag = rel_error(mine, g)
        # Within twice torch's own float32 error counts as exact.
        err_torch = rel_error(fp32[name].astype(np.float64), g)
        note, counted = "", err_ag
        if err_ag > args.tol and err_ag <= 2 * err_torch:
            note = f" (float32 round-off: torch fp32 {err_torch:.2e})"
            counted = args.tol
        worst_fd, worst_ag = max(worst_fd, err_fd), max(worst_ag, counted)
        print(f"grad check: {name}: vs finite differences {err_fd:.2e}, "
              f"vs autograd {err_ag:.2e}{note}")
    loss_err = abs(loss - ref_loss) / max(abs(ref_loss), 1.0)
    print(f"grad check: loss {loss:.6g} vs {ref_loss:.6g} (error {loss_err:.1e})")
    print(f"grad check: max relative error {max(worst_fd, worst_ag):.2e} "
          f"over {len(autograd)} parameters")
    ok = worst_fd <= args.tol and worst_ag <= args.tol and loss_err <= args.tol
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
