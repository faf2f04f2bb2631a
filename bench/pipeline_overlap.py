#!/usr/bin/python3
"""Communication/compute overlap of the runtime, measured on fake_relay.

Runs the runtime's synthetic pipeline stage (test/Unit/runtime/fake_relay.cc:
every stage receives FAKE_BYTES from its neighbour, runs FAKE_REPS matmuls of
FAKE_N^3 forward and twice that backward, sends FAKE_BYTES on) under mpirun
with `--comm sync` (blocking receives, transfers progress only inside MPI
calls: the runtime before the communication thread) and `--comm thread`
(the default), over shared memory with Open MPI's single-copy mechanism
(cma) and without it (none: what containers without ptrace rights and
every TCP link get). Prints per configuration the wall time per step (the
median of the logged steps after the first two) and, from `run --trace`,
the time each rank's compute thread was blocked on receives per step and
the rest of its forward and backward calls (compute; on a machine with
fewer free cores than ranks, a peer spinning in MPI_Recv slows it);
each is the median over --repeat runs, the runtimes taking turns within a
round so that other load on the machine hits them alike.

  /usr/bin/python3 bench/pipeline_overlap.py --bin-dir build-rt
  # the runtime before this change (a fake_relay linked with its libpdrt.a,
  # wall time only, it has no --trace):
  /usr/bin/python3 bench/pipeline_overlap.py --bin-dir build-rt --before-bin-dir DIR
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def run_relay(args, bin_dir, d, mech, extra, env_extra):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
               OMPI_MCA_btl="self,vader,tcp", FAKE_SCHEDULE=args.schedule,
               FAKE_M=str(args.m), FAKE_STAGES=str(d), FAKE_BYTES=str(args.bytes),
               FAKE_N=str(args.n), FAKE_REPS=str(args.reps), **env_extra)
    app = []
    for k in range(d):
        if k:
            app.append(":")
        app += ["-np", "1", os.path.join(bin_dir, "fake_relay"), "--synthetic-weights",
                "--steps", str(args.steps), "--log-every", "1"] + extra
    cmd = [args.mpirun, "--allow-run-as-root", "--oversubscribe", "--mca",
           "btl_vader_single_copy_mechanism", mech] + app
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        sys.exit("failed: %s\n%s\n%s" % (" ".join(cmd), res.stdout, res.stderr))
    times = [float(t) for t in re.findall(r"^step \d+ loss \S+ ms/step (\S+)",
                                          res.stdout, re.M)]
    return statistics.median(times[2:])


def per_step(trace_path, first_step, names):
    """Per rank: ms per step (from `first_step` on) in slices named `names`."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    total, steps = {}, {}
    for e in events:
        if e.get("ph") != "X":
            continue
        step = e.get("args", {}).get("step", 0)
        if e["name"] in names and step >= first_step:
            total[e["pid"]] = total.get(e["pid"], 0.0) + e["dur"] / 1e3
        if e["name"] == "update" and step >= first_step:
            steps[e["pid"]] = steps.get(e["pid"], 0) + 1
    return {pid: total.get(pid, 0.0) / max(n, 1) for pid, n in sorted(steps.items())}


def blocked_per_step(trace_path, first_step):
    """Per rank: ms per step its compute thread waited in pdrt_recv."""
    return per_step(trace_path, first_step, ("wait recv",))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--before-bin-dir")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--stages", default="2,4")
    ap.add_argument("--mech", default="cma,none")
    ap.add_argument("--schedule", default="2bw")
    ap.add_argument("--m", type=int, default=4)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--bytes", type=int, default=4 << 20)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print("fake_relay %s m=%d, %d-byte messages, forward %d and backward %d "
          "matmuls of %d^3, %d steps (median ms/step of steps 3..%d)\n" %
          (args.schedule, args.m, args.bytes, args.reps, 2 * args.reps, args.n,
           args.steps, args.steps))
    print("| stages | single copy | runtime | ms/step (median of %d runs) | min-max "
          "| blocked on receives, ms/step per rank | blocked on sends "
          "| forward + backward less blocked on receives |" % args.repeat)
    print("|---|---|---|---|---|---|---|---|")
    runtimes = (["before"] if args.before_bin_dir else []) + ["sync", "thread"]
    with tempfile.TemporaryDirectory() as tmp:
        for d in [int(x) for x in args.stages.split(",")]:
            for mech in args.mech.split(","):
                ms = {r: [] for r in runtimes}
                blocked = {r: {} for r in runtimes}
                busy = {r: {} for r in runtimes}
                sends = {r: {} for r in runtimes}
                for _ in range(args.repeat):
                    for r in runtimes:
                        if r == "before":
                            ms[r].append(run_relay(args, args.before_bin_dir, d, mech, [], {}))
                            continue
                        trace = os.path.join(tmp, "trace.json")
                        ms[r].append(run_relay(args, args.bin_dir, d, mech,
                                               ["--comm", r, "--trace", trace], {}))
                        waits = blocked_per_step(trace, 3)
                        calls = per_step(trace, 3, ("forward", "backward"))
                        send_waits = per_step(trace, 3, ("wait sends",))
                        for pid, b in waits.items():
                            blocked[r].setdefault(pid, []).append(b)
                            sends[r].setdefault(pid, []).append(send_waits[pid])
                            busy[r].setdefault(pid, []).append(calls[pid] - b)
                def ranks(values):
                    return " ".join("%.1f" % statistics.median(values[p])
                                    for p in sorted(values)) or "-"
                for r in runtimes:
                    print("| %d | %s | %s | %.1f | %.0f-%.0f | %s | %s | %s |" % (
                        d, mech, "before" if r == "before" else "--comm " + r,
                        statistics.median(ms[r]), min(ms[r]), max(ms[r]),
                        ranks(blocked[r]), ranks(sends[r]), ranks(busy[r])))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
