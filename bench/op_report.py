#!/usr/bin/env python3
"""Where a pipelined run's time goes, op by op, against the planner's prices.

A plan compiled with `pdc --instrument-ops` times every op of its stage
executables; `PLAN/run --profile-ops TIMES.json` writes those times (each
rank's, after the first step). This report joins them with PLAN/ops.json
(which op each id is, and what the planner predicted for it):

    bench/op_report.py PLAN TIMES.json [--top N] [--json OUT]
                       [--against PLAN_B TIMES_B]

Per stage it prints the forward and backward time per microbatch, measured
and predicted; the shares of GEMMs (matmul, batched matmul, convolution),
transfers (send, receive: their waits included) and the other ops; the
optimizer update per step; and the costliest op kinds with their measured
and predicted ms per microbatch. With two stages or more, a last line gives
each stage's priced ops against their prices, the ratios `pdc --calibrate
TIMES.json` plans with (docs/planner.md, "Calibrating from a run"). With --against it also compares the run
op by op with another (a build against its baseline, d=2 against d=1):
each op kind's ms per call in both, and the ratio over all of them. Standard
library only, so any python3 runs it.
"""
import argparse
import collections
import json
import statistics
import sys

GEMM_OPS = ("pd.matmul", "pd.batch_matmul")
TRANSFER_OPS = ("pd.send", "pd.recv")


def kind(op):
    """gemm, transfer or other, by the pd op's name."""
    if op in GEMM_OPS or op.startswith("pd.conv"):
        return "gemm"
    if op in TRANSFER_OPS:
        return "transfer"
    return "other"


def load(plan_dir, times_path):
    """The op descriptions by id and the ranks' measured times."""
    try:
        with open(f"{plan_dir}/ops.json") as f:
            ops = {o["id"]: o for o in json.load(f)["ops"]}
    except FileNotFoundError:
        raise ValueError(f"{plan_dir}/ops.json not found: compile the plan "
                         "with pdc --instrument-ops")
    with open(times_path) as f:
        ranks = json.load(f)["ranks"]
    if not any(r["ops"] for r in ranks):
        raise ValueError(f"{times_path} has no op times: the stages that "
                         "wrote it were not compiled with pdc --instrument-ops")
    unknown = {t["id"] for r in ranks for t in r["ops"]} - set(ops)
    if unknown:
        raise ValueError(f"{times_path} times ops {sorted(unknown)[:5]} that "
                         f"{plan_dir}/ops.json does not list: another plan's run?")
    return ops, ranks


def stage_report(ops, rank):
    """One rank's per-microbatch times by function and kind, and by op."""
    per_mb = collections.defaultdict(float)      # (function, kind) -> s
    predicted = collections.defaultdict(float)   # function -> s
    priced = [0.0, 0.0]                          # measured, predicted
    by_op = collections.defaultdict(lambda: [0.0, 0, 0.0])
    for t in rank["ops"]:
        desc = ops.get(t["id"])
        if desc is None or t["calls"] <= 0:
            continue
        each = t["seconds"] / t["calls"]
        per_mb[(desc["function"], kind(desc["op"]))] += each
        if desc["predicted_seconds"] is not None:
            predicted[desc["function"]] += desc["predicted_seconds"]
        if desc["predicted_seconds"]:
            priced[0] += each
            priced[1] += desc["predicted_seconds"]
        row = by_op[(desc["op"], desc["function"])]
        row[0] += each
        row[1] += 1
        row[2] += desc["predicted_seconds"] or 0.0
    return per_mb, predicted, priced, by_op


def summarize(ops, ranks):
    """The report's numbers for every rank, as plain data."""
    out = []
    for rank in ranks:
        per_mb, predicted, priced, by_op = stage_report(ops, rank)
        total = sum(per_mb.values())
        kinds = collections.defaultdict(float)
        for (_, k), s in per_mb.items():
            kinds[k] += s
        functions = {}
        for fn in ("forward", "backward"):
            measured = sum(s for (f, _), s in per_mb.items() if f == fn)
            functions[fn] = {"measured_ms": measured * 1e3,
                             "predicted_ms": predicted[fn] * 1e3}
        top = sorted(by_op.items(), key=lambda kv: -kv[1][0])
        update = rank.get("update", {})
        calls = update.get("calls", 0)
        out.append({
            "rank": rank["rank"], "stage": rank["stage"],
            "replica": rank["replica"],
            "microbatch_ms": total * 1e3,
            "update_ms": update["seconds"] / calls * 1e3 if calls else None,
            "functions": functions,
            "share": {k: (s / total if total else 0.0) for k, s in kinds.items()},
            # Its priced ops' time over their prices (pdc --calibrate).
            "priced_ratio": priced[0] / priced[1] if priced[1] else None,
            "ops": [{"op": op, "function": fn, "ops_per_microbatch": n,
                     "ms_per_microbatch": s * 1e3,
                     "predicted_ms_per_microbatch": p * 1e3}
                    for (op, fn), (s, n, p) in top],
        })
    return out


def per_call(ops, ranks):
    """Seconds per call of each op kind (op, function, signature), averaged
    over its instances and ranks, and how many instances it has."""
    agg = collections.defaultdict(lambda: [0.0, 0])
    for rank in ranks:
        for t in rank["ops"]:
            desc = ops.get(t["id"])
            if desc is None or t["calls"] <= 0:
                continue
            row = agg[(desc["op"], desc["function"], desc["signature"])]
            row[0] += t["seconds"] / t["calls"]
            row[1] += 1
    return {k: (s / n, n) for k, (s, n) in agg.items()}


def compare(a, b, top, out=sys.stdout):
    """Ops both runs have, by signature: ms per call in each and b / a,
    the costliest (in a) first; then b / a over all of them, each weighted
    by its instances in a."""
    common = sorted((k for k in a if k in b), key=lambda k: -a[k][0] * a[k][1])
    print(f"  {'op':<28} {'fn':<8} {'n':>3} {'a ms':>8} {'b ms':>8} {'b/a':>6}  signature",
          file=out)
    for k in common[:top]:
        (ta, n), (tb, _) = a[k], b[k]
        print(f"  {k[0]:<28} {k[1]:<8} {n:>3} {ta * 1e3:>8.3f} {tb * 1e3:>8.3f} "
              f"{tb / ta:>6.3f}  {k[2][:70]}", file=out)
    wa = sum(a[k][0] * a[k][1] for k in common)
    wb = sum(b[k][0] * a[k][1] for k in common)
    print(f"  over the {len(common)} op kinds both ran: b / a = "
          f"{wb / wa if wa else float('nan'):.3f}", file=out)


def print_report(summary, top, out=sys.stdout):
    for r in summary:
        f, b = r["functions"]["forward"], r["functions"]["backward"]
        print(f"stage {r['stage']} replica {r['replica']} (rank {r['rank']}): "
              f"{r['microbatch_ms']:.1f} ms per microbatch; forward "
              f"{f['measured_ms']:.1f} (predicted {f['predicted_ms']:.1f}), "
              f"backward {b['measured_ms']:.1f} (predicted "
              f"{b['predicted_ms']:.1f})", file=out)
        share = r["share"]
        print("  GEMM {:.1%}, transfers {:.1%}, other ops {:.1%}".format(
            share.get("gemm", 0), share.get("transfer", 0),
            share.get("other", 0)), file=out)
        if r["update_ms"] is not None:
            print(f"  optimizer update {r['update_ms']:.1f} ms per step", file=out)
        print(f"  {'op':<38} {'fn':<8} {'n':>3} {'ms/mb':>8} {'predicted':>9}",
              file=out)
        for o in r["ops"][:top]:
            pred = o["predicted_ms_per_microbatch"]
            pred = f"{pred:.3f}" if pred else "-"
            print(f"  {o['op']:<38} {o['function']:<8} "
                  f"{o['ops_per_microbatch']:>3} {o['ms_per_microbatch']:>8.3f} "
                  f"{pred:>9}", file=out)


def print_stage_speeds(summary, times, out=sys.stdout):
    """Each stage's priced ops against their prices, as pdc --calibrate
    reads them (the mean over a stage's replicas)."""
    ratios = collections.defaultdict(list)
    for r in summary:
        if r["priced_ratio"]:
            ratios[r["stage"]].append(r["priced_ratio"])
    if len(ratios) < 2:
        return
    speeds = {s: statistics.mean(v) for s, v in sorted(ratios.items())}
    spread = max(speeds.values()) / min(speeds.values()) - 1
    print("priced ops against their prices: " + ", ".join(
        f"stage {s} {v:.3f}x" for s, v in speeds.items()) +
        f" (stages {spread:.1%} apart; pdc --calibrate {times} would plan "
        "with these speeds)", file=out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("plan", help="plan directory compiled with --instrument-ops")
    p.add_argument("times", help="the file of run --profile-ops")
    p.add_argument("--top", type=int, default=12, help="op kinds listed per stage")
    p.add_argument("--json", help="also write the report's numbers here")
    p.add_argument("--against", nargs=2, metavar=("PLAN_B", "TIMES_B"),
                   help="compare op by op with another run (another build, "
                        "depth or machine): ms per call of the ops both have")
    args = p.parse_args(argv)
    try:
        ops, ranks = load(args.plan, args.times)
        other = load(*args.against) if args.against else None
    except (OSError, KeyError, ValueError) as e:
        print(f"op_report: error: {e}", file=sys.stderr)
        return 1
    summary = summarize(ops, ranks)
    print_report(summary, args.top)
    print_stage_speeds(summary, args.times)
    if other:
        print(f"a: {args.plan} {args.times}; b: {' '.join(args.against)}")
        compare(per_call(ops, ranks), per_call(*other), args.top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
