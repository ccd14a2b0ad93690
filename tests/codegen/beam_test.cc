// BEAM search: every neighbouring opts it may pick computes the same result as no opts; the
// winner is cached on disk (the second search reads it, a damaged entry is searched again); and
// BEAM=N through the Tensor API gives correct values.
#include "tinycore/codegen/beam.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/codegen/random_values.h"
#include "tests/temp_cache_dir.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::codegen {
namespace {

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor(random_values(n, seed), shape).realize();
}

schedule::ScheduleItem matmul_item(int64_t m, int64_t k, int64_t n) {
  Tensor a = random_tensor({m, k}, 1), b = random_tensor({k, n}, 2);
  Tensor c = (a.reshape({m, 1, k}) * b.permute({1, 0}).reshape({1, n, k})).sum(2);
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({c.uop()});
  EXPECT_EQ(items.size(), 1u);
  return items[0];
}

std::vector<float> run(const schedule::ScheduleItem& item, const KernelOpts& opts) {
  runtime::Device& dev = item.bufs[0]->buffer->device();
  auto k = build_kernel(lower(item.ast), dev, opts);
  std::vector<void*> ptrs;
  for (const UOpRef& b : item.bufs) ptrs.push_back(b->buffer->ensure_allocated());
  std::memset(ptrs[0], 0xAB, item.bufs[0]->buffer->nbytes());
  k->binary->run(ptrs.data(), launch_shares(*k, dev));
  std::vector<float> out(item.bufs[0]->buffer->size());
  item.bufs[0]->buffer->copyout(out.data(), out.size() * 4);
  return out;
}

TEST(Beam, EveryNeighbourComputesTheSameResult) {
  schedule::ScheduleItem item = matmul_item(32, 24, 64);
  runtime::Device& dev = item.bufs[0]->buffer->device();
  Target target{dev.simd_bytes(), dev.simd_registers(), true};
  std::vector<float> want = run(item, KernelOpts{});
  KernelOpts heuristic = choose_opts(lower(item.ast), target);
  int checked = 0;
  for (const KernelOpts& from : {KernelOpts{}, heuristic})
    for (const KernelOpts& o : neighbours(lower(item.ast), from, target)) {
      std::vector<float> got = run(item, o);
      for (size_t i = 0; i < want.size(); i++)
        ASSERT_NEAR(got[i], want[i], 1e-4) << o.key() << " element " << i;
      checked++;
    }
  EXPECT_GT(checked, 20);
}

TEST_F(TempCacheDir, SecondSearchReadsTheDiskCache) {
  schedule::ScheduleItem item = matmul_item(16, 16, 32);
  runtime::Device& dev = item.bufs[0]->buffer->device();
  int64_t searches = BeamStats::searches, hits = BeamStats::disk_hits;
  KernelOpts first = beam_search(lower(item.ast), dev, 2);
  EXPECT_EQ(BeamStats::searches, searches + 1);
  ASSERT_EQ(cache_files("beam").size(), 1u);
  int64_t timed = BeamStats::timed;
  KernelOpts second = beam_search(lower(item.ast), dev, 2);
  EXPECT_EQ(BeamStats::disk_hits, hits + 1);
  EXPECT_EQ(BeamStats::timed, timed);  // nothing compiled or timed
  EXPECT_EQ(second.key(), first.key());
  // another width is another entry
  beam_search(lower(item.ast), dev, 1);
  EXPECT_EQ(cache_files("beam").size(), 2u);
}

TEST_F(TempCacheDir, DamagedEntryIsSearchedAgain) {
  schedule::ScheduleItem item = matmul_item(8, 16, 16);
  runtime::Device& dev = item.bufs[0]->buffer->device();
  beam_search(lower(item.ast), dev, 2);
  ASSERT_EQ(cache_files("beam").size(), 1u);
  for (const char* junk : {"", "garbage", "0 4 9 2 1 -", "-1 1 -1 1 0 0,0,7"}) {
    std::ofstream(cache_files("beam")[0]) << junk;
    int64_t searches = BeamStats::searches;
    KernelOpts o = beam_search(lower(item.ast), dev, 2);
    EXPECT_EQ(BeamStats::searches, searches + 1) << "entry '" << junk << "'";
    std::vector<float> got = run(item, o), want = run(item, KernelOpts{});
    for (size_t i = 0; i < want.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-4);
  }
}

TEST_F(TempCacheDir, BeamThroughTheTensorApi) {
  setenv("BEAM", "2", 1);
  Tensor a = random_tensor({24, 40}, 3), b = random_tensor({40, 8}, 4);
  std::vector<float> got = a.matmul(b).data<float>();
  unsetenv("BEAM");
  std::vector<float> av = a.data<float>(), bv = b.data<float>();
  for (int i = 0; i < 24; i++)
    for (int j = 0; j < 8; j++) {
      double want = 0;
      for (int k = 0; k < 40; k++) want += double(av[i * 40 + k]) * bv[k * 8 + j];
      ASSERT_NEAR(got[i * 8 + j], want, 1e-4) << i << "," << j;
    }
  EXPECT_GE(cache_files("beam").size(), 1u);
}

}  // namespace
}  // namespace tc::codegen
