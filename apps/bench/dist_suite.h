// The dist suite: the all-reduce that data-parallel training runs, as tinycore runs it (an
// all-reduce node in a TinyJit-captured step) beside raw MPI_Allreduce on the same buffers, from
// 4 KB to 64 MB, as nccl-tests' bus bandwidth (algbw * 2(n-1)/n): over shared memory (2 ranks on
// this machine) and over TCP (2 simulated hosts, tools/two_hosts.sh, where this machine can make
// network namespaces); and scaling: MNIST training samples/s on 2 ranks x 1 thread against 1 rank
// x 1 thread (`train` run by mpirun).
#pragma once

#include <vector>

#include "apps/bench/report.h"

namespace bench {

// Where mpirun is missing, says so and returns no case.
std::vector<Result> dist_suite(bool small);

// The environment variable that makes this program one rank of the suite's all-reduce job, and
// that rank's side: rank 0 writes the timings as JSON to `answer`.
inline constexpr const char* kDistRankEnv = "TC_BENCH_DIST_RANK";
int dist_rank_child(const char* answer, bool small);

}  // namespace bench
