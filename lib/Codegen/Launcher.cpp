//===- Launcher.cpp - The plan directory's `run` script ---------*- C++ -*-===//
//
// Writes PLAN_DIR/run: a bash launcher that starts every stage replica
// (rank = stage * replicas + replica) with mpirun MPMD on one host or a
// hostfile, or with srun --multi-prog inside a SLURM allocation.
//
//===----------------------------------------------------------------------===//

#include "pd/Codegen/Codegen.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::pd;

static const char *const kLauncherBody = R"BASH(
args=() mpi_extra=() hostfile=""
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; mpi_extra=("$@"); break ;;
    --hostfile) hostfile="$2"; shift 2 ;;
    --model) MODEL="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
stage_args=(--model "$MODEL" "${args[@]}")
ranks=$((STAGES * REPLICAS))
# OpenBLAS falls back to its SSE3 (Prescott) kernels on CPUs newer than its
# release; unless the user chose, use the widest kernels the CPU supports.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ "$("$PLAN/stage0" --blas-core 2>/dev/null)" = Prescott ]; then
  flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null) "
  if [[ $flags == *" avx512f "* && $flags == *" avx512bw "* && $flags == *" avx512vl "* ]]; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif [[ $flags == *" avx2 "* && $flags == *" fma "* ]]; then
    export OPENBLAS_CORETYPE=Haswell
  fi
fi
# One BLAS / OpenMP thread per rank unless the cores allow more.
threads=$(( $(nproc) / ranks )); [ "$threads" -ge 1 ] || threads=1
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-$threads}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$threads}

if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null && [ -z "${PDC_USE_MPIRUN:-}" ]; then
  conf="$(mktemp)"
  trap 'rm -f "$conf"' EXIT
  for ((k = 0; k < STAGES; k++)); do
    printf '%d-%d %q' $((k * REPLICAS)) $((k * REPLICAS + REPLICAS - 1)) "$PLAN/stage$k" >>"$conf"
    printf ' %q' "${stage_args[@]}" >>"$conf"
    echo >>"$conf"
  done
  srun --ntasks="$ranks" "${mpi_extra[@]}" --multi-prog "$conf"
  exit $?
fi

mpi=(mpirun -x OPENBLAS_NUM_THREADS -x OMP_NUM_THREADS)
[ -n "${OPENBLAS_CORETYPE:-}" ] && mpi+=(-x OPENBLAS_CORETYPE)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
if [ -n "$hostfile" ]; then
  mpi+=(--hostfile "$hostfile")
elif [ "$ranks" -gt "$(nproc)" ]; then
  mpi+=(--oversubscribe)
fi
mpi+=("${mpi_extra[@]}")
app=()
for ((k = 0; k < STAGES; k++)); do
  [ "$k" -gt 0 ] && app+=(:)
  app+=(-np "$REPLICAS" "$PLAN/stage$k" "${stage_args[@]}")
done
# A session directory of this job's own: Open MPI 4's mpiruns share
# /tmp/ompi.HOST.UID, and one job's cleanup can remove it while another
# job creates its subdirectory ("A call to mkdir was unable to create the
# desired directory", open-mpi/ompi#8510), so jobs started side by side on
# one machine failed at random.
# mpirun replaces this shell (so that signals reach it as before); a
# detached watcher removes the directory once that process is gone.
if [ -z "${OMPI_MCA_orte_tmpdir_base:-}" ]; then
  session="$(mktemp -d "${TMPDIR:-/tmp}/pdc-run.XXXXXX")"
  export OMPI_MCA_orte_tmpdir_base="$session"
  job=$$
  ( (while kill -0 "$job" 2>/dev/null; do sleep 1; done; rm -rf "$session") \
      </dev/null >/dev/null 2>&1 & )
fi
exec "${mpi[@]}" "${app[@]}"
)BASH";

/// Quotes `s` for bash single quotes.
static std::string shellQuote(StringRef s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

LogicalResult mlir::pd::writeLauncher(Location loc, StringRef dir,
                                      const CompilerOptions &o) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "run");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return emitError(loc, "cannot write ") << path << ": " << ec.message();
  os << "#!/usr/bin/env bash\n"
     << "# Launches this pdc plan: every stage replica as one MPI rank.\n"
     << "# Usage: run [--steps N] [--lr X] [--seed S] [--log-every K]\n"
     << "#            [--data DIR | --synthetic] [--save-onnx OUT.onnx]\n"
     << "#            [--print-memory] [--model M.onnx] [--hostfile FILE]\n"
     << "#            [--synthetic-weights] [--check-ties] [--dump-grads DIR]\n"
     << "#            [--trace FILE] [--profile-ops FILE] [--comm thread|sync]\n"
     << "#            [-- extra mpirun/srun arguments]\n"
     << "# Under SLURM (SLURM_JOB_ID set) it uses srun --multi-prog unless\n"
     << "# PDC_USE_MPIRUN is set.\n"
     << "set -euo pipefail\n"
     << "PLAN=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n"
     << "STAGES=" << o.stages << "\n"
     << "REPLICAS=" << o.replicas << "\n"
     << "MODEL=" << shellQuote(o.modelPath) << "\n"
     << kLauncherBody;
  os.close();
  if (os.has_error())
    return emitError(loc, "cannot write ") << path;
  llvm::sys::fs::setPermissions(path, llvm::sys::fs::all_read |
                                          llvm::sys::fs::all_exe |
                                          llvm::sys::fs::owner_write);
  return success();
}
