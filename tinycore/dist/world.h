// The processes of one job, on OpenMPI: mpirun launches them, MPI gives each its rank and
// carries their collectives. A process that mpirun did not start is a world of one and never
// initializes MPI. Collectives run under a watchdog: one that has not finished within the
// timeout (a rank died, or its link went silent) ends this process with a message naming the
// rank and the collective, and mpirun then ends the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinycore/dtype.h"

namespace tc::dist {

enum class ReduceOp { kSum, kMax, kMin };

// Joins the job (once; later calls only set the timeout). `timeout_s` bounds every collective.
void init(double timeout_s = 60);
int rank();          // 0 .. world_size() - 1 (0 before init)
int world_size();    // 1 before init, and for a process mpirun did not start
bool distributed();  // world_size() > 1

// The element-wise reduction over every rank of `count` elements of `dtype` at `in`, into `out`
// (which may be `in`): MPI_Allreduce, under the watchdog. `what` names it in a timeout's message.
void allreduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp op,
               const std::string& what);
// Rank `root`'s `bytes` at `data` into every rank's `data`.
void broadcast(void* data, int64_t bytes, int root, const std::string& what);
// One value per rank, in rank order, on every rank.
std::vector<double> allgather(double value, const std::string& what);

}  // namespace tc::dist
