#!/usr/bin/env python3
"""The paper's experiments at cluster scale, on pdc's planner and simulator.

Plans the paper's GPT shapes (bench/gpt_shapes.py: seq 512, GPT-2
vocabulary, no weight data) for 64 V100-16GB in 8 servers (`--device-spec
v100`), with pdc --plan-only, and reads the predictions from plan.json:

  throughput  2BW vs PipeDream-Flush vs GPipe at global batches 64..2048
              (GPT 2.2B and 3.8B; pdc chooses d, w, b and recomputation
              for each schedule)
  largest     the largest GPT (hidden 1024, 16 heads) whose plan fits
              16 GB per GPU at each pipeline depth d = 1..64
  speed       pdc's own planning time for the 2240-layer, 28.3B GPT on 64
              V100s, and how it grows with the layer count

Writes the tables to stdout, and with --write-doc to docs/paper-scale.md.
Not a test: the figures are predictions of the simulator, compared with the
paper's measurements in the doc.

    /usr/bin/python3 bench/paper_scale.py --pdc build/bin/pdc --write-doc
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt_shapes  # noqa: E402
from hostinfo import cpu_model  # noqa: E402

CLUSTER = ["--devices", "64", "--devices-per-node", "8", "--device-spec", "v100",
           "--optimizer", "adam"]


def plan(pdc, model, flags, work):
    """Runs pdc --plan-only; returns (plan.json or None, seconds, stderr)."""
    out = os.path.join(work, "plan")
    cmd = [pdc, model, "-o", out, "--plan-only"] + CLUSTER + flags
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return None, seconds, proc.stderr.strip()
    with open(os.path.join(out, "plan.json")) as f:
        return json.load(f), seconds, proc.stderr.strip()


def describe(p):
    """"d=8 w=8 b=2 m=32 recompute 3/8" of a plan.json."""
    rec = sum(1 for r in p["recompute"] if r == "full")
    return (f"d={p['stages']} w={p['replicas']} b={p['microbatch']} "
            f"m={p['microbatches']} recompute {rec}/{p['stages']}")


def throughput(pdc, work, batches):
    """Samples/s per schedule and global batch for the 2.2B and 3.8B GPTs."""
    rows = []
    for name in ("gpt-2.2b", "gpt-3.8b"):
        layers, hidden, heads = gpt_shapes.PAPER_MODELS[name]
        model = os.path.join(work, name + ".onnx")
        gpt_shapes.write(model, layers, hidden, heads, batch=4)
        for batch in batches:
            row = {"model": name, "batch": batch}
            for schedule in ("2bw", "flush", "gpipe"):
                p, _, err = plan(pdc, model, ["--global-batch", str(batch),
                                              "--schedule", schedule], work)
                row[schedule] = p["predicted"]["samples_per_second"] if p else None
                row[schedule + "_plan"] = describe(p) if p else err.splitlines()[-1]
            rows.append(row)
            print(f"  {name} B={batch}: " + ", ".join(
                f"{s} {row[s]:.1f}/s ({row[s + '_plan']})" if row[s] else f"{s} -"
                for s in ("2bw", "flush", "gpipe")), flush=True)
    return rows


def fits(pdc, work, layers, depth):
    """Whether pdc finds a 2bw plan of `depth` stages for the model."""
    model = os.path.join(work, "largest.onnx")
    params = gpt_shapes.write(model, layers, 1024, 16, batch=4)
    p, _, _ = plan(pdc, model, ["--stages", str(depth), "--schedule", "2bw",
                                "--global-batch", "512"], work)
    return p is not None, params


def largest(pdc, work, depths):
    """The largest layer count (hidden 1024) that fits at each depth."""
    rows = []
    for depth in depths:
        lo, hi = 0, 64  # lo fits (0: none found yet), hi does not
        while True:
            ok, _ = fits(pdc, work, hi, depth)
            if not ok:
                break
            lo, hi = hi, hi * 2
        while hi - lo > max(1, lo // 50):
            mid = (lo + hi) // 2
            ok, _ = fits(pdc, work, mid, depth)
            lo, hi = (mid, hi) if ok else (lo, mid)
        params = fits(pdc, work, lo, depth)[1] if lo else 0
        rows.append({"depth": depth, "layers": lo, "params": params})
        print(f"  d={depth}: {lo} layers, {params / 1e9:.2f}B parameters",
              flush=True)
    return rows


def speed(pdc, work, layer_counts):
    """pdc's planning time for the paper's 2240-layer GPT and shallower ones."""
    rows = []
    for layers in layer_counts:
        model = os.path.join(work, f"gpt{layers}.onnx")
        params = gpt_shapes.write(model, layers, 1024, 16)
        times = []
        for _ in range(3):
            p, seconds, err = plan(pdc, model, ["--global-batch", "512"], work)
            times.append(seconds)
        rows.append({"layers": layers, "params": params, "seconds": min(times),
                     "plan": describe(p) if p else err.splitlines()[-1],
                     "considered": p["search"]["considered"] if p else 0})
        print(f"  {layers} layers: {min(times):.2f} s ({rows[-1]['plan']})", flush=True)
    return rows


PAPER_RATIOS = "2BW over Flush about 1.6x at small batch, falling toward 1.15x at 2048; over GPipe up to 3.2x"
PAPER_LARGEST = {1: 1, 2: 2, 4: 4, 8: 5, 16: 10, 32: 15, 64: 28}

LARGEST_NOTE = (
    "the size grows about linearly with depth, as in the paper. At shallow "
    "depth pdc fits less: it keeps fp32 weights, gradients and Adam moments "
    "(20 bytes per parameter under 2bw, two weight versions) where the paper "
    "trained in mixed precision. At d = 32 and 64 it fits more: with full "
    "recomputation and b = 1 a stage's activations are small next to its "
    "weights, and the planner packs every byte; the paper's sizes there were "
    "limited by its fixed configurations, not by a search.")


def throughput_summary(tp):
    """One sentence comparing the ratios with the paper's."""
    parts = []
    for name in sorted({r["model"] for r in tp}):
        rows = [r for r in tp if r["model"] == name and r["2bw"]]
        if not rows:
            continue
        first, last = rows[0], rows[-1]
        flush = [r["2bw"] / r["flush"] for r in rows if r["flush"]]
        gpipe = [r["2bw"] / r["gpipe"] for r in rows if r["gpipe"]]
        parts.append(
            f"{name}: 2BW / Flush {first['2bw'] / first['flush']:.2f}x at batch "
            f"{first['batch']} falling to {last['2bw'] / last['flush']:.2f}x at "
            f"{last['batch']} (range {min(flush):.2f}-{max(flush):.2f}x), "
            f"2BW / GPipe up to {max(gpipe):.2f}x")
    return ("; ".join(parts) + ". The paper: 1.6x falling to 1.15x, and up to "
            "3.2x. Where 2BW's second weight version does not fit beside fp32 "
            "Adam state at the depth Flush uses, pdc picks a deeper 2BW "
            "pipeline, and at large batches Flush's bubble shrinks below that "
            "cost (the 3.8B rows); GPipe recomputes to fit its m stashed "
            "microbatches, which the paper's 3.2x also reflects.")


def markdown(tp, lg, sp, machine):
    out = ["# The paper's experiments at cluster scale",
           "",
           "Regenerated by `/usr/bin/python3 bench/paper_scale.py --pdc build/bin/pdc "
           "--write-doc`: pdc plans the paper's GPT shapes (`bench/gpt_shapes.py`; "
           "seq 512, GPT-2 vocabulary, no weight data) with `--plan-only` for 64 "
           "V100-16GB in 8 servers (`--device-spec v100 --devices 64 "
           "--devices-per-node 8 --optimizer adam`) and reports the simulator's "
           "predictions (docs/planner.md). pdc trains in fp32 (4-byte weights, "
           "gradients and Adam moments); the paper trained in mixed precision. "
           f"Planning times measured on {machine}.",
           "",
           "## Throughput: 2BW, PipeDream-Flush and GPipe",
           "",
           "Samples/s predicted for the plan pdc chooses per schedule (depth, "
           "width, microbatch and recomputation searched); the paper: "
           f"{PAPER_RATIOS}.",
           "",
           "| model | global batch | 2BW | Flush | GPipe | 2BW / Flush | 2BW / GPipe | 2BW plan |",
           "|---|---|---|---|---|---|---|---|"]
    for r in tp:
        def f(x):
            return f"{x:.1f}" if x else "no plan"

        def ratio(a, b):
            return f"{a / b:.2f}x" if a and b else "-"
        out.append(f"| {r['model']} | {r['batch']} | {f(r['2bw'])} | {f(r['flush'])} | "
                   f"{f(r['gpipe'])} | {ratio(r['2bw'], r['flush'])} | "
                   f"{ratio(r['2bw'], r['gpipe'])} | {r['2bw_plan']} |")
    out += ["", "How close: " + throughput_summary(tp)]
    out += ["",
            "## The largest GPT that fits, by pipeline depth",
            "",
            "Layers of hidden size 1024 (16 heads) added until no 2BW plan of that "
            "depth fits 16 GB per GPU (global batch 512; pdc chooses b and "
            "recomputation).",
            "",
            "| depth d | layers | parameters | paper (billions) | pdc / paper |",
            "|---|---|---|---|---|"]
    for r in lg:
        paper = PAPER_LARGEST.get(r["depth"])
        ratio = f"{r['params'] / 1e9 / paper:.2f}" if paper else "-"
        out.append(f"| {r['depth']} | {r['layers']} | {r['params'] / 1e9:.2f}B | "
                   f"{paper or '-'} | {ratio} |")
    out += ["", "How close: " + LARGEST_NOTE]
    out += ["",
            "## Planning time",
            "",
            "`pdc gptL.onnx -o plan --plan-only --devices 64 --devices-per-node 8 "
            "--device-spec v100 --global-batch 512 --optimizer adam` (best of 3), "
            "hidden 1024: import, autodiff, the search over every d x w = 64, "
            "microbatch size, schedule and recomputation, then the chosen plan "
            "compiled through its buffer plan.",
            "",
            "| layers | parameters | seconds | candidates | chosen plan |",
            "|---|---|---|---|---|"]
    for r in sp:
        out.append(f"| {r['layers']} | {r['params'] / 1e9:.2f}B | {r['seconds']:.2f} | "
                   f"{r['considered']} | {r['plan']} |")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--pdc", default=os.path.join(here, "..", "build", "bin", "pdc"))
    p.add_argument("--write-doc", action="store_true",
                   help="write docs/paper-scale.md")
    p.add_argument("--batches", default="64,128,256,512,1024,2048")
    p.add_argument("--depths", default="1,2,4,8,16,32,64")
    p.add_argument("--layers", default="280,560,1120,2240")
    a = p.parse_args()
    machine = f"{cpu_model(platform.processor() or 'unknown CPU')}, {os.cpu_count()} cores"
    with tempfile.TemporaryDirectory(prefix="pdc-paper-") as work:
        print("throughput:", flush=True)
        tp = throughput(a.pdc, work, [int(x) for x in a.batches.split(",")])
        print("largest model by depth:", flush=True)
        lg = largest(a.pdc, work, [int(x) for x in a.depths.split(",")])
        print("planning time:", flush=True)
        sp = speed(a.pdc, work, [int(x) for x in a.layers.split(",")])
    text = markdown(tp, lg, sp, machine)
    print(text)
    if a.write_doc:
        with open(os.path.join(here, "..", "docs", "paper-scale.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
