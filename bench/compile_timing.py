"""Timing for bench/compile_time.py: the pdc snapshot, best-of-N pdc runs,
--mlir-timing parsing, perf profiles of a compile and llc -time-passes."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CHOSE_RE = re.compile(r"^planner: chose (.+?) of (\d+) candidates", re.M)
TIMING_RE = re.compile(r"^(\s+)(\d+\.\d+) \(\s*[\d.]+%\)(\s+)(\S.*?)\s*$")
# Errors of a binary or runtime library being rewritten by a build.
HALF_BUILT = ("Text file busy", "No such file", "cannot read the runtime",
              "linking", "file format not recognized", "archive has no index",
              "malformed archive", "truncated")



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

