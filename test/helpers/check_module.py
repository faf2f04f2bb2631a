#!/usr/bin/env python3
"""Checks the oracle on an exported example against the torch module itself.

Builds the module of examples/EXAMPLE/export.py (same options and seed, so
the same initial weights), trains its own nn.Parameters with torch.optim on
the batches torch_reference.py uses (flush schedule: W(t+1) = W(t) - lr *
grad f(W(t)); one forward per microbatch, in order, in training mode), trains
the export with torch_reference.train, and compares every named parameter
and running-statistics buffer of the module with the oracle's tensor of the
same name (max relative error <= --tol).

- gpt, an eval-mode export: the oracle must train the deduplicated copies
  (every LayerNorm weight and bias) as the distinct parameters they are and
  keep the genuine tie (wte.weight = head.weight) as one.
- cnn: the oracle must update the BatchNorm running statistics as
  nn.BatchNorm2d does (torch's momentum, the unbiased batch variance).

Prints PASS or FAIL (last line); exits 1 on failure. Runs under /usr/bin/python3.
"""
import argparse
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_reference  # noqa: E402


def load_export_script(example):
    """examples/EXAMPLE/export.py as a module."""
    path = os.path.join(HERE, "..", "..", "examples", example, "export.py")
    spec = importlib.util.spec_from_file_location(example + "_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpt_module(export, argv):
    """The GPT of export.py's model options; its inputs are idx, targets."""
    p = argparse.ArgumentParser()
    export.add_model_args(p)
    return export.build_model(p.parse_args(argv)), ("idx", "targets")


def cnn_module(export, argv):
    """The CNN of export.py's --channels/--depthwise/--seed; inputs x, y."""
    p = argparse.ArgumentParser()
    p.add_argument("--channels", type=export.parse_channels, default=[8, 16])
    p.add_argument("--depthwise", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    torch.manual_seed(a.seed)
    return export.CNNWithLoss(a.channels, a.depthwise), ("x", "y")


EXAMPLES = {"gpt": gpt_module, "cnn": cnn_module}


def is_running_stat(name):
    return name.endswith(("running_mean", "running_var"))


def load_running_stats(model, path):
    """Start the module's running statistics from the export's initializers:
    torch.onnx.export in TRAINING mode runs one forward on its dummy inputs,
    which updates them before they are written."""
    inits = torch_reference.OnnxModule(path).params
    with torch.no_grad():
        for name, buf in model.named_buffers():
            if is_running_stat(name):
                buf.copy_(inits[name])


def train_module(model, names, data, hp, microbatch, microbatches, steps):
    """Train the module's own parameters; return parameters and running
    statistics by name."""
    model.train()
    params = dict(model.named_parameters())
    optimizer = torch_reference.make_optimizer(list(params.values()), hp)
    for step in range(steps):
        batch = torch_reference.step_microbatches(data, step, microbatch, microbatches)
        optimizer.zero_grad()
        loss = sum(model(*(mb[n] for n in names)) for mb in batch) / len(batch)
        loss.backward()
        optimizer.step()
    out = {n: p.detach().numpy() for n, p in params.items()}
    out.update({n: b.numpy() for n, b in model.named_buffers()
                if is_running_stat(n)})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--example", choices=sorted(EXAMPLES), required=True)
    torch_reference.add_training_args(p)
    p.add_argument("--tol", type=float, default=1e-5)
    args, model_argv = p.parse_known_args()
    export = load_export_script(args.example)
    model, names = EXAMPLES[args.example](export, model_argv)
    load_running_stats(model, args.model)
    hp = torch_reference.hyperparameters(args)
    oracle, _ = torch_reference.train(args.model, args.data, "flush", hp,
                                      args.microbatch, args.microbatches, 1,
                                      args.steps)
    data = torch_reference.load_data(args.data, names)
    module = train_module(model, names, data, hp, args.microbatch,
                          args.microbatches, args.steps)
    missing = sorted(set(module) - set(oracle))
    if missing:
        print(f"error: the oracle has no tensors for {missing}", file=sys.stderr)
        print("FAIL")
        return 1
    errors = {n: torch_reference.max_relative_error({n: oracle[n]}, {n: module[n]})
              for n in module}
    worst = max(errors, key=errors.get)
    print(f"oracle vs torch module: max relative error {errors[worst]:.3e} over "
          f"{len(module)} tensors (worst {worst})")
    ok = errors[worst] <= args.tol
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
