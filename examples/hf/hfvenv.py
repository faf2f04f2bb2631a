"""Re-execute a script with the venv's python when transformers and torch
2.x are not importable here (scripts/setup-venv.sh makes the venv;
$PDC_VENV, default ~/.cache/pdc-venv)."""
import os
import sys

VENV = os.environ.get("PDC_VENV", os.path.expanduser("~/.cache/pdc-venv"))


def reexec_in_venv():
    """Run this script with the venv's python unless transformers and torch
    2.x are importable here."""
    try:
        import torch
        import transformers  # noqa: F401
        if int(torch.__version__.split(".")[0]) >= 2:
            return
    except ModuleNotFoundError:
        pass
    python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV) or \
            not os.path.exists(python):
        sys.exit(f"error: needs transformers and torch 2.x; run "
                 f"scripts/setup-venv.sh (venv {VENV})")
    os.execv(python, [python] + sys.argv)
