#include "tinycore/tensor/layout.h"

#include <vector>

#include "tinycore/error.h"

namespace tc {

Tensor blocked_copy(const Tensor& t, int axis, int64_t block) {
  const int64_t size = t.shape()[axis];
  TC_CHECK(block > 0 && size % block == 0, "blocked_copy: block ", block, " does not divide axis ",
           axis, " of ", fmt_shape(t.shape()));
  const bool split = block != size;  // else the axis only moves last
  Shape cut = t.shape();
  if (split) cut[axis] = size / block, cut.insert(cut.begin() + axis + 1, block);
  const int inner = split ? axis + 1 : axis, cut_nd = static_cast<int>(cut.size());
  std::vector<int> order;  // the block index outermost, the other axes, the block innermost
  if (split) order.push_back(axis);
  for (int j = 0; j < cut_nd; j++)
    if (j != inner && !(split && j == axis)) order.push_back(j);
  order.push_back(inner);
  std::vector<int> back(order.size());
  for (int j = 0; j < cut_nd; j++) back[order[j]] = j;
  return t.reshape(cut).permute(order).contiguous().permute(back).reshape(t.shape());
}

}  // namespace tc
