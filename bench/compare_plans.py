#!/usr/bin/env python3
"""Two single-stage pdc plans of one model timed against each other.

A plan directory keeps its stage executables, which link the runtime
statically, so a plan compiled before a change is its baseline. On a quiet
machine alternating runs (--mode alternate: old, new, old, ...) compare
them; on a shared host whose load moves from minute to minute they do not
agree, and --mode concurrent (the default) runs both at once, one per core
(taskset), swapping the cores each round, so that both see the same
neighbours and each other (a d=2-like shared L3). Each run's figure is the
median of its logged ms/step from --first on; the summary gives in how
many rounds the new plan was faster and the mean ratio. Not a test; the
method is docs/CONTRIBUTING.md's ("Compare builds").

  /usr/bin/python3 bench/compare_plans.py OLD_PLAN NEW_PLAN --data DATA_DIR
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

STEP_MS_RE = re.compile(r"^step (\d+) loss \S+ ms/step (\S+)", re.M)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", help="baseline plan directory (its run script)")
    p.add_argument("new", help="plan directory to compare")
    p.add_argument("--data", help="data directory (default: --synthetic)")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--first", type=int, default=4,
                   help="first logged step in a run's median")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--mode", choices=["concurrent", "alternate"],
                   default="concurrent")
    return p.parse_args()


def command(plan, args, core):
    cmd = [os.path.join(plan, "run"), "--steps", str(args.steps)]
    cmd += ["--data", args.data] if args.data else ["--synthetic"]
    cmd += ["--", "--bind-to", "none"]
    return (["taskset", "-c", str(core)] if core is not None else []) + cmd


def median_ms(output, first, what):
    steps = [float(ms) for step, ms in STEP_MS_RE.findall(output)
             if int(step) >= first]
    if not steps:
        sys.exit(f"compare_plans: {what} logged no step from {first} on:\n"
                 f"{output[-2000:]}")
    return statistics.median(steps)


def run_round(args, r, env):
    """(old ms, new ms) of round r."""
    if args.mode == "alternate":
        out = []
        for plan in (args.old, args.new):
            proc = subprocess.run(command(plan, args, None), env=env,
                                  capture_output=True, text=True)
            out.append(proc.stdout + proc.stderr)
    else:
        cores = (r % 2, (r + 1) % 2)
        procs = [subprocess.Popen(command(plan, args, core), env=env,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
                 for plan, core in zip((args.old, args.new), cores)]
        out = [p.communicate()[0] for p in procs]
    return (median_ms(out[0], args.first, args.old),
            median_ms(out[1], args.first, args.new))


def main():
    args = parse_args()
    if args.mode == "concurrent" and (os.cpu_count() or 1) < 2:
        sys.exit("compare_plans: --mode concurrent needs two cores")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    print(f"| round | {args.old} ms/step | {args.new} ms/step | new / old |")
    print("|---|---|---|---|")
    ratios = []
    for r in range(1, args.rounds + 1):
        old, new = run_round(args, r, env)
        ratios.append(new / old)
        print(f"| {r} | {old:.1f} | {new:.1f} | {new / old:.3f} |", flush=True)
    faster = sum(1 for x in ratios if x < 1)
    print(f"\nnew faster in {faster} of {len(ratios)} rounds; mean new / old "
          f"{statistics.mean(ratios):.3f} ({args.mode})")


if __name__ == "__main__":
    main()
