#!/usr/bin/env python3
"""PyTorch oracle for pdc training runs (DESIGN.md section 4).

Rebuilds the model from the ONNX file itself (a small torch interpreter over the
graph, weights from the initializers), trains it with torch autograd and
torch.optim on exactly the batches a pdc plan consumes, and writes the final
weights to an .npz keyed by initializer name.

- flush, gpipe: W(t+1) = W(t) - lr * grad f(W(t)).
- 2bw:          W(t+1) = W(t) - lr * grad f(W(t-1)), W(-1) = W(0); the optimizer
  (momentum, Adam, AdamW) is fed that delayed gradient.
- State (BatchNormalization running statistics) is updated by every forward
  in microbatch order, each replica from its own microbatches; the result is
  replica 0's (the first m microbatches of each step), whose forwards use the
  weights of that step's gradient (W(t-1) under 2bw).
- Step t consumes samples [t*B, (t+1)*B) modulo the sample count, B = b*m*W.
  The loss of a step is the mean of its b*m*W/b microbatch losses (the graph is
  evaluated per microbatch of b samples, as exported), which is the mean over
  the global batch.

Runs only under Debian's /usr/bin/python3 (torch 1.13, onnx 1.12).
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_torch import OnnxModule  # noqa: E402

SCHEDULES = ("2bw", "flush", "gpipe")
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")


# ----------------------------------------------------------------------------
# Data and optimizers
# ----------------------------------------------------------------------------

def load_data(data_dir, names):
    """Load NAME.npy for every graph input name."""
    data = {n: np.load(os.path.join(data_dir, n + ".npy")) for n in names}
    counts = {len(a) for a in data.values()}
    if len(counts) != 1:
        raise ValueError(f"inputs in {data_dir} have different sample counts")
    return data


def step_microbatches(data, step, microbatch, count):
    """Return the count microbatches (dicts of tensors) that a step consumes."""
    samples = len(next(iter(data.values())))
    global_batch = microbatch * count
    index = (step * global_batch + np.arange(global_batch)) % samples
    return [{n: torch.from_numpy(a[index[k * microbatch:(k + 1) * microbatch]])
             for n, a in data.items()} for k in range(count)]


def make_optimizer(params, hp):
    """Return the torch.optim optimizer that pdc's --optimizer names."""
    name = hp["optimizer"]
    if name in ("sgd", "momentum"):
        return torch.optim.SGD(params, lr=hp["lr"], weight_decay=hp["weight_decay"],
                               momentum=hp["momentum"] if name == "momentum" else 0.0)
    cls = torch.optim.Adam if name == "adam" else torch.optim.AdamW
    return cls(params, lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"],
               weight_decay=hp["weight_decay"])


def hyperparameters(args):
    """Collect the optimizer hyperparameters from parsed arguments."""
    return {k: getattr(args, k) for k in
            ("optimizer", "lr", "momentum", "beta1", "beta2", "eps", "weight_decay")}


# ----------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------

def gradient(module, weights, batch, state, updating, rng=None):
    """Return (mean loss, gradients) of the microbatches at the given weights.
    The microbatches run in order; the first `updating` of them (replica 0's)
    update `state` (running statistics) in place, each reading the state the
    previous one left. rng = (seed, run position of batch[0]) keys Dropout:
    microbatch k draws the masks of position + k, as pdc's replica k // m
    does for its microbatch k % m."""
    live = {n: w.detach().clone().requires_grad_(True) for n, w in weights.items()}
    total = 0
    for k, mb in enumerate(batch):
        updates = {}
        key = {"seed": rng[0], "microbatch": rng[1] + k} if rng else None
        total = total + module.loss({**live, **state}, mb, rng=key, updates=updates)
        if k < updating:
            state.update(updates)
    loss = total / len(batch)
    # allow_unused: buffers such as attention masks get no gradient (None),
    # which torch.optim skips, as pdc keeps them constant.
    grads = torch.autograd.grad(loss, list(live.values()), allow_unused=True)
    return loss.item(), dict(zip(live, grads))


def train(model_path, data_dir, schedule, hp, microbatch, microbatches, replicas,
          steps, seed=0, dtype=torch.float32):
    """Train as pdc would; return (final weights as numpy dict, per-step losses).
    `dtype` is the precision of the whole computation (weights, activations,
    optimizer): float64 is the exact reference against which float32
    implementations, pdc's and torch's own, are judged."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule}")
    module = OnnxModule(model_path, dtype=dtype)
    data = load_data(data_dir, module.input_names)
    weights = {n: module.params[n].clone() for n in module.trainable()}
    state = {n: module.params[n].clone() for n in module.state_names}
    optimizer = make_optimizer(list(weights.values()), hp)
    previous = {n: w.clone() for n, w in weights.items()}   # W(t-1); W(-1) = W(0)
    losses, trained = [], set()
    for step in range(steps):
        batch = step_microbatches(data, step, microbatch, microbatches * replicas)
        at = previous if schedule == "2bw" else weights
        loss, grads = gradient(module, at, batch, state, microbatches,
                               rng=(seed, step * len(batch)))
        losses.append(loss)
        previous = {n: w.clone() for n, w in weights.items()}
        for name, w in weights.items():
            w.grad = grads[name]
        trained.update(n for n, g in grads.items() if g is not None)
        optimizer.step()
    # The file's initializers, and the copies of an eval-mode export that are
    # trained parameters (pdc saves those as initializers of their own; a
    # copy of a buffer, such as a second attention mask, stays an Identity).
    final = {n: module.params[n].numpy() for n in module.initializers()}
    final.update({n: w.detach().numpy() for n, w in weights.items()
                  if n not in module.copies or n in trained})
    final.update({n: t.numpy() for n, t in state.items()})
    return final, losses


def evaluate(model_path, weights, batch):
    """The loss of one microbatch with the given (numpy) weights."""
    module = OnnxModule(model_path)
    live = {n: torch.from_numpy(np.asarray(w)) for n, w in weights.items()
            if n in module.params}
    live = {n: t.to(module.dtype) if t.is_floating_point() else t
            for n, t in live.items()}
    with torch.no_grad():
        return module.loss(live, batch).item()


# ----------------------------------------------------------------------------
# Self-test of the oracle (identities that must hold whatever pdc does)
# ----------------------------------------------------------------------------

def max_relative_error(a, b):
    """Max over tensors of max|a-b| / (max|b| + 1e-12); a and b share keys."""
    return max(float(np.max(np.abs(a[k] - b[k])) / (np.max(np.abs(b[k])) + 1e-12))
               for k in b)


def manual_sgd(args, steps, delay):
    """Plain SGD written out by hand, independent of train(): one backward over
    the whole global batch, gradient taken at W(max(t - delay, 0)), applied to W(t)."""
    module = OnnxModule(args.model)
    data = load_data(args.data, module.input_names)
    global_batch = args.microbatch * args.microbatches * args.replicas
    history = [{n: module.params[n].clone() for n in module.trainable()}]
    for step in range(steps):
        batch = step_microbatches(data, step, global_batch, 1)[0]
        live = {n: w.clone().requires_grad_(True)
                for n, w in history[max(step - delay, 0)].items()}
        module.loss(live, batch).backward()
        history.append({n: history[-1][n] - args.lr * w.grad for n, w in live.items()})
    return {n: w.numpy() for n, w in history[-1].items()}


def self_test(args):
    """Check the oracle's own identities; return the list of failures."""
    hp = hyperparameters(args)

    def run(schedule, steps, **overrides):
        return train(args.model, args.data, schedule, {**hp, **overrides},
                     args.microbatch, args.microbatches, args.replicas, steps)[0]

    module = OnnxModule(args.model)
    init = {n: module.params[n].numpy() for n in module.trainable()
            if n not in module.copies}
    sgd = dict(optimizer="sgd", weight_decay=0.0)
    checks = [
        ("2bw with lr=0 keeps the initial weights",
         max_relative_error(run("2bw", 3, lr=0.0), init) == 0.0),
        ("flush, 3 steps = hand-written SGD",
         max_relative_error(run("flush", 3, **sgd), manual_sgd(args, 3, 0)) < 1e-5),
        ("2bw, 3 steps = hand-written SGD with a one-step delay",
         max_relative_error(run("2bw", 3, **sgd), manual_sgd(args, 3, 1)) < 1e-5),
        ("2bw step 1 = flush step 1 (W(-1) = W(0))",
         max_relative_error(run("2bw", 1), run("flush", 1)) == 0.0),
        ("2bw step 2 != flush step 2",
         max_relative_error(run("2bw", 2), run("flush", 2)) > 1e-4),
    ]
    failures = []
    for text, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {text}")
        if not ok:
            failures.append(text)
    return failures


# ----------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------

def add_training_args(p):
    """Add the schedule/optimizer/batch arguments shared with check_training."""
    p.add_argument("--model", required=True, help="ONNX model (forward + loss)")
    p.add_argument("--data", required=True, help="dir with NAME.npy per graph input")
    p.add_argument("--schedule", choices=SCHEDULES, default="2bw")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--microbatch", type=int, required=True, help="b")
    p.add_argument("--microbatches", type=int, required=True, help="m")
    p.add_argument("--replicas", type=int, default=1, help="W")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--seed", type=int, default=0,
                   help="run --seed: the key of Dropout masks")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_training_args(p)
    p.add_argument("--out", help="write the final weights to this .npz")
    p.add_argument("--self-test", action="store_true",
                   help="check the oracle's identities instead of training")
    args = p.parse_args()
    if args.self_test:
        failures = self_test(args)
        print("FAIL" if failures else "PASS")
        return 1 if failures else 0
    weights, losses = train(args.model, args.data, args.schedule, hyperparameters(args),
                            args.microbatch, args.microbatches, args.replicas,
                            args.steps, args.seed)
    for step, loss in enumerate(losses):
        print(f"step {step + 1} loss {loss:.6f}")
    if args.out:
        np.savez(args.out, **weights)
    return 0


if __name__ == "__main__":
    sys.exit(main())
