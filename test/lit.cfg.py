# lit configuration of the pdc regression tests.
import glob
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "PD"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pd_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "lib",
                   "Unit", "helpers"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["pd-opt", "pd-translate", "pdc"], [config.pd_tools_dir])

# Debian's python3 sees python3-onnx and python3-torch; the pyenv one does not.
config.substitutions.insert(0, ("%python", "/usr/bin/python3"))
config.substitutions.append(("%srcroot", config.pd_src_root))
config.substitutions.append(("%helpers", os.path.join(config.pd_src_root, "test", "helpers")))
config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
config.environment["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
config.environment["OPENBLAS_NUM_THREADS"] = "1"
config.environment["OMP_NUM_THREADS"] = "1"
# Measured op costs (pdc --profile) come only from a test's own cache.
config.environment["PDC_PROFILE_CACHE"] = os.path.join(
    config.pd_obj_root, "test", "no-profile-cache")

# GPU features are set only when detected, so CI without a GPU stays green.
if shutil.which("nvidia-smi") and os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda")

# Today's exporter (torch 2.x, onnxscript, onnxruntime from PyPI) lives in the
# venv of scripts/setup-venv.sh; its tests run only where that venv exists.
venv = os.environ.get("PDC_VENV", os.path.expanduser("~/.cache/pdc-venv"))
site = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
if os.path.exists(os.path.join(venv, "bin", "python")) and site and all(
        os.path.isdir(os.path.join(site[0], pkg))
        for pkg in ("torch", "onnxscript", "onnxruntime")):
    config.available_features.add("pdc-venv")
    config.substitutions.append(("%venv_python", os.path.join(venv, "bin", "python")))
    config.environment["PDC_VENV"] = venv
    # transformers and torchvision for the models users bring (issue tests
    # of examples/hf), installed into the same venv.
    if all(os.path.isdir(os.path.join(site[0], pkg))
           for pkg in ("transformers", "torchvision")):
        config.available_features.add("transformers")
