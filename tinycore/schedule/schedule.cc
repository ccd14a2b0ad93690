#include "tinycore/schedule/schedule.h"

#include <atomic>

#include "absl/container/flat_hash_map.h"
#include "tinycore/error.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/split_reduce.h"

namespace tc::schedule {

UOpRef new_buffer(const std::string& device, DType dtype, int64_t size) {
  static std::atomic<int64_t> next_id{0};
  UOpRef b = UOp::make(Ops::BUFFER, dtype, {}, std::vector<int64_t>{next_id++, size});
  b->buffer = std::make_shared<runtime::Buffer>(runtime::get_device(device), dtype, size);
  return b;
}

bool is_contiguous_buffer(const UOpRef& u) {
  if (u->op == Ops::BUFFER) return true;
  return u->op == Ops::RESHAPE && u->src[0]->op == Ops::BUFFER;
}

namespace {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

bool expands(const UOp& u) {
  if (u.op != Ops::EXPAND) return false;
  const Shape& in = u.src[0]->shape();
  for (size_t i = 0; i < in.size(); i++)
    if (in[i] != u.shape()[i]) return true;
  return false;
}

class Scheduler {
 public:
  // The buffer view holding `n`'s value, scheduling the kernels that compute it.
  UOpRef realize(const UOpRef& n) {
    if (n->realized) return n->realized;
    if (is_contiguous_buffer(n)) return n;
    if (n->op == Ops::CONTIGUOUS) {  // its source's kernel writes the contiguous result itself
      UOpRef view = realize(n->src[0]);
      n->realized = view;
      return view;
    }
    UOpRef value = fuse(n, /*top=*/true);
    UOpRef out = new_buffer(device_of(value), n->dtype, numel(n->shape()));
    items_.push_back(build_item(out, value));
    UOpRef view =
        n->shape() == out->shape() ? out : UOp::make(Ops::RESHAPE, n->dtype, {out}, n->shape());
    n->realized = view;
    return view;
  }

  std::vector<ScheduleItem> take() { return std::move(items_); }

 private:
  // `n` with every part that needs its own kernel replaced by that kernel's buffer. `top` is
  // true while every element of `n` is computed once per output element (no expand above it,
  // and no reduce above it).
  UOpRef fuse(const UOpRef& n, bool top) {
    auto key = std::make_pair(n.get(), top);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    UOpRef out;
    if (n->realized)
      out = n->realized;
    else if (n->op == Ops::BUFFER || n->op == Ops::CONST)
      out = n;
    else if (n->op == Ops::CONTIGUOUS)
      out = realize(n->src[0]);
    else if (n->op == Ops::REDUCE_AXIS && !top)
      out = realize(n);
    else if (UOpRef s = n->op == Ops::REDUCE_AXIS ? split_reduces().rewrite(n) : nullptr)
      out = fuse(s, top);
    else {
      bool child_top = top && n->op != Ops::REDUCE_AXIS && !expands(*n);
      std::vector<UOpRef> src;
      for (const UOpRef& s : n->src) src.push_back(fuse(s, child_top));
      out = n->replace(std::move(src));
    }
    memo_[key] = out;
    keep_.push_back(n);
    return out;
  }

  std::string device_of(const UOpRef& value) {
    for (const UOp* u : value->toposort())
      if (u->op == Ops::BUFFER) return u->buffer->device().name();
    return runtime::default_device();
  }

  // BUFFER leaves become numbered kernel arguments, so the AST does not depend on which buffers
  // it runs on (and equal computations share one compiled kernel).
  ScheduleItem build_item(const UOpRef& out, const UOpRef& value) {
    ScheduleItem item;
    item.bufs.push_back(out);
    absl::flat_hash_map<const UOp*, UOpRef> args;
    std::function<UOpRef(const UOpRef&)> bind = [&](const UOpRef& u) -> UOpRef {
      if (auto it = args.find(u.get()); it != args.end()) return it->second;
      UOpRef r;
      if (u->op == Ops::BUFFER) {
        int64_t i = static_cast<int64_t>(item.bufs.size());
        item.bufs.push_back(u);
        r = global(u, i);
      } else {
        std::vector<UOpRef> src;
        for (const UOpRef& s : u->src) src.push_back(bind(s));
        r = u->replace(std::move(src));
      }
      args[u.get()] = r;
      return r;
    };
    UOpRef v = bind(value);
    UOpRef store = UOp::make(Ops::STORE, dtypes::void_, {global(out, 0), v});
    item.ast = UOp::sink({store});
    return item;
  }

  static UOpRef global(const UOpRef& buf, int64_t i) {
    return UOp::make(Ops::DEFINE_GLOBAL, buf->dtype.as_ptr(), {},
                     std::vector<int64_t>{i, buf->arg_ints()[1]});
  }

  std::vector<ScheduleItem> items_;
  absl::flat_hash_map<std::pair<const UOp*, bool>, UOpRef> memo_;
  std::vector<UOpRef> keep_;
};

}  // namespace

std::vector<ScheduleItem> create_schedule(const std::vector<UOpRef>& roots) {
  Scheduler s;
  for (const UOpRef& r : roots) s.realize(r);
  return s.take();
}

}  // namespace tc::schedule
