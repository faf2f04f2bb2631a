"""Checks a `run --profile-ops` file of a plan compiled with pdc
--instrument-ops against the plan's ops.json: every rank reports, every op
of the plan is timed by the ranks of its stage, and no op more often than
once per microbatch of the run (the first step is left out, and a stage's
warm-up forwards of the next step fall before its first update).

    check_op_times.py PLAN TIMES --steps N --microbatches M
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plan")
    p.add_argument("times")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--microbatches", type=int, required=True)
    a = p.parse_args()
    ops = json.load(open(f"{a.plan}/ops.json"))["ops"]
    plan = json.load(open(f"{a.plan}/plan.json"))
    ranks = json.load(open(a.times))["ranks"]
    stages = plan["stages"]
    errors = []
    if sorted(r["rank"] for r in ranks) != list(range(stages * plan["replicas"])):
        errors.append(f"ranks {[r['rank'] for r in ranks]} for {stages} stages")
    most = a.steps * a.microbatches
    for r in ranks:
        timed = {t["id"]: t for t in r["ops"]}
        mine = [o for o in ops if o["stage"] == r["stage"]]
        for o in mine:
            t = timed.get(o["id"])
            if t is None:
                errors.append(f"rank {r['rank']}: op {o['id']} ({o['op']}) not timed")
            elif not 1 <= t["calls"] <= most or t["seconds"] < 0:
                errors.append(f"rank {r['rank']}: op {o['id']} ({o['op']}): "
                              f"{t['calls']} calls, {t['seconds']} s")
        foreign = set(timed) - {o["id"] for o in mine}
        if foreign:
            errors.append(f"rank {r['rank']}: ids {sorted(foreign)} of other stages")
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print(f"op times: {len(ops)} ops on {stages} stages, each timed by its stage")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
