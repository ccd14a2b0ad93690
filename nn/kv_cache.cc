#include "nn/kv_cache.h"

#include <cmath>
#include <limits>

namespace tc::nn {

Tensor attend_cached(Tensor& cache_k, Tensor& cache_v, const Tensor& q, const Tensor& k,
                     const Tensor& v, const Tensor& positions) {
  const int64_t batch = q.shape()[0], heads = q.shape()[2], hd = q.shape()[3];
  const int64_t kv_heads = cache_k.shape()[1], slots = cache_k.shape()[2];
  Tensor slot = Tensor::arange(0, static_cast<double>(slots), 1, dtypes::int32);
  Tensor pos = positions.cast(dtypes::int32).reshape({batch, 1, 1, 1});
  // the masked writes narrow to the one slot (codegen/narrow.h)
  Tensor here = slot.reshape({1, 1, slots, 1}).eq(pos);
  cache_k.assign(here.where(k.transpose(1, 2), cache_k));
  cache_v.assign(here.where(v.transpose(1, 2), cache_v));
  realize_all({cache_k, cache_v});
  // (B, kv_heads, group, hd) queries against (B, kv_heads, slots, hd) keys; `seen` gates every
  // read of a slot, a key's and value's too. m and l are kernels of their own, so that the
  // probabilities are not a tensor over the slots (only the scores are, whose rest is zeros).
  Tensor seen = slot.reshape({1, 1, 1, slots}).lt(pos + 1);  // (B, 1, 1, slots)
  Tensor known = seen.reshape({batch, 1, slots, 1});
  auto cached = [&](const Tensor& c) {
    return known.where(c.cast(dtypes::float32), 0.0);
  };
  Tensor s = q.cast(dtypes::float32)
                 .reshape({batch, kv_heads, heads / kv_heads, hd})
                 .matmul(cached(cache_k).transpose(2, 3)) *
             (1.0 / std::sqrt(static_cast<double>(hd)));
  Tensor m = seen.where(s, -std::numeric_limits<double>::infinity()).max(-1, true).contiguous();
  Tensor e = (s - m).exp();
  Tensor l = seen.where(e, 0.0).sum(-1, true).contiguous();
  return seen.where(e / l, 0.0)
      .matmul(cached(cache_v))
      .reshape({batch, heads, 1, hd})
      .cast(q.dtype());
}

}  // namespace tc::nn
