"""The GPT graphs bench/compile_time.py compiles: examples/gpt/export.py at
each depth (reused when already in the work directory) and their parameter
counts."""
import argparse
import os
import subprocess
import sys

import onnx

import benchlib

EXPORT = os.path.join(benchlib.SRC_ROOT, "examples", "gpt", "export.py")


def model_path(a, layers):
    return os.path.join(a.work_dir, f"gpt-L{layers}-e{a.embd}-h{a.heads}-t{a.seq}"
                                    f"-v{a.vocab}-b{a.batch}-op{a.opset}.onnx")


def export_args(a, layers):
    return ["--layers", str(layers), "--embd", str(a.embd), "--heads", str(a.heads),
            "--seq", str(a.seq), "--vocab", str(a.vocab), "--batch", str(a.batch),
            "--opset", str(a.opset)]


def export(a, layers):
    """examples/gpt/export.py at this depth (reused when already in work_dir);
    returns (path, parameters, ONNX nodes, initializers, bytes)."""
    path = model_path(a, layers)
    if not os.path.exists(path):
        tmp = path + ".tmp.onnx"
        proc = subprocess.run([sys.executable, EXPORT, *export_args(a, layers),
                               "--out", tmp, "--quiet"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"export of {layers} layers failed:\n{proc.stderr}")
        os.replace(tmp, path)
    model = onnx.load(path)
    return path, count_parameters(a, layers), len(model.graph.node), \
        len(model.graph.initializer), os.path.getsize(path)


def count_parameters(a, layers):
    """Trainable parameters of the exported nn.Module (the tied head once)."""
    gpt = benchlib.load_example("gpt")
    ns = argparse.Namespace(vocab=a.vocab, block=None, seq=a.seq, layers=layers,
                            embd=a.embd, heads=a.heads, dropout=0.0, seed=0)
    return sum(p.numel() for p in gpt.build_model(ns).parameters())
