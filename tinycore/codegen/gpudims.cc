#include "tinycore/codegen/gpudims.h"

#include <algorithm>
#include <limits>

#include "tinycore/renderer/dialects.h"

namespace tc::codegen {
namespace {

using renderer::GridDim;

constexpr int64_t kMaxThreads = 256;  // threads in one work-group
// When the threads of a work-group share each output's reduction (see reduce_nests): reductions
// of at least kLongReduce iterations, or of kShortReduce over at most kFewOutputs outputs, where
// there are at most kManyOutputs (past that, a thread per output already fills a GPU). Their
// partial results take at most kMaxSharedBytes of shared memory.
constexpr int64_t kLongReduce = 256, kShortReduce = 16;
constexpr int64_t kFewOutputs = 2048, kManyOutputs = 65536;
constexpr int64_t kMaxSharedBytes = 16384;

int64_t pow2_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}
int64_t pow2_at_most(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

class Planner {
 public:
  Planner(const std::vector<UOpRef>& program, std::array<int64_t, 3> max_groups)
      : program_(program), max_groups_(max_groups) {}

  renderer::GpuLaunch plan(int output_dims) {
    plan_group(output_dims);
    return std::move(plan_);
  }

 private:
  // The output loops that enclose everything after them (their ENDs end the program), with
  // constant trip counts, become grid dimensions from the innermost: x, then y, then z, which
  // takes the remaining ones merged, with at most `budget` threads in a work-group. A loop with
  // more work-groups than its dimension allows stays a loop.
  void choose_grid(int output_dims, int64_t budget) {
    std::vector<const UOp*> chain;  // innermost first
    for (auto it = program_.rbegin(); it != program_.rend() && (*it)->op == Ops::END; ++it) {
      const UOp* r = (*it)->src[0].get();
      if (r->arg_int() < output_dims && r->src[0]->op == Ops::CONST) chain.push_back(r);
    }
    std::reverse(chain.begin(), chain.end());  // the last END closes the outermost loop
    auto finish = [&](GridDim& d) {
      d.local = std::min(pow2_at_least(d.extent), budget);
      d.groups = std::max<int64_t>(1, ceil_div(d.extent, d.local));
      budget /= d.local;
    };
    size_t slot = 0;
    for (const UOp* r : chain) {
      if (slot == 3) break;
      GridDim& d = plan_.grid[slot];
      int64_t e = r->src[0]->arg_int();
      bool fits = e == 0 || d.extent <= std::numeric_limits<int64_t>::max() / e;
      if (fits) {
        int64_t extent = d.extent * e;
        fits = ceil_div(extent, std::min(pow2_at_least(extent), budget)) <= max_groups_[slot];
      }
      if (!fits) {
        if (slot == 2 && !d.ranges.empty()) break;  // z is full: the outer loops stay loops
        continue;                                   // this one stays a loop
      }
      d.ranges.insert(d.ranges.begin(), r);
      d.extent *= e;
      plan_.grid_range[r] = slot;
      if (slot < 2) finish(plan_.grid[slot++]);
    }
    if (slot == 2 && !plan_.grid[2].ranges.empty()) finish(plan_.grid[2]);
  }

  // A loop nest off the grid: a top-level reduce loop and those directly nested in it, one in
  // the other; its accumulators are updated in the innermost (`split`) loop.
  struct Nest {
    const UOp* top = nullptr;
    const UOp* split = nullptr;
    std::vector<const UOp*> updates;  // the ASSIGNs, one per accumulator
  };

  // The program's reduce nests when its threads can share them: every loop off the grid is a
  // reduce loop in a nest, accumulators are defined outside the nests and updated in the
  // innermost loop of theirs, read only after it, and every STORE is outside the nests (so the
  // barriers that follow a nest are reached by every thread). Else none.
  std::vector<Nest> reduce_nests(int output_dims) const {
    std::vector<Nest> nests;
    std::vector<const UOp*> open;  // the loops off the grid around this point, outermost first
    for (const UOpRef& u : program_) {
      bool inside = !open.empty();
      for (const UOpRef& x : u->src)  // an accumulator of this nest read before it is done
        if (x->op == Ops::ASSIGN && inside && u->op != Ops::ASSIGN &&
            std::find(nests.back().updates.begin(), nests.back().updates.end(), x.get()) !=
                nests.back().updates.end())
          return {};
      if (u->op == Ops::RANGE && !plan_.grid_range.contains(u.get())) {
        if (u->arg_int() < output_dims) return {};  // an output loop left off the grid
        if (!inside) {
          nests.push_back({.top = u.get(), .split = u.get(), .updates = {}});
        } else if (nests.back().split != open.back() || !nests.back().updates.empty()) {
          return {};  // not a chain, or updates outside its innermost loop
        } else {
          nests.back().split = u.get();
        }
        open.push_back(u.get());
      } else if (u->op == Ops::END && !plan_.grid_range.contains(u->src[0].get())) {
        open.pop_back();
      } else if (u->op == Ops::DEFINE_ACC || u->op == Ops::STORE) {
        if (inside) return {};
      } else if (u->op == Ops::ASSIGN) {
        if (!inside || open.back() != nests.back().split) return {};
        nests.back().updates.push_back(u.get());
      }
    }
    return nests;
  }

  // Groups the program's reductions where that pays (see kLongReduce), else the usual grid.
  void plan_group(int output_dims) {
    plan_ = {};
    choose_grid(output_dims, 1);  // a work-group per output
    std::vector<Nest> nests = reduce_nests(output_dims);
    const auto& grid = plan_.grid;
    int64_t outputs = grid[0].extent * grid[1].extent * grid[2].extent, longest = 0,
            shared_bytes = 0;
    for (const Nest& n : nests) {
      if (n.split->src[0]->op == Ops::CONST)
        longest = std::max(longest, n.split->src[0]->arg_int());
      for (const UOp* a : n.updates)
        shared_bytes += kMaxThreads * renderer::shared_dtype(a->dtype).itemsize();
    }
    bool pays = outputs <= kManyOutputs &&
                (longest >= kLongReduce || (outputs <= kFewOutputs && longest >= kShortReduce));
    if (!pays || shared_bytes > kMaxSharedBytes) {
      plan_ = {};
      choose_grid(output_dims, kMaxThreads);
      return;
    }
    plan_.group = std::min(kMaxThreads, pow2_at_most(longest));
    for (const Nest& n : nests) {
      plan_.split_loops.insert(n.split);
      plan_.combine_after[n.top] = n.updates;
      plan_.shared.insert(plan_.shared.end(), n.updates.begin(), n.updates.end());
    }
  }

  const std::vector<UOpRef>& program_;
  std::array<int64_t, 3> max_groups_;
  renderer::GpuLaunch plan_;
};

}  // namespace

renderer::GpuLaunch plan_gpu_launch(const std::vector<UOpRef>& program, int output_dims,
                                    runtime::Language language) {
  return Planner(program, renderer::dialect(language).max_groups).plan(output_dims);
}

renderer::RenderedKernel render_gpu(runtime::Language language, const std::string& name,
                                    const std::vector<UOpRef>& program, int output_dims) {
  return renderer::render_cstyle(language, name, program,
                                 plan_gpu_launch(program, output_dims, language));
}

}  // namespace tc::codegen
