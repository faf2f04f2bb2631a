"""Re-execute a script with the venv of scripts/setup-venv.sh ($PDC_VENV,
default ~/.cache/pdc-venv) when torch 2.x and the modules it needs are not
importable here (the Debian python3 has torch 1.13)."""
import importlib
import os
import sys

VENV = os.environ.get("PDC_VENV", os.path.expanduser("~/.cache/pdc-venv"))


def reexec_in_venv(*modules):
    """Run this script with the venv's python unless torch 2.x and
    `modules` are importable here."""
    try:
        import torch
        for name in modules:
            importlib.import_module(name)
        if int(torch.__version__.split(".")[0]) >= 2:
            return
    except ModuleNotFoundError:
        pass
    python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV) or \
            not os.path.exists(python):
        needs = " and ".join(("torch 2.x",) + modules)
        sys.exit(f"error: needs {needs}; run scripts/setup-venv.sh (venv {VENV})")
    os.execv(python, [python] + sys.argv)
