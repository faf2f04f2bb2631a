"""The float64 reference gradients of a case's residual loss (the torch
ONNX interpreter of test/helpers/onnx_torch) and the detection of the
points where the loss is not differentiable (kinks)."""
import dataclasses
import io
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


# ----------------------------------------------------------------------------
# Gradients against float64 autograd
# ----------------------------------------------------------------------------

def load_torch():
    """Imports torch and the ONNX interpreter (test/helpers/onnx_torch)."""
    global torch, OnnxModule
    sys.path.insert(0, os.path.join(HERE, "..", "helpers"))
    try:
        import torch
    except ModuleNotFoundError:
        raise SystemExit("error: the gradient check needs torch (Debian's "
                         "python3-torch); --no-grads checks the outputs only")
    from onnx_torch import OnnxModule
    torch.set_num_threads(1)


@dataclasses.dataclass
class Reference:
    """float64 autograd of one case's residual loss."""
    grads: dict = dataclasses.field(default_factory=dict)
                                # {input: gradient}; None: no autograd path
    kinks: dict = dataclasses.field(default_factory=dict)
                                # {input: bool mask of non-differentiable elements}
    copies: dict = dataclasses.field(default_factory=dict)
                                # {Identity copy: the input it copies}
    error: str = ""             # why there is no reference


def torch_reference(case, args):
    """Reference gradients of case's residual loss: the torch ONNX
    interpreter in float64, the test inputs as leaf tensors. The gradients
    are also taken on both sides of x, at x +- step * max(|x|, 1e-3 max|x|)
    * u (elementwise; u random, |u| in [0.5, 1]): elements whose gradient
    differs between the two sides by more than the tolerance, or is not
    finite, lie at a point where the loss is not differentiable (kinks)."""
    try:
        module = OnnxModule(io.BytesIO(case.reference), dtype=torch.float64)
    except Exception as err:            # an op the interpreter does not know
        return Reference(error=str(err))
    # An Identity of an initializer is a copy, a parameter of its own (pdc's
    # init_from and the interpreter's _untie_copies): its gradient is checked.
    names = case.grad_inputs + [c for c, kept in module.copies.items()
                                if kept in case.grad_inputs]
    probes = [n for n, _ in case.probes]
    base = {n: module.params[n] for n in names}
    rng = np.random.default_rng(zlib.crc32(case.name.encode()) + 1)

    def gradients(values):
        leaves = {n: v.clone().requires_grad_(True) for n, v in values.items()}
        leaves.update({n: module.params[n].clone().requires_grad_(True)
                       for n in probes})
        loss = module.loss(leaves, {})
        if not loss.requires_grad:
            return {n: None for n in leaves}
        out = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        return {n: None if g is None else g.numpy() for n, g in zip(leaves, out)}

    try:
        at = gradients(base)
        # The reference must reproduce onnx's outputs (within onnx's
        # tolerance): its probe gradients are 2 (Y - E') / count, E' the
        # expected values in the graph (E' = E but under --perturb).
        for name, want in case.probes:
            g, shifted = at[name], module.params[name.replace("probe_", "expected_")]
            error = (np.zeros(want.shape) if g is None else g * case.count / 2.0) \
                + (shifted.numpy() - want.astype(np.float64))
            excess = np.abs(error) - (args.atol + args.rtol *
                                      np.abs(want.astype(np.float64)))
            if np.any(excess > 0):
                worst = np.unravel_index(np.argmax(excess), excess.shape)
                return Reference(error=f"the interpreter's output "
                                 f"{name.split('probe_')[1]} differs from onnx's "
                                 f"at {list(map(int, worst))} by {error[worst]:.3g}")
        copies = {c: k for c, k in module.copies.items() if c in names}
        if all(at[n] is None for n in names):
            return Reference(grads={n: None for n in names}, copies=copies)
        # x_i +- step * max(|x_i|, 1e-3 max |x|) * u_i, |u_i| in [0.5, 1].
        moves = {}
        for n, v in base.items():
            x = v.numpy()
            floor = 1e-3 * float(np.abs(x).max()) if x.size else 0.0
            size = args.kink_step * np.maximum(np.abs(x), max(floor, 1e-30))
            moves[n] = torch.from_numpy(np.asarray(
                size * rng.choice([-1.0, 1.0], size=x.shape) *
                rng.uniform(0.5, 1.0, size=x.shape), np.float64))
        sides = [gradients({n: v + sign * moves[n] for n, v in base.items()})
                 for sign in (1.0, -1.0)]
    except Exception as err:            # an interpreter that cannot run the case
        return Reference(error=f"onnx_torch: {type(err).__name__}: {err}")
    kinks, scale = {}, largest(at[n] for n in names)
    for n in names:
        g = at[n]
        if g is None:
            continue
        plus, minus = sides[0][n], sides[1][n]
        plus = np.zeros_like(g) if plus is None else plus
        minus = np.zeros_like(g) if minus is None else minus
        with np.errstate(invalid="ignore"):
            tol = grad_tolerance(g, args, scale)
            kinks[n] = ~(np.isfinite(g) & np.isfinite(plus) & np.isfinite(minus)) | \
                (np.abs(plus - minus) > tol)
    return Reference(grads={n: at[n] for n in names}, kinks=kinks, copies=copies)


def largest(values):
    """max |v| over the finite elements of the arrays (0 if none)."""
    return max([float(np.max(np.abs(v[np.isfinite(v)]), initial=0.0))
                for v in values if v is not None], default=0.0)


def grad_tolerance(ref, args, case_scale):
    """atol + rtol |g_ref|, atol = grad_atol * max |g_ref| over the tensor's
    finite elements (over all the case's gradients when the tensor's are all
    0: a true gradient of 0 still gets float32 round-off)."""
    scale = largest([ref]) or case_scale
    return args.grad_atol * scale + args.grad_rtol * np.abs(ref)
