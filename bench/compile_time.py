#!/usr/bin/env python3
"""pdc's compile time on GPT-2-XL-shaped graphs, and how it grows with depth.

Exports the GPT of examples/gpt (token + position embeddings, pre-LN blocks
with a fused qkv Linear, causal self-attention with the registered tril
mask, a 4x erf-GELU MLP, final LayerNorm, LM head tied to the token
embedding, cross-entropy loss; torch 1.13's exporter, training mode, opset
13 by default, weights included) at GPT-2 XL's depth of 48 layers and
shallower, at a small hidden size so the files stay small, and times
`pdc model.onnx -o DIR` end to end (import, autodiff, plan search, passes,
LLVM code generation and linking of every stage executable) for

  d=1        --stages 1
  d=4 m=4    --stages 4 --microbatches 4 (fixed placement)
  search     --devices 4 --global-batch 4b (the planner chooses depth,
             width, microbatches, schedule and recomputation)

best of --repeat wall-clock runs each (and as many runs with --mlir-timing
for the phases). Prints a markdown table (layers,
parameters, ONNX nodes, file size, seconds and milliseconds per layer per
configuration), a least-squares fit seconds = a + b * layers with R^2 and
the exponent k of seconds ~ layers^k per configuration, pdc's own phase
breakdown (--mlir-timing) at --target-layers (48), each phase's growth with
depth (superlinear phases are flagged), and whether the 48-layer compile
takes under --budget seconds (the performance issue asks for 10).
Also the d=1 stage's LLVM IR (--emit=llvm) through llc -O2 and -O0 with
-time-passes (where LLVM's own code generation goes), and with --perf a
DWARF call-graph profile of the d=1 compile at --target-layers and the
deepest depth (inclusive shares of the import, MLIR passes, lowering, LLVM
code generation and linking; hottest functions). --write-doc writes it all
to docs/compile-time.md.

The pdc binary (with the runtime it links stages against) is copied into
the work directory first, so that every run times the same build even
while build/ is being rebuilt (--no-snapshot times it in place).

    /usr/bin/python3 bench/compile_time.py --perf --write-doc
    /usr/bin/python3 bench/compile_time.py --layers 6,12,24,48,96,192 --perf --write-doc
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import onnx
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

SRC_ROOT = benchlib.SRC_ROOT
EXPORT = os.path.join(SRC_ROOT, "examples", "gpt", "export.py")
DOC = os.path.join(SRC_ROOT, "docs", "compile-time.md")
CHOSE_RE = re.compile(r"^planner: chose (.+?) of (\d+) candidates", re.M)
TIMING_RE = re.compile(r"^(\s+)(\d+\.\d+) \(\s*[\d.]+%\)(\s+)(\S.*?)\s*$")
# Errors of a binary or runtime library being rewritten by a build.
HALF_BUILT = ("Text file busy", "No such file", "cannot read the runtime",
              "linking", "file format not recognized", "archive has no index",
              "malformed archive", "truncated")


# ----------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------
# pdc
# ----------------------------------------------------------------------------

def snapshot(a):
    """Copy pdc, pdrt-link.txt and the runtime archive it names into
    work_dir/pdc-snapshot/{bin,lib}; returns the copied pdc. Retries while a
    concurrent build leaves a file missing or a binary that does not start."""
    build = os.path.dirname(os.path.dirname(os.path.abspath(a.pdc)))
    snap = os.path.join(a.work_dir, "pdc-snapshot")
    for attempt in range(6):
        try:
            shutil.rmtree(snap, ignore_errors=True)
            os.makedirs(os.path.join(snap, "bin"))
            os.makedirs(os.path.join(snap, "lib"))
            pdc = os.path.join(snap, "bin", "pdc")
            shutil.copy2(a.pdc, pdc)
            lines = []
            with open(os.path.join(build, "lib", "pdrt-link.txt")) as f:
                for line in f.read().splitlines():
                    if line.strip().endswith("libpdrt.a"):
                        copy = os.path.join(snap, "lib", "libpdrt.a")
                        shutil.copy2(line.strip(), copy)
                        line = copy
                    lines.append(line)
            with open(os.path.join(snap, "lib", "pdrt-link.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
            subprocess.run([pdc, "--version"], check=True, capture_output=True)
            return pdc
        except (OSError, subprocess.CalledProcessError) as err:
            print(f"snapshot of {a.pdc} failed ({err}); retrying in 60 s",
                  file=sys.stderr)
            time.sleep(60)
    raise SystemExit(f"could not snapshot {a.pdc}")


def run_pdc(a, model, flags, extra=()):
    """One `pdc model -o DIR flags`; returns (wall s, CPU s of pdc and its
    linker children, stdout + stderr). Waits out a half-built binary (60 s, 5 times)."""
    out = tempfile.mkdtemp(prefix="plan-", dir=a.work_dir)
    cmd = [a.pdc_run, model, "-o", os.path.join(out, "plan"), *flags, *extra]
    try:
        for attempt in range(6):
            before = os.times()
            start = time.perf_counter()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as err:
                proc = subprocess.CompletedProcess(cmd, 127, "", str(err))
            wall = time.perf_counter() - start
            after = os.times()
            if proc.returncode == 0:
                cpu = (after.children_user - before.children_user
                       + after.children_system - before.children_system)
                return wall, cpu, proc.stdout + proc.stderr
            if attempt < 5 and any(s in proc.stderr for s in HALF_BUILT):
                print(f"pdc failed ({proc.stderr.strip().splitlines()[-1]}); "
                      "retrying in 60 s", file=sys.stderr)
                time.sleep(60)
                continue
            raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}:\n"
                             f"{proc.stderr}")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def parse_timing(text):
    """--mlir-timing's tree as [(path, seconds)], path 'parent/child'."""
    phases, stack = [], []
    for line in text.splitlines():
        m = TIMING_RE.match(line)
        if not m:
            continue
        depth, name = len(m.group(3)), m.group(4)
        if name in ("Total", "Rest"):
            continue
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, name))
        phases.append(("/".join(n for _, n in stack), float(m.group(2))))
    return phases


def phase_minima(runs):
    """Each phase's least seconds over several parsed --mlir-timing runs."""
    best = {}
    for phases in runs:
        for path, t in phases:
            best[path] = min(t, best.get(path, t))
    return [(path, best[path]) for path, _ in runs[0]]


def configurations(a):
    common = ["--optimizer", a.optimizer]
    return [
        ("d=1", ["--stages", "1"] + common),
        (f"d={a.fixed_stages} m={a.microbatches}",
         ["--stages", str(a.fixed_stages), "--microbatches", str(a.microbatches)]
         + common),
        (f"search ({a.devices} devices)",
         ["--devices", str(a.devices), "--global-batch", str(a.batch * a.devices)]
         + common),
    ]


# ----------------------------------------------------------------------------
# Statistics
# ----------------------------------------------------------------------------

def linear_fit(xs, ys):
    """(a, b, R^2) of ys = a + b xs by least squares."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    a0 = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a0 - b * x) ** 2 for x, y in zip(xs, ys))
    return a0, b, (1 - ss_res / ss_tot) if ss_tot else 1.0


def exponent(xs, ys):
    """k of ys ~ xs^k (least squares in log-log); 1 is linear."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        return float("nan")
    return linear_fit([p[0] for p in pts], [p[1] for p in pts])[1]


# ----------------------------------------------------------------------------
# perf
# ----------------------------------------------------------------------------

# Frames whose inclusive share of the samples says where a compile goes:
# (label, symbol as perf prints it).
KEY_FRAMES = [
    ("import (ONNX to pd)", "mlir::pd::importONNXFile"),
    ("autodiff and fusion", "mlir::pd::runAutodiff"),
    ("stages and buffers", "mlir::pd::runStagePhases"),
    ("lowering to the LLVM dialect (LowerToRuntimePass)", "mlir::pd::lowerStageToLLVM"),
    ("  of which mlir::SymbolTable::lookupSymbolIn", "mlir::SymbolTable::lookupSymbolIn"),
    ("translation to LLVM IR", "mlir::translateModuleToLLVMIR"),
    ("LLVM code generation (mlir::pd::emitObjectFile)", "mlir::pd::emitObjectFile"),
    ("  of which greedy register allocation (llvm::RegAllocBase::allocatePhysRegs)",
     "llvm::RegAllocBase::allocatePhysRegs"),
    ("  of which instruction selection (llvm::SelectionDAGISel::runOnMachineFunction)",
     "llvm::SelectionDAGISel::runOnMachineFunction"),
]
LINKER_COMMS = ("ld", "collect2", "c++", "ld.bfd", "x86_64-linux-gn")


def perf_profile(a, model, flags):
    """perf record (DWARF call graphs) of one compile: {label: inclusive
    share %} of KEY_FRAMES plus the linker processes' share, and the
    hottest [(self share %, library, function)]; None without perf."""
    perf = shutil.which("perf")
    if not perf:
        return None
    data = os.path.join(a.work_dir, "perf.data")
    out = tempfile.mkdtemp(prefix="plan-", dir=a.work_dir)
    try:
        proc = subprocess.run([perf, "record", "-F", "500", "--call-graph", "dwarf,32768",
                               "-o", data, "--", a.pdc_run, model,
                               "-o", os.path.join(out, "plan"), *flags],
                              capture_output=True, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if proc.returncode != 0:
        print(f"perf record failed:\n{proc.stderr}", file=sys.stderr)
        return None

    def report(*args):
        text = subprocess.run([perf, "report", "-i", data, "--no-inline", "--stdio",
                               "-g", "none", "-t", "|", *args],
                              capture_output=True, text=True).stdout
        rows = []
        for line in text.splitlines():
            cells = [c.strip() for c in line.split("|")]
            if line.startswith("#") or len(cells) < 2:
                continue
            try:
                rows.append((float(cells[0].rstrip("%")), *cells[1:]))
            except ValueError:
                pass
        return rows

    inclusive = {re.sub(r"^\[[.k]\]\s*", "", row[-1]): row[0]
                 for row in report("--children", "--sort", "sym")}
    shares = {label: inclusive.get(sym, 0.0) for label, sym in KEY_FRAMES}
    shares["linking the executable (c++, collect2, ld processes)"] = sum(
        row[0] for row in report("--no-children", "--sort", "comm")
        if row[1] in LINKER_COMMS)
    hottest = [(row[0], row[1], re.sub(r"^\[[.k]\]\s*", "", row[2]))
               for row in report("--no-children", "--sort", "dso,sym")]
    return shares, hottest


# ----------------------------------------------------------------------------
# The stage's LLVM IR through llc
# ----------------------------------------------------------------------------

def llc_profile(a, model, flags):
    """pdc --emit=llvm of the d=1 plan, compiled by llc at -O2 (what pdc's
    TargetMachine runs: CodeGenOptLevel::Default) and -O0: {IR lines,
    calls, largest function's instructions, O2 s, greedy RA s, O0 s}."""
    proc = subprocess.run([a.pdc_run, model, *flags, "--emit=llvm"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    ll = os.path.join(a.work_dir, "stage.ll")
    with open(ll, "w") as f:
        f.write(proc.stdout)
    sizes, current = [], None
    for line in proc.stdout.splitlines():
        if line.startswith("define "):
            current = 0
        elif current is not None and line.startswith("}"):
            sizes.append(current)
            current = None
        elif current is not None:
            current += 1
    result = dict(lines=proc.stdout.count("\n"), calls=proc.stdout.count(" call "),
                  largest=max(sizes, default=0))
    for level in ("O2", "O0"):
        for _ in range(a.repeat):
            start = time.perf_counter()
            run = subprocess.run([a.llc, f"-{level}", "-relocation-model=pic",
                                  "-filetype=obj", ll, "-o", os.devnull, "-time-passes"],
                                 capture_output=True, text=True)
            wall = time.perf_counter() - start
            if run.returncode != 0:
                return None
            result[level] = min(wall, result.get(level, wall))
            if level == "O2":
                greedy = sum(float(m.group(1)) for m in re.finditer(
                    r"^\s+(?:\S+ \(\s*[\d.]+%\)\s+){3}(\S+) \(\s*[\d.]+%\)\s+"
                    r"Greedy Register Allocator", run.stderr, re.M))
                result["greedy"] = min(greedy, result.get("greedy", greedy))
    return result


# ----------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def git_head():
    try:
        head = subprocess.run(["git", "-C", SRC_ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", SRC_ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" with uncommitted changes" if dirty else "")
    except OSError:
        return "unknown"


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def fmt_params(n):
    return f"{n / 1e6:.2f}M" if n >= 1e5 else f"{n / 1e3:.1f}K"


def build_report(a, rows, configs, results, timings, perf, llc, load):
    """The markdown text (also printed)."""
    names = [n for n, _ in configs]
    depths = [r["layers"] for r in rows]
    deepest, target = max(depths), a.target_layers
    out = []
    add = out.append
    add("# pdc compile time on GPT-2-XL-shaped graphs")
    add("")
    add(f"Regenerated by `/usr/bin/python3 bench/compile_time.py"
        f"{(' ' + ' '.join(a.argv)) if a.argv else ''}`.")
    add("")
    add(f"The model is the GPT of `examples/gpt/export.py` "
        f"(`{' '.join(export_args(a, target))}`; torch 1.13's exporter in training mode, "
        "weights included): token and position embeddings, pre-LN blocks with a fused qkv "
        "Linear, causal self-attention with the registered tril mask, a 4x erf-GELU MLP, "
        "final LayerNorm, LM head tied to the token embedding, cross-entropy loss. GPT-2 "
        f"XL's depth of 48 layers, at hidden size {a.embd} ({a.heads} heads, sequence "
        f"{a.seq}, vocabulary {a.vocab}, batch {a.batch}) so that the files stay small; "
        "the graph per layer is the one of GPT-2 XL's hidden size 1600, so the compiler's "
        "work per layer (ops, passes, generated code) is the same.")
    add("")
    add("Each configuration times `pdc gptL.onnx -o DIR FLAGS` end to end, wall clock, best "
        f"of {a.repeat}: import, autodiff and fusion, the plan search, partitioning, "
        "outlining and buffer allocation, lowering, LLVM code generation of every stage "
        "and linking it with the runtime (`c++`, `ld`):")
    add("")
    for name, flags in configs:
        add(f"- {name}: `{' '.join(flags)}`")
    add("")
    add(f"Machine: {cpu_model()}, {os.cpu_count()} cores; pdc at commit {load['git']} "
        f"(LLVM 19, optimized build; {load['binary']}). The machine was shared with "
        "concurrent builds and tests of pdc, so the times may be pessimistic: load average "
        f"{load['start']} "
        f"(1, 5, 15 min) at the start, {load['end']} at the end. CPU seconds (user + system "
        "of pdc and the linker it runs) are less sensitive to that load than wall clock "
        "and are given too.")
    add("")
    summary_at = len(out)
    add("## Seconds by depth")
    add("")
    head = ["layers", "parameters", "ONNX nodes", "file"]
    for n in names:
        head += [f"{n} s", f"{n} ms/layer"]
    add("| " + " | ".join(head) + " |")
    add("|" + "---|" * len(head))
    for r in rows:
        cells = [str(r["layers"]), fmt_params(r["params"]), str(r["nodes"]),
                 fmt_bytes(r["bytes"])]
        for n in names:
            s = results[n][r["layers"]]["wall"]
            cells += [f"**{s:.2f}**" if r["layers"] == target else f"{s:.2f}",
                      f"{1e3 * s / r['layers']:.0f}"]
        add("| " + " | ".join(cells) + " |")
    add("")
    add("CPU seconds (user + system, of the run with the best wall clock), and the plan "
        "the search chose:")
    add("")
    head = (["layers"] + [f"{n} CPU s" for n in names]
            + [f"{names[-1]}: plan (candidates)"])
    add("| " + " | ".join(head) + " |")
    add("|" + "---|" * len(head))
    for r in rows:
        res = [results[n][r["layers"]] for n in names]
        cells = [str(r["layers"])] + [f"{x['cpu']:.2f}" for x in res]
        cells.append(f"{res[-1]['plan']} ({res[-1]['candidates']})")
        add("| " + " | ".join(cells) + " |")
    add("")
    add("## Linear in depth?")
    add("")
    add("Least squares seconds = a + b * layers (wall clock) over the depths up to "
        f"{target} layers and over all of them, its R^2, the exponent k of seconds ~ layers^k (1 is linear, 2 quadratic; a fixed cost a > 0 pulls "
        "it below 1 at small depths), and the marginal cost per added layer between "
        "consecutive depths, (t(L2) - t(L1)) / (L2 - L1), which stays flat when the time is "
        "linear in depth and grows when it is not:")
    add("")
    steps = list(zip(depths, depths[1:]))
    ranges = [[d for d in depths if d <= target], depths]
    ranges = [r for i, r in enumerate(ranges) if len(r) >= 2 and r not in ranges[:i]]
    add("| configuration | layers fitted | a (s) | b (ms/layer) | R^2 | k wall | k CPU |")
    add("|---|---|---|---|---|---|---|")
    fits = {}
    for n in names:
        for rng in ranges:
            walls = [results[n][d]["wall"] for d in rng]
            cpus = [results[n][d]["cpu"] for d in rng]
            a0, b, r2 = linear_fit(rng, walls)
            fits[(n, tuple(rng))] = (a0, b, r2)
            add(f"| {n} | {rng[0]}-{rng[-1]} | {a0:.2f} | {1e3 * b:.1f} | {r2:.4f} | "
                f"{exponent(rng, walls):.2f} | {exponent(rng, cpus):.2f} |")
    add("")
    add("| configuration | " + " | ".join(f"ms/layer {l1}-{l2}" for l1, l2 in steps)
        + f" | {target} layers (s) | under {a.budget:g} s |")
    add("|---|" + "---|" * len(steps) + "---|---|")
    verdicts = {}
    for n in names:
        marg = [1e3 * (results[n][l2]["wall"] - results[n][l1]["wall"]) / (l2 - l1)
                for l1, l2 in steps]
        t = results[n].get(target, {}).get("wall")
        verdicts[n] = t
        add(f"| {n} | " + " | ".join(f"{m:.0f}" for m in marg)
            + f" | {'' if t is None else f'{t:.2f}'} | "
            f"{'' if t is None else ('yes' if t < a.budget else 'NO')} |")
    add("")
    known = [t for t in verdicts.values() if t is not None]
    if known:
        worst = max(known)
        add(f"**{target} layers: at most {worst:.2f} s** over these configurations, "
            f"{'under' if worst < a.budget else 'NOT under'} the {a.budget:g} s of the "
            f"performance issue, on a loaded {os.cpu_count()}-core machine.")
        add("")
    add(f"## Where the time goes at {target} layers (`--mlir-timing`)")
    add("")
    add(f"pdc's phases (wall seconds, each phase's least over {a.repeat} runs with "
        "`--mlir-timing`, separate from the timed runs above; nested phases are indented "
        "and included in their parent; `code generation` is lowering to the LLVM dialect, "
        "translation to LLVM IR, LLVM's code generation of the stage objects and linking "
        "them):")
    add("")
    tl = target if all(target in timings[n] for n in names) else deepest
    add("| phase | " + " | ".join(names) + " |")
    add("|---|" + "---|" * len(names))
    order = []
    for n in names:
        for path, _ in timings[n][tl]:
            if path not in order:
                order.append(path)
    for path in order:
        parts = path.split("/")
        label = "&nbsp;" * 4 * (len(parts) - 1) + parts[-1]
        cells = []
        for n in names:
            t = dict(timings[n][tl]).get(path)
            cells.append("" if t is None else f"{t:.3f}")
        add(f"| {label} | " + " | ".join(cells) + " |")
    add("")
    add("Top phases (innermost):")
    add("")
    for n in names:
        tops = top_leaves(timings[n][tl])
        total = sum(t for p, t in timings[n][tl] if "/" not in p)
        add(f"- {n}: " + ", ".join(f"{p.split('/')[-1]} {t:.3f} s ({100 * t / total:.0f}%)"
                                   for p, t in tops[:4]))
    add("")
    add("## Growth of each phase with depth")
    add("")
    add("Seconds of each phase above 2% of the deepest compile at every depth, and the "
        "exponent k of seconds ~ layers^k fitted over the depths from "
        f"{a.target_layers} layers up (over all depths when fewer than two are that deep: "
        "below it fixed costs and timer noise dominate the small phases); phases with "
        f"k > {a.superlinear:g} are flagged superlinear.")
    add("")
    big = [d for d in depths if d >= a.target_layers]
    kdepths = big if len(big) >= 2 else depths
    add("| configuration | phase | " + " | ".join(f"{d} layers (s)" for d in depths)
        + " | k | |")
    add("|---|---|" + "---|" * len(depths) + "---|---|")
    flagged = []
    for n in names:
        total = sum(t for p, t in timings[n][deepest] if "/" not in p)
        for path, t_deep in timings[n][deepest]:
            series = [dict(timings[n][d]).get(path) for d in depths]
            if any(x is None for x in series) or t_deep < 0.02 * total:
                continue
            k = exponent(kdepths, [dict(timings[n][d])[path] for d in kdepths])
            flag = "superlinear" if k > a.superlinear else ""
            if flag:
                flagged.append((n, path, k))
            add(f"| {n} | {path} | " + " | ".join(f"{x:.3f}" for x in series)
                + f" | {k:.2f} | {flag} |")
    add("")
    if flagged:
        add("Superlinear: " + "; ".join(f"{n} {p} (k = {k:.2f})" for n, p, k in flagged)
            + ".")
    else:
        add("No phase above 2% of the compile grows faster than linearly with depth "
            f"(every k <= {a.superlinear:g}).")
    add("")
    if llc:
        add("## The stage's LLVM IR through llc")
        add("")
        add("`pdc gptL.onnx --stages 1 --emit=llvm` (the d=1 stage: `pd_stage_forward` and "
            "`pd_stage_backward` are each one straight-line function, a runtime call per op), "
            f"compiled to an object by `{a.llc}` at `-O2` (the pipeline of pdc's own "
            "`llvm::TargetMachine`, created at the default `CodeGenOptLevel` in "
            "`mlir::pd::emitObjectFile`, lib/Codegen/EmitObject.cpp) with `-time-passes`, and "
            f"at `-O0` (the fast register allocator), wall seconds, best of {a.repeat} "
            "(the allocator's own time too):")
        add("")
        add("| layers | IR lines | calls | largest function (lines) | llc -O2 s | "
            "of which Greedy Register Allocator s | llc -O0 s |")
        add("|---|---|---|---|---|---|---|")
        for d in depths:
            x = llc.get(d)
            if x:
                add(f"| {d} | {x['lines']} | {x['calls']} | {x['largest']} | {x['O2']:.2f} | "
                    f"{x['greedy']:.2f} | {x['O0']:.2f} |")
        add("")
        ds = [d for d in depths if llc.get(d)]
        if len(ds) >= 2:
            kd = [d for d in ds if d >= a.target_layers]
            kd = kd if len(kd) >= 2 else ds
            add(f"Exponents k over {', '.join(map(str, kd))} layers: llc -O2 "
                f"{exponent(kd, [llc[d]['O2'] for d in kd]):.2f}, greedy register allocation "
                f"{exponent(kd, [llc[d]['greedy'] for d in kd]):.2f}, llc -O0 "
                f"{exponent(kd, [llc[d]['O0'] for d in kd]):.2f}.")
            add("")
    if perf:
        add("## CPU profile (`perf record --call-graph dwarf`, d=1)")
        add("")
        add("Inclusive share of the samples of one `--stages 1` compile under each frame "
            "(nested rows are part of the row above them):")
        add("")
        pd = sorted(perf)
        add("| frame | " + " | ".join(f"{d} layers" for d in pd) + " |")
        add("|---|" + "---|" * len(pd) + "")
        labels = list(perf[pd[0]][0])
        for label in labels:
            name = ("&nbsp;" * 4 + label.strip()) if label.startswith("  ") else label
            add(f"| {name} | " + " | ".join(f"{perf[d][0].get(label, 0.0):.1f}%" for d in pd)
                + " |")
        add("")
        for d in pd:
            add(f"Hottest functions (self time) at {d} layers:")
            add("")
            add("| share | library | function |")
            add("|---|---|---|")
            for share, dso, sym in perf[d][1][:12]:
                add(f"| {share:.2f}% | {dso} | `{sym[:110]}` |")
            add("")
    out[summary_at:summary_at] = summary(a, names, depths, results, timings, fits, llc,
                                         perf, flagged)
    return "\n".join(out)


def summary(a, names, depths, results, timings, fits, llc, perf, flagged):
    """The headline paragraphs: the target depth against the budget, the fits,
    and what grows faster than linearly (from the measurements below)."""
    target, deepest = a.target_layers, max(depths)
    lines = ["## Summary", ""]
    known = {n: results[n][target]["wall"] for n in names if target in results[n]}
    if known:
        worst = max(known.values())
        lines.append(
            f"- **{target} layers compile in " + ", ".join(
                f"{t:.2f} s ({n})" for n, t in known.items())
            + f"**: {'under' if worst < a.budget else 'NOT under'} {a.budget:g} s, "
            f"on a {os.cpu_count()}-core machine shared with other work.")
    small = [d for d in depths if d <= target]
    if len(small) >= 2:
        fit = {n: fits[(n, tuple(small))] for n in names}
        steps = list(zip(depths, depths[1:]))
        d1 = names[0]
        marg = [1e3 * (results[d1][l2]["wall"] - results[d1][l1]["wall"]) / (l2 - l1)
                for l1, l2 in steps]
        lines.append(
            f"- Up to {target} layers a straight line fits: " + "; ".join(
                f"{n}: {fit[n][0]:.2f} s + {1e3 * fit[n][1]:.1f} ms/layer, "
                f"R^2 {fit[n][2]:.3f}" for n in names)
            + ". The fixed cost is mostly linking each stage executable with the runtime "
            "(`c++`/`ld`, a few tenths of a second per stage: it grows with the number of "
            "stages, not of layers). But the cost of an added layer is not constant: for "
            f"{d1} it is " + ", ".join(f"{m:.0f}" for m in marg) + " ms/layer between "
            + ", ".join(f"{l1} and {l2}" for l1, l2 in steps) + " layers.")
    if llc and all(llc.get(d) for d in depths) and deepest > target:
        kd = [d for d in depths if d >= target]
        k_o2 = exponent(kd, [llc[d]["O2"] for d in kd])
        k_ra = exponent(kd, [llc[d]["greedy"] for d in kd])
        k_o0 = exponent(kd, [llc[d]["O0"] for d in kd])
        if k_o2 > a.superlinear:
            d1 = names[0]
            lines.append(
                f"- **Not linear beyond {target} layers.** {d1} takes "
                f"{results[d1][target]['wall']:.2f} s at {target} layers and "
                f"{results[d1][deepest]['wall']:.2f} s at {deepest} "
                f"({deepest // target}x the layers). The superlinear part is LLVM's "
                "code generation of the stage object, `mlir::pd::emitObjectFile` "
                "(lib/Codegen/EmitObject.cpp), and in it the greedy register allocator "
                "(`llvm::RegAllocBase::allocatePhysRegs`: "
                "`llvm::VirtRegAuxInfo::calculateSpillWeightAndHint`/`weightCalcHelper`/"
                "`isRematerializable`, `llvm::LiveIntervals::checkRegMaskInterference`, "
                f"`llvm::LiveRange::find`): llc -O2 on the stage's IR grows as "
                f"layers^{k_o2:.2f} from {target} layers up, its Greedy Register "
                f"Allocator as layers^{k_ra:.2f} ({llc[target]['greedy']:.2f} s at "
                f"{target}, {llc[deepest]['greedy']:.2f} s at {deepest}). Each stage "
                "is two straight-line functions (`pd_stage_forward`, `pd_stage_backward`) "
                f"of one runtime call per op ({llc[deepest]['largest']} lines at "
                f"{deepest} layers), and `emitObjectFile` creates its "
                "`llvm::TargetMachine` at the default `CodeGenOptLevel` (greedy "
                "allocation); the same IR at -O0 (fast allocator) grows as "
                f"layers^{k_o0:.2f} and takes {llc[deepest]['O0']:.2f} s instead of "
                f"{llc[deepest]['O2']:.2f} s at {deepest} layers. With d stages each "
                "stage's functions hold L/d layers, so the quadratic term is d times "
                "smaller: " + ", ".join(f"{n} {results[n][deepest]['wall']:.2f} s"
                                        for n in names[1:])
                + f" at {deepest} layers.")
    if perf and len(perf) >= 2:
        lo, hi = min(perf), max(perf)
        key = "  of which mlir::SymbolTable::lookupSymbolIn"
        s_lo, s_hi = perf[lo][0].get(key, 0.0), perf[hi][0].get(key, 0.0)
        if s_hi > 1.2 * s_lo and s_hi >= 2.0:
            lines.append(
                "- Also superlinear, in pdc's own lowering: `mlir::SymbolTable::lookupSymbolIn` "
                f"under `LowerToRuntimePass` grows from {s_lo:.1f}% of the d=1 compile at "
                f"{lo} layers to {s_hi:.1f}% at {hi}. `ModuleOp::lookupSymbol` without a "
                "cached `SymbolTable` scans the stage module's body (every `pd.param`, "
                "hence `mlir::pd::ParamOp::getInherentAttr` among the hottest functions, "
                "every `__pd_desc_N` global and runtime declaration) once per runtime call "
                "(`mlir::pd::RuntimeCallBuilder::call`) and once per descriptor name "
                "(`CpuRuntimeTarget::getConstantData` from "
                "`RuntimeCallBuilder::descriptor`), both in passes/RuntimeLowering.cpp: "
                "quadratic in the number of ops.")
    small_flags = [(n, p, k) for n, p, k in flagged
                   if "code generation" not in p and p != "compile"]
    if small_flags:
        most = max(dict(timings[n][deepest])[p] for n, p, _ in small_flags)
        lines.append(f"- Smaller phases that grow faster than layers^{a.superlinear:g} from "
                     f"{target} layers up, but take at most {most:.2f} s at {deepest} "
                     "layers: " + ", ".join(f"{p} ({n}, k = {k:.2f})"
                                            for n, p, k in small_flags) + ".")
    lines.append("")
    return lines


def top_leaves(phases):
    """Phases with no nested phase, longest first."""
    paths = [p for p, _ in phases]
    leaves = [(p, t) for p, t in phases
              if not any(q.startswith(p + "/") for q in paths)]
    return sorted(leaves, key=lambda x: -x[1])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pdc", default=os.path.join(SRC_ROOT, "build", "bin", "pdc"))
    p.add_argument("--layers", default="6,12,24,48", help="depths to compile")
    p.add_argument("--target-layers", type=int, default=48,
                   help="the depth that should compile under --budget (GPT-2 XL: 48)")
    p.add_argument("--embd", type=int, default=64, help="hidden size")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--batch", type=int, default=4, help="exported (micro)batch")
    p.add_argument("--opset", type=int, default=13)
    p.add_argument("--optimizer", default="adam", choices=benchlib.OPTIMIZERS)
    p.add_argument("--fixed-stages", type=int, default=4,
                   help="depth of the fixed-placement configuration")
    p.add_argument("--microbatches", type=int, default=4,
                   help="m of the fixed-placement configuration")
    p.add_argument("--devices", type=int, default=4,
                   help="devices of the search configuration (global batch: batch x devices)")
    p.add_argument("--repeat", type=int, default=3, help="runs per point (best is kept)")
    p.add_argument("--budget", type=float, default=10.0,
                   help="seconds the --target-layers compile should stay under")
    p.add_argument("--superlinear", type=float, default=1.15,
                   help="exponent above which a phase is flagged superlinear")
    p.add_argument("--perf", action="store_true",
                   help="perf record the d=1 compile at --target-layers and the deepest")
    p.add_argument("--llc", default=shutil.which("llc-19") or "/usr/lib/llvm-19/bin/llc",
                   help="llc to time the stage's LLVM IR with ('' skips it)")
    p.add_argument("--no-snapshot", action="store_true",
                   help="run --pdc in place instead of a copy in the work directory")
    p.add_argument("--work-dir", help="keep models (reused) and the pdc copy here")
    p.add_argument("--write-doc", action="store_true", help=f"write {DOC}")
    a = p.parse_args()
    a.argv = [x for i, x in enumerate(sys.argv[1:])   # the command, less --work-dir
              if not x.startswith("--work-dir") and sys.argv[i] != "--work-dir"]
    benchlib.make_work_dir(a, "compile-time")
    load = {"start": ", ".join(f"{x:.2f}" for x in os.getloadavg()), "git": git_head(),
            "binary": "build/bin/pdc of " + time.strftime(
                "%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(a.pdc)))}
    a.pdc_run = a.pdc if a.no_snapshot else snapshot(a)
    depths = sorted(int(x) for x in a.layers.split(","))
    configs = configurations(a)

    rows = []
    for d in depths:
        path, params, nodes, inits, size = export(a, d)
        rows.append(dict(layers=d, path=path, params=params, nodes=nodes, bytes=size))
        print(f"{os.path.basename(path)}: {params} parameters, {nodes} nodes, "
              f"{inits} initializers, {fmt_bytes(size)}", flush=True)

    results = {n: {} for n, _ in configs}
    timings = {n: {} for n, _ in configs}
    for r in rows:
        for name, flags in configs:
            runs = [run_pdc(a, r["path"], flags) for _ in range(a.repeat)]
            wall, cpu, log = min(runs, key=lambda x: x[0])
            m = CHOSE_RE.search(log)
            timings[name][r["layers"]] = phase_minima(
                [parse_timing(run_pdc(a, r["path"], flags, ["--mlir-timing"])[2])
                 for _ in range(a.repeat)])
            results[name][r["layers"]] = dict(
                wall=wall, cpu=cpu, plan=m.group(1) if m else "?",
                candidates=m.group(2) if m else "?")
            print(f"L={r['layers']:3d} {name:20s} {wall:6.2f} s wall "
                  f"(runs {', '.join(f'{x[0]:.2f}' for x in runs)}), {cpu:.2f} s CPU",
                  flush=True)

    llc = {}
    if a.llc and os.path.exists(a.llc):
        for r in rows:
            llc[r["layers"]] = llc_profile(a, r["path"], configs[0][1])
            print(f"L={r['layers']:3d} llc: {llc[r['layers']]}", flush=True)
    perf = {}
    if a.perf:
        for r in rows:
            if r["layers"] in (a.target_layers, max(depths)):
                prof = perf_profile(a, r["path"], configs[0][1])
                if prof:
                    perf[r["layers"]] = prof
    load["end"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    text = build_report(a, rows, configs, results, timings, perf, llc, load)
    print()
    print(text)
    if a.write_doc:
        with open(DOC, "w") as f:
            f.write(text + "\n")
        print(f"\nwrote {DOC}")
    print(f"work dir: {a.work_dir}")


if __name__ == "__main__":
    main()
