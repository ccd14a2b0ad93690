// How a GPU kernel's loops meet its launch: which output loops become grid dimensions, and which
// reduce loops the threads of a work-group share. codegen/gpudims.h plans it; the C-style
// renderer reads it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/uop/uop.h"

namespace tc::renderer {

// One dimension of the launch grid: the output loops it runs (outermost first; more than one
// when outer loops are merged into z) and its work-group size.
struct GridDim {
  std::vector<const UOp*> ranges;
  int64_t extent = 1, local = 1, groups = 1;
  bool guarded() const { return groups * local != extent; }
};

struct GpuLaunch {
  std::array<GridDim, 3> grid;
  absl::flat_hash_map<const UOp*, size_t> grid_range;  // a grid RANGE -> its dimension
  int64_t group = 1;  // threads sharing each output's reductions (1: a thread per output)
  absl::flat_hash_set<const UOp*> split_loops;  // the loops they share
  // a nest's top loop -> the updates whose partial results are combined after it
  absl::flat_hash_map<const UOp*, std::vector<const UOp*>> combine_after;
  std::vector<const UOp*> shared;  // all of them, in program order
};

// How a grouped reduction holds its partial results in shared memory: bool as a byte.
inline DType shared_dtype(DType d) { return dtypes::is_bool(d) ? dtypes::uint8 : d; }

}  // namespace tc::renderer
