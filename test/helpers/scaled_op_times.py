"""Writes the file `run --profile-ops` would write for an instrumented plan
whose stages ran their priced ops at given multiples of the planner's
prices (stage k at --scale's entry k), each op called --calls times, and
an unpriced op (a receive) on every rank: a run with a known stage
imbalance, for testing pdc --calibrate without timing anything.
--wrong-stage files the first priced op under the other stage, as times
of another plan would.

    scaled_op_times.py PLAN OUT --scale 1,3 [--calls 4] [--wrong-stage]
"""
import argparse
import json


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plan")
    p.add_argument("out")
    p.add_argument("--scale", required=True)
    p.add_argument("--calls", type=int, default=4)
    p.add_argument("--wrong-stage", action="store_true")
    a = p.parse_args()
    scale = [float(s) for s in a.scale.split(",")]
    with open(a.plan + "/ops.json") as f:
        ops = json.load(f)["ops"]
    ranks = [{"rank": s, "stage": s, "replica": 0, "ops": [],
              "update": {"seconds": 0.001, "calls": 1}}
             for s in range(len(scale))]
    moved = False
    for op in ops:
        stage = op["stage"]
        price = op["predicted_seconds"]
        if price and a.wrong_stage and not moved:
            stage, moved = 1 - stage, True
        seconds = (price or 0.001) * scale[op["stage"]] * a.calls
        ranks[stage]["ops"].append(
            {"id": op["id"], "seconds": seconds, "calls": a.calls})
    with open(a.out, "w") as f:
        json.dump({"ranks": ranks}, f, indent=1)


if __name__ == "__main__":
    main()
