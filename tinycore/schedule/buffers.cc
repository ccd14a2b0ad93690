#include "tinycore/schedule/buffers.h"

#include <atomic>

#include "absl/container/flat_hash_set.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"

namespace tc::schedule {

UOpRef new_buffer(const std::string& device, DType dtype, int64_t size) {
  static std::atomic<int64_t> next_id{0};
  UOpRef b = UOp::make(Ops::BUFFER, dtype, {}, std::vector<int64_t>{next_id++, size});
  b->buffer = std::make_shared<runtime::Buffer>(runtime::get_device(device), dtype, size);
  return b;
}

// A walk that stops at the first buffer or copy (reads_rows asks of unfused graphs, whose whole
// toposort reaches back through the model).
std::optional<std::string> device_read(const UOpRef& value) {
  absl::flat_hash_set<const UOp*> seen = {value.get()};
  for (std::vector<const UOp*> pending = {value.get()}; !pending.empty();) {
    const UOp* u = pending.back();
    pending.pop_back();
    if (u->op == Ops::BUFFER) return u->buffer->device().name();
    if (u->op == Ops::COPY) return std::get<std::string>(u->arg);
    for (auto s = u->src.rbegin(); s != u->src.rend(); ++s)  // the first source walked first
      if (seen.insert(s->get()).second) pending.push_back(s->get());
  }
  return std::nullopt;
}

std::string device_of(const UOpRef& value) {
  return device_read(value).value_or(runtime::default_device());
}

bool is_contiguous_buffer(const UOpRef& u) {
  if (u->op == Ops::BUFFER) return true;
  return u->op == Ops::RESHAPE && u->src[0]->op == Ops::BUFFER;
}

const UOpRef& base_buffer(const UOpRef& view) {
  const UOpRef* v = &view;
  while ((*v)->op != Ops::BUFFER && !(*v)->src.empty()) v = &(*v)->src[0];
  return *v;
}

}  // namespace tc::schedule
