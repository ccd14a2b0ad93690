// The runtime: allocator cache, buffers, the device registry, and the CPU JIT compiler.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tinycore/error.h"
#include "tinycore/runtime/allocator.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"

namespace tc::runtime {
namespace {

TEST(Allocator, ReusesFreedBlocksOfTheSameSize) {
  Allocator a;
  void* p = a.alloc(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  a.free(p, 1000);
  EXPECT_GE(a.cached_bytes(), 1000u);
  void* q = a.alloc(1000);
  EXPECT_EQ(p, q);
  EXPECT_EQ(a.cache_hits(), 1u);
  void* r = a.alloc(5000);  // another size: a new block
  EXPECT_NE(r, q);
  a.free(q, 1000);
  a.free(r, 5000);
  a.clear_cache();
  EXPECT_EQ(a.cached_bytes(), 0u);
}

TEST(Buffer, CopiesInAndOut) {
  Buffer b(get_device("CPU"), dtypes::int32, 4);
  EXPECT_FALSE(b.allocated());
  int32_t in[4] = {1, -2, 3, 1 << 30}, out[4] = {};
  b.copyin(in, sizeof in);
  EXPECT_TRUE(b.allocated());
  b.copyout(out, sizeof out);
  for (int i = 0; i < 4; i++) EXPECT_EQ(in[i], out[i]);
  EXPECT_EQ(b.nbytes(), 16u);
}

TEST(Device, RegistryByName) {
  EXPECT_EQ(get_device("cpu").name(), "CPU");
  EXPECT_EQ(&get_device("CPU:0"), &get_device("CPU"));
  try {
    get_device("TPU");
    FAIL() << "no error for an unknown device";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("TPU"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("CPU"));
  }
}

// A device test, not a compute kernel of tinycore: checks the JIT path on its own.
const char* kAddOne = R"(
define void @add_one(ptr %bufs, i64 %core, i64 %ncores) {
  %p0 = load ptr, ptr %bufs
  %a1 = getelementptr ptr, ptr %bufs, i64 1
  %p1 = load ptr, ptr %a1
  %x = load float, ptr %p1
  %y = fadd float %x, 1.0
  store float %y, ptr %p0
  ret void
}
)";

TEST(CpuDevice, CompilesRunsAndCaches) {
  Device& cpu = get_device("CPU");
  auto prog = cpu.compile("add_one", kAddOne);
  float in = 41.5f, out = 0;
  void* bufs[2] = {&out, &in};
  prog->run(bufs);
  EXPECT_EQ(out, 42.5f);
  EXPECT_EQ(cpu.compile("add_one", kAddOne).get(), prog.get());  // cached by source
}

TEST(CpuDevice, InvalidSourceIsAnError) {
  EXPECT_THROW(get_device("CPU").compile("broken", "define void @broken( {"), Error);
}

}  // namespace
}  // namespace tc::runtime
