"""What a running process really uses, read from /proc and from its libraries.

Helpers of bench/perf_suite.py and bench/perf_worker.py (standard library
only, so both the Debian python and the venv can import it): the peak RSS
(VmHWM) and the BLAS shared objects mapped by a process, the configuration
OpenBLAS reports about itself, the MKL build and code path torch's MKL
prints in verbose mode, the BLAS a torch build calls, the CPU model, and a
watcher that follows the stage processes of a pdc plan while they run.
"""
import ctypes
import os
import re
import tempfile
import threading
import time

BLAS_LIB_RE = re.compile(r"(blas|mkl|lapack|dnnl)", re.I)
MKL_HEADER_RE = re.compile(r"^MKL_VERBOSE (oneMKL|Intel\(R\) MKL) (.*)$", re.M)
MKL_THREADS_RE = re.compile(r"^MKL_VERBOSE SGEMM.*NThr:(\d+)", re.M)
TORCH_BLAS_RE = re.compile(r"BLAS_INFO=(\w+)")
TORCH_CAPABILITY_RE = re.compile(r"CPU capability usage: (\S+)")


def proc_status(pid="self"):
    """The fields of /proc/PID/status as a dict of strings ({} once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        return {}


def peak_rss_kib(pid="self"):
    """The process's peak resident set size (VmHWM) in KiB, or None."""
    value = proc_status(pid).get("VmHWM")
    return int(value.split()[0]) if value else None


def mapped_blas_libs(pid="self"):
    """Sorted paths of the shared objects with blas, mkl or lapack in their
    name that the process has mapped."""
    libs = set()
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 6 and BLAS_LIB_RE.search(os.path.basename(fields[5])):
                    libs.add(fields[5])
    except OSError:
        pass
    return sorted(libs)


def openblas_report(path):
    """Ask the OpenBLAS library at path (already mapped, so dlopen returns the
    loaded copy) for its configuration, kernel family and thread count."""
    lib = ctypes.CDLL(path)
    lib.openblas_get_config.restype = ctypes.c_char_p
    lib.openblas_get_corename.restype = ctypes.c_char_p
    config = lib.openblas_get_config().decode()
    core = lib.openblas_get_corename().decode()
    version = config.split()[1] if config.startswith("OpenBLAS") else "?"
    return {"library": "OpenBLAS", "version": version, "kernels": core,
            "threads": lib.openblas_get_num_threads(), "config": config,
            "path": path, "summary": f"OpenBLAS {version} {core}",
            "source": f"openblas_get_config() of the mapped {os.path.basename(path)}"}


ONEDNN_ISA = {0x7: "AVX2", 0x27: "AVX-512", 0x67: "AVX-512 VNNI",
              0xe7: "AVX-512 BF16", 0x3e7: "AVX-512 AMX", 0x407: "AVX2 VNNI"}


def onednn_report(path):
    """oneDNN's version and the instruction set its JIT kernels use, asked
    of the library at path (dnnl_version, dnnl_get_effective_cpu_isa)."""
    import ctypes

    class Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int),
                    ("patch", ctypes.c_int), ("hash", ctypes.c_char_p),
                    ("cpu_runtime", ctypes.c_uint), ("gpu_runtime", ctypes.c_uint)]

    lib = ctypes.CDLL(path)
    lib.dnnl_version.restype = ctypes.POINTER(Version)
    v = lib.dnnl_version().contents
    isa = lib.dnnl_get_effective_cpu_isa()
    return {"version": f"{v.major}.{v.minor}.{v.patch}",
            "kernels": ONEDNN_ISA.get(isa, hex(isa)),
            "source": f"dnnl_version() and dnnl_get_effective_cpu_isa() of {os.path.basename(path)}"}


def loaded_openblas(pid="self"):
    """Path of the mapped library that exports OpenBLAS's own interface
    (openblas_get_config), or None."""
    for path in mapped_blas_libs(pid):
        try:
            if hasattr(ctypes.CDLL(path), "openblas_get_config"):
                return path
        except OSError:
            continue
    return None


def capture_c_stdout(action):
    """Run action() with file descriptor 1 redirected; return what C code wrote."""
    libc = ctypes.CDLL(None)
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(1)
        os.dup2(sink.fileno(), 1)
        try:
            action()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode(errors="replace")


def mkl_report(torch):
    """Run one float32 matmul with torch's MKL in verbose mode and return the
    build and code path MKL prints about itself and the threads it used."""
    def one_sgemm():
        with torch.backends.mkl.verbose(torch.backends.mkl.VERBOSE_ON):
            a = torch.ones(64, 64)
            a @ a
    text = capture_c_stdout(one_sgemm)
    header = MKL_HEADER_RE.search(text)
    threads = MKL_THREADS_RE.search(text)
    if not header:
        return {"library": "MKL", "summary": "MKL (no verbose output)", "verbose": text}
    detail = header.group(2)
    version = detail.split(" Product build")[0]
    path = detail.split("architecture ", 1)[-1].split(",")[0]
    return {"library": "MKL", "version": version, "kernels": path,
            "threads": int(threads.group(1)) if threads else None,
            "verbose": header.group(0), "called_sgemm": bool(threads),
            "summary": f"MKL {version} ({path})",
            "source": "MKL_VERBOSE header of one sgemm in this process"}


def torch_blas_report(torch):
    """The BLAS this torch build calls for float32 GEMM, asked of the running
    library: MKL's verbose report when torch was built with MKL, else the
    mapped OpenBLAS's own report; plus torch's build line and mapped BLAS."""
    config = torch.__config__.show()
    blas_info = TORCH_BLAS_RE.search(config)
    capability = TORCH_CAPABILITY_RE.search(config)
    if blas_info and blas_info.group(1) == "mkl":
        report = mkl_report(torch)
    else:
        path = loaded_openblas()
        report = openblas_report(path) if path else {"summary": "unknown BLAS"}
    report.update(torch=torch.__version__,
                  torch_blas_info=blas_info.group(1) if blas_info else None,
                  torch_cpu_capability=capability.group(1) if capability else None,
                  torch_threads=torch.get_num_threads(),
                  mapped=mapped_blas_libs())
    return report


def cpu_model():
    """The CPU's model name, family/model/stepping and vector extensions from /proc/cpuinfo."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    vector = [flag for flag in fields.get("flags", "").split()
              if flag in ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16")]
    return {"model": fields.get("model name", "?"), "family": fields.get("cpu family"),
            "cpu_model": fields.get("model"), "stepping": fields.get("stepping"),
            "vector": vector, "cores": os.cpu_count()}


class ExecutableWatcher:
    """Polls /proc, while started, for processes running any of the given
    executables and keeps, per executable, the largest VmHWM seen, the most
    threads and the BLAS libraries mapped (VmHWM only grows, so the last
    poll before a process exits is its peak to within one interval)."""

    def __init__(self, executables, interval=0.05):
        self.executables = {os.path.realpath(e): e for e in executables}
        self.interval = interval
        self.peak_kib = {}
        self.threads = {}
        self.mapped = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _poll(self):
        """Sample every matching process until stopped."""
        while not self._stop.is_set():
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    exe = os.readlink(f"/proc/{pid}/exe")
                except OSError:
                    continue
                if exe in self.executables:
                    self._sample(self.executables[exe], pid)
            time.sleep(self.interval)

    def _sample(self, name, pid):
        """Record one process's VmHWM, thread count and mapped BLAS."""
        status = proc_status(pid)
        if "VmHWM" not in status:
            return
        self.peak_kib[name] = max(self.peak_kib.get(name, 0),
                                  int(status["VmHWM"].split()[0]))
        self.threads[name] = max(self.threads.get(name, 0), int(status["Threads"]))
        if not self.mapped.get(name):
            self.mapped[name] = mapped_blas_libs(pid)
