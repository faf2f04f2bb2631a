"""Checking the results of a case (outputs against onnx's expected values,
gradients against the float64 reference, with their tolerances) and the
lines printed for them."""
import collections
import re

import numpy as np

from node_reference import grad_tolerance, largest


# ----------------------------------------------------------------------------
# Outputs
# ----------------------------------------------------------------------------

def compare(case, grads, rtol, atol):
    """(status, message, loss) from the probe gradients (the loss: the
    squared errors and the linear term over count)."""
    loss_sum, worst = 0.0, None
    weights = dict(case.weights)
    for name, want in case.probes:
        grad = grads.get(name)
        if grad is None or grad.shape != want.shape:
            return "fail", f"no gradient of shape {list(want.shape)} for {name}", None
        error = grad.astype(np.float64) * case.count / 2.0   # = Y - E
        if not np.all(np.isfinite(error)):
            return "fail", f"output {name.split('probe_')[1]}: non-finite values", None
        loss_sum += float(np.sum(error * error))
        if name in weights:             # the linear term: sum((Y - E) R)
            loss_sum += float(np.sum(error * weights[name].astype(np.float64)))
        want = want.astype(np.float64)
        excess = np.abs(error) - (atol + rtol * np.abs(want))
        at = np.unravel_index(np.argmax(excess), excess.shape)
        if worst is None or excess[at] > worst[0]:
            worst = (float(excess[at]), float(abs(error[at])), name, at, float(want[at]))
    excess, err, name, at, want = worst
    if excess > 0:
        return "fail", (f"output {name.split('probe_')[1]} element {list(map(int, at))}: "
                        f"|Y - E| = {err:.3g} > {atol:g} + {rtol:g} * |{want:.6g}|"), None
    note = f"; without {', '.join(case.left_out)}" if case.left_out else ""
    return "pass", f"max |Y - E| {err:.3g}{note}", loss_sum / case.count


# ----------------------------------------------------------------------------
# Gradients
# ----------------------------------------------------------------------------

def compare_grads(case, mine, ref, args):
    """(status, message): "pass", "fail", "nondiff" (the loss is piecewise
    constant in every float input, or there is none) or "noref"."""
    if ref.error:
        return "noref", ref.error
    if not case.grad_inputs:
        return "nondiff", "no float input"
    notes, checked, kinks, worst = [], 0, 0, None
    prefix = f"c{case.index}_"
    scale = largest(ref.grads.values())
    for n in ref.grads:
        label = n[len(prefix):]
        if n in ref.copies:
            label += f" (Identity copy of '{ref.copies[n][len(prefix):]}')"
        g = ref.grads[n]
        got = mine.get(n)
        if n in case.buffers and got is None:
            notes.append(f"'{label}' not a parameter ({case.buffers[n]})")
            continue
        if g is None:
            # Piecewise constant: pdc's gradient, if any, must be 0.
            if got is not None and np.any(got != 0):
                at = np.unravel_index(np.argmax(np.abs(got)), got.shape)
                return "fail", (f"input '{label}': the loss is piecewise constant "
                                f"in it but pdc's gradient is {got[at]:.6g} at "
                                f"{list(map(int, at))}")
            notes.append(f"'{label}' not differentiable")
            continue
        if got is None:
            return "fail", f"input '{label}': pdc dumped no gradient"
        if got.shape != g.shape:
            return "fail", (f"input '{label}': gradient of shape {list(got.shape)}, "
                            f"expected {list(g.shape)}")
        got = got.astype(np.float64)
        skip = ref.kinks[n]
        tol = grad_tolerance(g, args, scale)
        with np.errstate(invalid="ignore"):
            excess = np.where(skip, -np.inf, np.abs(got - g) - tol)
            excess[~np.isfinite(got) & ~skip] = np.inf
        checked += 1
        kinks += int(skip.sum())
        if skip.all():
            continue
        at = np.unravel_index(np.argmax(excess), excess.shape)
        if worst is None or excess[at] > worst[0]:
            worst = (float(excess[at]), label, at, float(got[at]), float(g[at]),
                     float(tol[at]))
    if not checked:
        return "nondiff", "; ".join(notes) or "no float input"
    if kinks:
        notes.append(f"{kinks} element{'s' * (kinks != 1)} at kinks left out")
    suffix = f" ({'; '.join(notes)})" if notes else ""
    if worst is None:
        return "pass", "every element at a kink" + suffix
    excess, label, at, got, want, tol = worst
    where = f"input '{label}' element {list(map(int, at))}"
    if excess > 0:
        return "fail", (f"{where}: pdc {got:.7g}, reference {want:.7g}, "
                        f"|difference| {abs(got - want):.3g} > {tol:.3g}{suffix}")
    return "pass", (f"{checked} input{'s' * (checked != 1)}, worst {where}: "
                    f"|difference| {abs(got - want):.3g} <= {tol:.3g}{suffix}")


# ----------------------------------------------------------------------------
# Output lines
# ----------------------------------------------------------------------------

def report(results, grad_results, args):
    by = collections.defaultdict(list)
    for name in sorted(results):
        status, message = results[name]
        by[status].append((name, message))
    print(f"conformance: {len(by['pass'])} passed, {len(by['fail'])} failed, "
          f"{len(by['skip'])} skipped (unsupported)")
    grads = collections.defaultdict(list)
    for name in sorted(grad_results):
        status, message = grad_results[name]
        grads[status].append((name, message))
    if not args.no_grads:
        print(f"gradients: {len(grads['pass']) + len(grads['fail'])} checked, "
              f"{len(grads['fail'])} failed, {len(grads['nondiff'])} not "
              f"differentiable")
        if grads["noref"]:
            print(f"gradients: {len(grads['noref'])} without a reference (the "
                  f"torch interpreter cannot evaluate them)")
        kinks = [int(m.group(1)) for _, msg in grads["pass"] + grads["fail"]
                 for m in [re.search(r"(\d+) elements? at kinks", msg)] if m]
        if kinks:
            print(f"kinks: {sum(kinks)} element{'s' * (sum(kinks) != 1)} of "
                  f"{len(kinks)} test{'s' * (len(kinks) != 1)} at "
                  f"non-differentiable points left out")
    partial = [n for n, m in by["pass"] if "; without " in m]
    if partial:
        print(f"partial: {len(partial)} passed without the optional outputs pdc "
              f"does not compute")
    reasons = collections.Counter(re.sub(r" \(.*", "", m) if m.startswith("op not")
                                  else m for _, m in by["skip"])
    for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"skipped {n}: {reason}")
    for name, message in by["fail"]:
        print(f"FAIL {name}: {message}")
    for name, message in grads["fail"]:
        print(f"grad FAIL {name}: {message}")
    for name, message in grads["noref"]:
        print(f"grad noref {name}: {message}")
    for name, message in by["pass"] if args.verbose else []:
        print(f"pass {name}: {message}")
    for name, message in grads["pass"] if args.verbose else []:
        print(f"grad pass {name}: {message}")
    for name, message in grads["nondiff"] if args.verbose else []:
        print(f"grad not differentiable {name}: {message}")
    for name, message in by["skip"] if args.list_skipped else []:
        print(f"skip {name}: {message}")
    return 1 if by["fail"] or grads["fail"] else 0
