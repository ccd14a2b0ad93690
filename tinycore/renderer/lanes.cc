#include "tinycore/renderer/lanes.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"

namespace tc::renderer {

bool Lanes::is_vector(const UOp* u) const {
  return std::binary_search(vectors.begin(), vectors.end(), u);
}

Lanes find_lanes(const std::vector<UOpRef>& program) {
  Lanes lanes;
  absl::flat_hash_map<const UOp*, bool> vec;
  absl::flat_hash_map<const UOp*, const UOp*> assign_of;  // DEFINE_ACC -> its ASSIGN
  for (const UOpRef& u : program)
    if (u->op == Ops::ASSIGN) assign_of[u->src[0].get()] = u.get();
  std::function<bool(const UOp*)> is_vec = [&](const UOp* u) -> bool {
    if (auto it = vec.find(u); it != vec.end()) return it->second;
    bool v = false;
    if (u->op == Ops::LANE) {
      v = true;
      lanes.width = static_cast<int>(u->src[0]->arg_int());
      lanes.lane = u->ref();
    } else if (u->op == Ops::DEFINE_ACC) {
      v = is_vec(assign_of.at(u)->src[1].get());
    } else if (u->op == Ops::ASSIGN) {
      v = is_vec(u->src[1].get());
    } else if (u->op == Ops::HREDUCE) {
      for (const UOpRef& s : u->src) is_vec(s.get());  // its lanes are combined into one value
    } else {
      for (const UOpRef& s : u->src) v = v || is_vec(s.get());
    }
    vec[u] = v;
    return v;
  };
  for (const UOpRef& u : program)
    if (is_vec(u.get())) lanes.vectors.push_back(u.get());
  std::sort(lanes.vectors.begin(), lanes.vectors.end());
  return lanes;
}

UOpRef contiguous_base(const UOpRef& idx, const UOpRef& lane) {
  UOpRef base = subtract_term(idx, lane);
  if (!base) return nullptr;
  for (const UOp* n : base->toposort())
    if (n == lane.get()) return nullptr;
  return base;
}

std::optional<LaneOffsets> short_run(const UOpRef& idx, const UOpRef& lane, int width) {
  // the lane terms' bounds hold every lane's offset, so this span bounds theirs
  std::optional<LaneOffsets> run = lane_offsets(idx, lane, width, 2 * width - 1);
  if (!run) return std::nullopt;
  int64_t first = *std::min_element(run->offsets.begin(), run->offsets.end());
  for (int64_t& o : run->offsets) o -= first;
  run->base = simplify(run->base + UOp::const_int(run->base->dtype, first));
  return run;
}

}  // namespace tc::renderer
