#include "tinycore/schedule/write_order.h"

#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/schedule/buffers.h"

namespace tc::schedule {

WriteOrder write_order(const std::vector<UOpRef>& roots, const std::vector<UOpRef>& targets) {
  std::vector<size_t> written;
  absl::flat_hash_map<const UOp*, size_t> root_of, buffer_of;  // -> the target's index
  for (size_t i = 0; i < targets.size(); i++) {
    if (!targets[i]) continue;
    written.push_back(i);
    root_of.try_emplace(roots[i].get(), i);
    buffer_of[base_buffer(targets[i]).get()] = i;
  }
  WriteOrder order;
  for (const auto& [buffer, i] : buffer_of) order.buffers.insert(buffer);
  // then[i]: the roots waiting for root i; waits[i]: how many root i waits for
  std::vector<std::vector<size_t>> then(targets.size());
  std::vector<int> waits(targets.size(), 0);
  auto before = [&](size_t a, size_t b) { then[a].push_back(b), waits[b]++; };
  for (size_t i : written) {
    const UOp* root = roots[i].get();
    // root i's reads, down to another target's root: its new value, computed and written first
    absl::flat_hash_set<const UOp*> seen = {root};
    for (std::vector<const UOp*> pending = {root}; !pending.empty();) {
      const UOp* u = pending.back();
      pending.pop_back();
      if (auto r = root_of.find(u); r != root_of.end() && u != root) {
        before(r->second, i);
        continue;
      }
      if (auto b = buffer_of.find(u); b != buffer_of.end() && b->second != i) before(i, b->second);
      // a custom gradient's other sources are for its gradient rule: never computed here
      size_t read = u->op == Ops::CUSTOM_GRAD ? 1 : u->src.size();
      for (size_t s = 0; s < read; s++)
        if (seen.insert(u->src[s].get()).second) pending.push_back(u->src[s].get());
    }
  }
  // Kahn's order, the lowest index first among the ready (the same graph, the same schedule)
  std::set<size_t> ready;
  for (size_t i : written)
    if (!waits[i]) ready.insert(i);
  while (!ready.empty()) {
    size_t i = ready.extract(ready.begin()).value();
    order.in_place.push_back(i);
    for (size_t j : then[i])
      if (--waits[j] == 0) ready.insert(j);
  }
  for (size_t i : written)
    if (waits[i] > 0) order.copied.push_back(i);
  return order;
}

bool reads_elementwise(const UOpRef& value, const UOpRef& target) {
  const UOpRef& buf = base_buffer(target);
  // per node (sources first): does it read buf, and only elementwise through target?
  absl::flat_hash_map<const UOp*, std::pair<bool, bool>> at;
  for (const UOp* u : value->toposort()) {
    const bool whole = u == target.get() ||
                       (u->op == Ops::RESHAPE && u->src[0] == buf && u->shape() == target->shape());
    bool reads = u == buf.get() || whole, ok = u != buf.get() || whole;
    if (!reads)
      for (const UOpRef& s : u->src) {
        auto [r, o] = at[s.get()];
        reads = reads || r;
        ok = ok && (!r || (o && (group::is_alu(u->op) || u->op == Ops::DETACH)));
      }
    at[u] = {reads, ok};
  }
  return at[value.get()].second;
}

}  // namespace tc::schedule
