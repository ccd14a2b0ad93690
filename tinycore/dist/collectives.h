// Collectives over the job's ranks (world.h) as Tensor operations. allreduce is a node of the
// graph (a host function, runtime/host_function.h): it runs where the step needs it, its gradient
// is an all-reduce of the gradient, and a TinyJit replay runs it again in order, so a captured
// training step includes its collectives. In a world of one they are the identity.
#pragma once

#include <cstdint>
#include <vector>

#include "tinycore/dist/world.h"
#include "tinycore/tensor.h"

namespace tc::dist {

// The element-wise `op` of x over every rank (same shape and dtype on each; host memory).
Tensor allreduce(const Tensor& x, ReduceOp op = ReduceOp::kSum);

// Replaces every parameter's gradient by its mean over the ranks: the gradients, in parameter
// order, go in buckets of at most `bucket_bytes` (PyTorch DDP's 25 MB), each one all-reduce.
// Every rank must pass the same parameters in the same order.
void average_gradients(const std::vector<Tensor>& params, int64_t bucket_bytes = 25 << 20);

// Each tensor's values on rank `root` written into the same tensor on every rank (realized, in
// place): the start of a data-parallel run, where every replica begins from rank 0's weights.
void broadcast(const std::vector<Tensor>& tensors, int root = 0);

}  // namespace tc::dist
