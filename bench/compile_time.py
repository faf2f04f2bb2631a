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
import os
import shutil
import sys
import time

try:
    import onnx  # noqa: F401  (else re-run under /usr/bin/python3)
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from compile_models import export  # noqa: E402
from compile_report import DOC, SRC_ROOT, build_report, fmt_bytes, git_head  # noqa: E402
from compile_timing import (CHOSE_RE, configurations, llc_profile,  # noqa: E402
                            parse_timing, perf_profile, phase_minima, run_pdc,
                            snapshot)


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
