"""The markdown report of bench/perf_suite.py, from its JSON result."""
import statistics


def mib(kib):
    """KiB as MiB with no decimals, or ? when unknown."""
    return f"{kib / 1024:.0f}" if kib else "?"


def fmt(value, spec):
    """value formatted with spec, or a dash when it is None."""
    return "-" if value is None else format(value, spec)


def step_ms(row):
    """A row's ms/step: the median, and with several rounds their range."""
    text = f"{row['median_s'] * 1e3:.1f}"
    rounds = row.get("round_median_s", [])
    if len(rounds) > 1:
        text += f" ({min(rounds) * 1e3:.0f}-{max(rounds) * 1e3:.0f})"
    return text


def header(result):
    """The lines describing the machine, the settings and the GEMM roofline."""
    cpu = result["cpu"]
    s = result["settings"]
    lines = [
        "# pdc vs PyTorch, every side on this machine in one run",
        "",
        f"- date: {result['date']}",
        f"- CPU: {cpu['model']} (family {cpu['family']} model {cpu['cpu_model']} "
        f"stepping {cpu['stepping']}), {cpu['cores']} cores, {' '.join(cpu['vector'])}",
        f"- load average at start / end: {result['loadavg_start']} / {result['loadavg_end']}",
        f"- {s['threads']} thread(s) per process (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, "
        f"MKL_NUM_THREADS, torch.set_num_threads); OPENBLAS_CORETYPE="
        f"{s['openblas_coretype']} in every side's environment",
        f"- {s['steps']} steps per run, medians of the per-step times after "
        f"{s['warmup']} warm-up steps; optimizer {s['optimizer']} lr {s['lr']}",
        "- pdc's op costs: " + {"profile": "measured on this machine at compile time "
                                "(`pdc --profile`)",
                                "roofline": "its roofline model"}.get(
                                    s.get("pdc_costs", "roofline"), s.get("pdc_costs", "")),
        "- rounds: every configuration of a model runs once per round, one after "
        "the other (every second round in reverse order); ms/step is the median "
        "of its rounds' medians, in brackets their range",
    ]
    lines.append("- single-thread sgemm rate (torch.mm, or dnnl_sgemm for oneDNN, "
                 f"n x n x n, best of {s['steps']} calls), at the start and the end "
                 "of the run:")
    ends = result.get("sgemm_end", {})
    for name, g in result["sgemm"].items():
        end = ends.get(name, {})
        if "error" in g:
            lines.append(f"  - {name}: did not run: {g['error']}")
        else:
            again = (f"; at the end {end['gflops']:.1f} (median {end['gflops_median']:.1f})"
                     if "gflops" in end else "")
            lines.append(f"  - {name}: {g['gflops']:.1f} GFLOP/s (median "
                         f"{g['gflops_median']:.1f}){again} at n={g['n']} on "
                         f"{g['blas']['summary']}")
    lines.append(f"- GEMM roofline used below: {fmt(result['roofline_gflops'], '.1f')} "
                 "GFLOP/s, the best of those")
    gate = quiet_gate_line(result)
    if gate:
        lines.append("- " + gate)
    return lines


def quiet_gate_line(result):
    """What --quiet-gate did, or None without one."""
    g = result.get("quiet_gate")
    if not g:
        return None
    return (f"quiet gate (`--quiet-gate {g['fraction']:.2f}`): each run started once "
            f"oneDNN's sgemm rate was at least {g['fraction']:.2f} of the best seen "
            f"({g['best_gflops']:.1f} GFLOP/s); {g['waited']} of {g['runs']} runs "
            f"waited for it, {g['started_below']} started below it after the "
            "longest wait")


def blas_lines(result):
    """One line per side: the BLAS, kernels and threads its processes reported."""
    seen, lines = set(), ["", "## BLAS each side loaded (read from the running library)", ""]
    for model in result["models"]:
        for row in model["rows"]:
            blas = row.get("blas")
            if not blas or row["side"] in seen:
                continue
            seen.add(row["side"])
            mapped = ", ".join(sorted({p.rsplit("/", 1)[-1] for p in blas.get("mapped", [])}))
            torch_info = (f"; torch {blas['torch']} BLAS_INFO={blas['torch_blas_info']}, "
                          f"CPU capability {blas['torch_cpu_capability']}, "
                          f"torch threads {blas['torch_threads']}" if "torch" in blas else "")
            lines.append(f"- {row['side']}: {blas['summary']}, BLAS threads "
                         f"{blas.get('threads')} ({blas.get('source', '')}){torch_info}; "
                         f"mapped: {mapped or 'none'}")
    return lines


def row_cells(row):
    """The table cells of one run."""
    lead = [row["side"], str(row["d"]), row["schedule"]]
    if row["status"] != "ok":
        return lead + ["-", row["status"]] + ["-"] * 6
    rss = " / ".join(mib(k) for k in row["peak_rss_kib"])
    return lead + [
        row["blas"]["summary"], step_ms(row),
        f"{row['samples_per_s']:.1f}", fmt(row.get("efficiency"), ".2f"),
        fmt(row.get("roofline"), ".3f"), fmt(row.get("roofline_per_process"), ".3f"),
        rss, fmt(row["loss_step1"], ".5f")]


def model_table(model):
    """The heading and table of one model's runs."""
    c = model["config"]
    flops = model["flops_per_step"]
    lines = ["", f"## {model['name']}: GPT n_layer {c['layers']}, n_embd {c['embd']}, "
             f"n_head {c['heads']}, seq {c['seq']}, vocab {c['vocab']}, global batch "
             f"{c['microbatch'] * c['microbatches']} = {c['microbatch']} x "
             f"{c['microbatches']} microbatches",
             "",
             f"{model.get('rounds', 1)} round(s). Plan FLOPs per step (pdc d=1 "
             f"plan.json, forward + backward x m): {fmt(flops and flops / 1e9, '.2f')} GFLOP",
             "",
             "| side | processes | schedule | BLAS | ms/step | samples/s | efficiency "
             "| of 1-core sgemm | per process | peak RSS MiB per process | loss step 1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row_cells(row)) + " |" for row in model["rows"]]
    for line in (ceiling_line(model), host_rate_line(model), splits_line(model),
                 op_profile_line(model)):
        if line:
            lines += ["", line]
    return lines


def splits_line(model):
    """Where pdc's pipelined plans split a GEMM so that a stage cut falls
    inside it (plan.json split_gemms); None when none did."""
    parts = []
    for row in model["rows"]:
        splits = row.get("split_gemms") if row["side"] == "pdc" else None
        if splits:
            where = ", ".join(f"op {s['op_id']} after row {s['rows']}" for s in splits)
            parts.append(f"d={row['d']} {row['schedule']}: {where}")
    if not parts:
        return None
    return ("pdc's plans that split a GEMM at a stage cut (`plan.json` "
            "split_gemms): " + "; ".join(parts) + ".")


def op_profile_line(model, top=True):
    """Where pdc d=1 2bw's step went in its instrumented run (pdc
    --instrument-ops): GEMMs, other ops and the rest, as shares of the
    step; None when the suite did not run it."""
    p = model.get("pdc_op_profile")
    if not p:
        return None
    if p["status"] != "ok":
        return f"pdc d=1 2bw with its ops timed: {p['status']}."
    step = p["step_s"]
    update = p.get("update_s", 0.0)
    rest = max(step - p["ops_s"] - update, 0.0)
    text = (f"pdc d=1 2bw with its ops timed in place (`pdc --instrument-ops`, "
            f"one run, {step * 1e3:.1f} ms per step after the first): GEMM ops {p['gemm_s'] / step:.1%} "
            f"of the step, other ops {p['other_ops_s'] / step:.1%}, the optimizer "
            f"update {update / step:.1%}, the rest (data, runtime) {rest / step:.1%}: "
            f"non-GEMM {(p['other_ops_s'] + update + rest) / step:.1%}")
    if top and p["top_other"]:
        text += "; the costliest other ops: " + ", ".join(
            f"{o['op'][3:]} ({o['function']}) {o['s'] / step:.1%}" for o in p["top_other"])
    return text + "."


FOOTNOTES = [
    "",
    "efficiency: throughput / (processes x the same system's single-process "
    "throughput): pdc d=2 against pdc d=1 with the same schedule (and two copies of "
    "pdc d=1 2bw run at once, one per core, each training its own global batch, "
    "against one alone), "
    "torch.distributed.pipelining on 2 ranks against itself on 1 rank (ScheduleGPipe, "
    "one stage). of 1-core sgemm: plan FLOPs per step / GEMM roofline / step time; "
    "per process: that divided by the processes. torch eager: m accumulated "
    "microbatches, one optimizer step per global batch. torch.distributed.pipelining: "
    "gloo, one process per rank, blocks split evenly (embeddings on the first stage, "
    "final LayerNorm + LM head + loss on the last), the LM head untied from the token "
    "embedding (a copy); interleaved and V schedules hold 2 stages per rank. pdc: "
    "stages balanced by cost (the op costs in the header), recompute none, the "
    "tied head kept as a copy per "
    "owner stage with summed gradients. Peak RSS: VmHWM of each process (pdc: "
    "polled from /proc while the ranks run).",
]


def markdown(result):
    """The whole report as markdown text."""
    lines = header(result)
    for model in result["models"]:
        lines += model_table(model)
    lines += blas_lines(result) + FOOTNOTES
    return "\n".join(lines) + "\n"


COPIES_SCHEDULE = "2bw, 2 copies of d=1"
README_BEGIN = "<!-- perf_suite:begin -->"
README_END = "<!-- perf_suite:end -->"


def goal_ratios(model):
    """pdc d=1 over the faster torch eager, pdc 2bw d=2 over the best
    torch.distributed.pipelining schedule on 2 ranks and over pdc d=1
    (throughput ratios, as text): of the rows' medians, and with several
    rounds also each round's, from that round's runs."""
    ok = [r for r in model["rows"] if r["status"] == "ok"]
    def best(pred):
        def time(round_index=None):
            times = [r["median_s"] if round_index is None else r["round_median_s"][round_index]
                     for r in ok if pred(r)]
            return min(times) if times else None
        return time
    eager = best(lambda r: r["side"] in ("torch113", "torch2"))
    pipe = best(lambda r: r["side"] == "pipelining" and r["d"] == 2)
    d1 = best(lambda r: r["side"] == "pdc" and r["d"] == 1 and r["schedule"] == "2bw")
    d2 = best(lambda r: r["side"] == "pdc" and r["d"] == 2 and r["schedule"] == "2bw")
    rounds = min((len(r["round_median_s"]) for r in ok), default=0)
    def ratio(a, b):
        if not (a() and b()):
            return "-"
        text = f"{a() / b():.2f}x"
        if rounds > 1:
            text += " (rounds " + ", ".join(f"{a(i) / b(i):.2f}x" for i in range(rounds)) + ")"
        return text
    return ratio(eager, d1), ratio(pipe, d2), ratio(d1, d2)


def host_rate_line(model):
    """pdc d=1 2bw's and the eager sides' plan FLOPs per step over the
    sgemm rate the quiet gate measured just before each of their runs and
    over the step time (row["host_rate_fraction"]: the host's speed as the run
    started, where the roofline is the best rate of the suite; it is no
    bound, the host speeds up within runs); None without a quiet gate."""
    parts = []
    for row in model["rows"]:
        fractions = [f for f in row.get("host_rate_fraction") or [] if f]
        wanted = (row["side"] in ("torch113", "torch2") or
                  (row["side"], row["d"], row["schedule"]) == ("pdc", 1, "2bw"))
        if row["status"] != "ok" or not wanted or not fractions:
            continue
        label = "pdc d=1 2bw" if row["side"] == "pdc" else row["side"]
        text = f"{label} {statistics.median(fractions):.2f}"
        if len(fractions) > 1:
            text += " (rounds " + ", ".join(f"{f:.2f}" for f in fractions) + ")"
        parts.append(text)
    if not parts:
        return None
    return ("Plan FLOPs per step over oneDNN's sgemm rate measured just before each run "
            "(the quiet gate: the host's speed as the run started, which moves within "
            "a run, so this is no roofline and can exceed 1) and over the step time, "
            "median over rounds: " + "; ".join(parts) + ".")


def ceiling_line(model):
    """What two independent pdc d=1 runs at once get of one alone's
    throughput (the machine's share of d=2's loss: its cores share caches
    and memory bandwidth) and how much of that pdc 2bw d=2 gets (the
    pipeline's share: imbalance, waits, transfers); None without those
    rows."""
    rows = {(r["d"], r["schedule"]): r for r in model["rows"]
            if r["side"] == "pdc" and r["status"] == "ok"}
    d1, d2, pair = rows.get((1, "2bw")), rows.get((2, "2bw")), rows.get((2, COPIES_SCHEDULE))
    if not (d1 and pair):
        return None
    ceiling = 2 * d1["median_s"] / pair["median_s"]
    text = (f"Two pdc d=1 runs at once, one per core, get {ceiling:.2f}x one alone's "
            "throughput between them (the cores share caches and memory bandwidth)")
    if d2:
        reached = d1["median_s"] / d2["median_s"] / ceiling
        text += f"; pdc 2bw d=2 gets {reached:.2f} of that"
    return text + "."


def readme_section(result):
    """The README's performance table: one row per run, the machine, and
    the goal ratios per model."""
    cpu = result["cpu"]
    lines = [README_BEGIN,
             f"Measured by `/usr/bin/python3 bench/perf_suite.py --write-readme README.md` on "
             f"{cpu['model']} (family {cpu['family']} model {cpu['cpu_model']}, "
             f"{cpu['cores']} cores, {' '.join(cpu['vector'])}), {result['date']}; "
             f"GEMM roofline {fmt(result['roofline_gflops'], '.1f')} GFLOP/s; "
             "one thread per process, Adam, global batch 32 = 8 x 4 microbatches "
             "(ms per step, lower is better: with several rounds, the median of "
             "the rounds' medians and their range; full report with BLAS, RSS and "
             "footnotes in bench/results/perf_suite.md).",
             ""]
    gate = quiet_gate_line(result)
    if gate:
        lines[-1:-1] = ["", gate[0].upper() + gate[1:] + "."]
    for model in result["models"]:
        c = model["config"]
        lines += [f"GPT n_layer {c['layers']}, n_embd {c['embd']}, seq {c['seq']}, "
                  f"vocab {c['vocab']}, {model.get('rounds', 1)} round(s):", "",
                  "| side | processes | schedule | ms/step | samples/s | efficiency "
                  "| of 1-core sgemm | peak RSS MiB |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in model["rows"]:
            if r["status"] != "ok":
                lines.append(f"| {r['side']} | {r['d']} | {r['schedule']} | "
                             f"{r['status']} | - | - | - | - |")
                continue
            rss = max(r["peak_rss_kib"]) if r["peak_rss_kib"] else None
            lines.append(
                f"| {r['side']} | {r['d']} | {r['schedule']} | {step_ms(r)} "
                f"| {r['samples_per_s']:.1f} | {fmt(r.get('efficiency'), '.2f')} "
                f"| {fmt(r.get('roofline'), '.3f')} | {mib(rss) if rss else '-'} |")
        e, p, s = goal_ratios(model)
        lines += ["", f"pdc d=1 / faster torch eager: {e}; pdc 2bw d=2 / best "
                  f"torch.distributed.pipelining schedule: {p}; pdc 2bw d=2 / pdc d=1: {s}.", ""]
        for line in (ceiling_line(model), host_rate_line(model), splits_line(model)):
            if line:
                lines += [line, ""]
        profile = op_profile_line(model, top=False)
        if profile:
            lines += [profile, ""]
    lines.append(README_END)
    return "\n".join(lines)


def write_readme(path, result):
    """Replaces the text between the perf_suite markers of the README."""
    with open(path) as f:
        text = f.read()
    if README_BEGIN not in text or README_END not in text:
        raise SystemExit(f"error: {path} has no {README_BEGIN} ... {README_END} section")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    with open(path, "w") as f:
        f.write(head + readme_section(result) + tail)
