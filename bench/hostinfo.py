"""Descriptions of the machine a benchmark ran on. Free of benchlib's import
side effects (OpenBLAS variables, torch), so scripts that run pdc without
torch can use it; benchlib re-exports it."""


def cpu_model(default="unknown CPU"):
    """/proc/cpuinfo's model name, else default."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return default
