"""The markdown report of bench/perf_suite.py, from its JSON result."""


def mib(kib):
    """KiB as MiB with no decimals, or ? when unknown."""
    return f"{kib / 1024:.0f}" if kib else "?"


def fmt(value, spec):
    """value formatted with spec, or a dash when it is None."""
    return "-" if value is None else format(value, spec)


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
    ]
    lines.append("- single-thread sgemm rate (torch.mm, n x n x n, best of "
                 f"{s['steps']} calls):")
    for name, g in result["sgemm"].items():
        if "error" in g:
            lines.append(f"  - {name}: did not run: {g['error']}")
        else:
            lines.append(f"  - {name}: {g['gflops']:.1f} GFLOP/s (median "
                         f"{g['gflops_median']:.1f}) at n={g['n']} on {g['blas']['summary']}")
    lines.append(f"- GEMM roofline used below: {fmt(result['roofline_gflops'], '.1f')} "
                 "GFLOP/s, the best of those")
    return lines


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
        row["blas"]["summary"], f"{row['median_s'] * 1e3:.1f}",
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
             f"Plan FLOPs per step (pdc d=1 plan.json, forward + backward x m): "
             f"{fmt(flops and flops / 1e9, '.2f')} GFLOP",
             "",
             "| side | processes | schedule | BLAS | ms/step | samples/s | efficiency "
             "| of 1-core sgemm | per process | peak RSS MiB per process | loss step 1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row_cells(row)) + " |" for row in model["rows"]]
    return lines


FOOTNOTES = [
    "",
    "efficiency: throughput / (processes x the same system's single-process "
    "throughput): pdc d=2 against pdc d=1 with the same schedule, "
    "torch.distributed.pipelining on 2 ranks against itself on 1 rank (ScheduleGPipe, "
    "one stage). of 1-core sgemm: plan FLOPs per step / GEMM roofline / step time; "
    "per process: that divided by the processes. torch eager: m accumulated "
    "microbatches, one optimizer step per global batch. torch.distributed.pipelining: "
    "gloo, one process per rank, blocks split evenly (embeddings on the first stage, "
    "final LayerNorm + LM head + loss on the last), the LM head untied from the token "
    "embedding (a copy); interleaved and V schedules hold 2 stages per rank. pdc: "
    "stages balanced by cost, recompute none, the tied head kept as a copy per "
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
