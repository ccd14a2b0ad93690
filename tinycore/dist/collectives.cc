#include "tinycore/dist/collectives.h"

#include <mutex>
#include <string>

#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/host_function.h"

namespace tc::dist {
namespace {

const char* op_name(ReduceOp op) {
  return op == ReduceOp::kSum ? "sum" : op == ReduceOp::kMax ? "max" : "min";
}

// "mpi.allreduce.sum" and its kin, registered once: their gradient (of the sum) is itself
std::string allreduce_function(ReduceOp op) {
  static std::once_flag once;
  std::call_once(once, [] {
    for (ReduceOp o : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
      std::string name = std::string("mpi.allreduce.") + op_name(o);
      runtime::register_host_function(
          name, {[o](const runtime::HostCall& c) {
                   allreduce(c.bufs[1], c.bufs[0], c.numel, c.dtype, o,
                             absl::StrFormat("%d %s (%s)", c.numel, c.dtype.name(), op_name(o)));
                 },
                 o == ReduceOp::kSum ? name : ""});
    }
  });
  return std::string("mpi.allreduce.") + op_name(op);
}

}  // namespace

Tensor allreduce(const Tensor& x, ReduceOp op) {
  if (!distributed()) return x;
  if (x.device() != "CPU")
    fail("dist.allreduce: MPI reduces host memory; the tensor is on %s (move it with .to(\"CPU\"))",
         x.device());
  return Tensor(UOp::make(Ops::CUSTOM, x.dtype(), {x.uop()}, allreduce_function(op)));
}

void average_gradients(const std::vector<Tensor>& params, int64_t bucket_bytes) {
  if (!distributed()) return;
  const double world = world_size();
  size_t begin = 0;
  while (begin < params.size()) {
    // a bucket: consecutive gradients of one dtype, up to bucket_bytes (at least one)
    std::vector<Tensor> grads;
    int64_t bytes = 0;
    size_t end = begin;
    for (; end < params.size(); end++) {
      std::optional<Tensor> g = params[end].grad();
      if (!g) fail("dist.average_gradients: parameter %d has no gradient", end);
      int64_t b = g->numel() * g->dtype().itemsize();
      if (!grads.empty() && (bytes + b > bucket_bytes || g->dtype() != grads[0].dtype())) break;
      grads.push_back(g->flatten());
      bytes += b;
    }
    Tensor mean = allreduce(grads.size() == 1 ? grads[0] : Tensor::cat(grads)) / world;
    int64_t at = 0;
    for (size_t i = begin; i < end; i++) {
      Tensor p = params[i];
      int64_t n = p.numel();
      p.set_grad(mean.shrink({{at, at + n}}).reshape(p.grad()->shape()));
      at += n;
    }
    begin = end;
  }
}

void broadcast(const std::vector<Tensor>& tensors, int root) {
  if (!distributed()) return;
  for (size_t i = 0; i < tensors.size(); i++) {
    Tensor t = tensors[i];
    std::vector<uint8_t> bytes = t.contiguous().raw_bytes();
    dist::broadcast(
        bytes.data(), static_cast<int64_t>(bytes.size()), root,
        absl::StrFormat("tensor %d of %d (%s)", i, tensors.size(), fmt_shape(t.shape())));
    t.assign(Tensor::from_blob(bytes.data(), t.shape(), t.dtype(), t.device())).realize();
  }
}

}  // namespace tc::dist
