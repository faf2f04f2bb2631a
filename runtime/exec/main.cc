//===- main.cc - main() of every stage executable -----------------------------===//
//
// Initialises MPI (MPI_THREAD_MULTIPLE when available), parses the embedded
// manifest and the command line, checks that the job's shape matches the
// plan and runs the stage. Any failure is
// one line "pdrt: error: stage K: ..." on stderr followed by MPI_Abort, so a
// bad rank takes the whole job down instead of hanging it.
//
//===----------------------------------------------------------------------===//

#include "executor.h"

#include <cblas.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void fatal(int stage, const std::string &message) {
  std::fprintf(stderr, "pdrt: error: stage %d: %s\n", stage, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

pdrt::Status checkPlacement(const pdrt::Manifest &m, int rank, int size) {
  if (size != m.stages * m.replicas)
    return pdrt::Status::error(pdrt::format(
        "the job has %d ranks but the plan needs stages x replicas = %d x %d",
        size, m.stages, m.replicas));
  if (rank / m.replicas != m.stage)
    return pdrt::Status::error(pdrt::format(
        "rank %d runs the executable of stage %d; expected stage %d (launch "
        "with mpirun -np W stage0 : -np W stage1 : ...)",
        rank, m.stage, rank / m.replicas));
  return pdrt::Status::ok();
}

/// Answers the launcher's questions about this executable without MPI:
/// `--blas-core` (the OpenBLAS kernel family in use) and `--manifest`.
bool answerQuery(int argc, char **argv) {
  if (argc != 2)
    return false;
  std::string query = argv[1];
  if (query == "--blas-core")
    std::printf("%s\n", openblas_get_corename());
  else if (query == "--manifest")
    std::printf("%s\n", pd_stage_manifest());
  else
    return false;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (answerQuery(argc, argv))
    return 0;
  // The communication thread (run --comm thread, the default) calls MPI
  // beside the compute thread; PipelineComm checks the level provided.
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) !=
      MPI_SUCCESS) {
    std::fprintf(stderr, "pdrt: error: MPI_Init_thread failed\n");
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  std::string text = pd_stage_manifest();
  pdrt::Manifest m;
  pdrt::Status s = pdrt::parseManifest(text, &m);
  if (!s.isOk())
    fatal(pdrt::manifestStageHint(text), s.message());
  std::vector<std::string> args(argv + 1, argv + argc);
  pdrt::RunOptions opts;
  s = pdrt::parseArgs(args, &opts);
  if (s.isOk())
    s = checkPlacement(m, rank, size);
  if (s.isOk())
    s = pdrt::runStage(m, opts, {pd_stage_manifest, pd_stage_forward,
                                 pd_stage_backward}, rank);
  if (!s.isOk())
    fatal(m.stage, s.message());
  MPI_Finalize();
  return 0;
}
