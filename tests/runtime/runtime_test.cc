// The runtime: allocator cache, buffers, the device registry, and the CPU JIT compiler.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "tests/temp_cache_dir.h"
#include "tinycore/error.h"
#include "tinycore/runtime/allocator.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/cpu_device.h"
#include "tinycore/runtime/device.h"
#include "tinycore/runtime/disk_cache.h"

namespace tc::runtime {
namespace {

TEST(Allocator, ReusesFreedBlocksOfTheSameSize) {
  HostAllocator a;
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

TEST(Allocator, LargeBlocksAreWholeAndReused) {
  HostAllocator a;
  size_t bytes = (size_t{5} << 20) + 12;  // past a huge page, not a multiple of one
  auto* p = static_cast<unsigned char*>(a.alloc(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  auto mark = [](size_t i) { return static_cast<unsigned char>(i >> 12); };
  for (size_t i = 0; i < bytes; i += 4096) p[i] = mark(i);
  p[bytes - 1] = 7;
  size_t wrong = 0;
  for (size_t i = 0; i < bytes; i += 4096) wrong += p[i] != mark(i);
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(p[bytes - 1], 7);
  a.free(p, bytes);
  EXPECT_EQ(a.alloc(bytes), p);  // cached, not mapped again
  a.free(p, bytes);
  a.clear_cache();
  EXPECT_EQ(a.cached_bytes(), 0u);
}

TEST(Allocator, LargeBlocksOfNearbySizesShareOneBlock) {
  HostAllocator a;
  size_t mb = size_t{1} << 20;
  void* p = a.alloc(5 * mb + 12);
  a.free(p, 5 * mb + 12);
  void* nearby = a.alloc(6 * mb - 64);
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_NE(nearby, p);  // exactly sized for the redzones: another block
  EXPECT_EQ(a.cache_hits(), 0u);
#else
  EXPECT_EQ(nearby, p);  // both take three whole huge pages
  EXPECT_EQ(a.cache_hits(), 1u);
#endif
  a.free(nearby, 6 * mb - 64);
  void* q = a.alloc(6 * mb + 64);  // past them: a block of its own
  EXPECT_NE(q, nearby);
  a.free(q, 6 * mb + 64);
  a.clear_cache();
}

// Free page reporting is read from a virtio balloon's feature bits (bit 5), in a folder laid out
// as /sys/bus/virtio/devices is.
TEST_F(TempCacheDir, FreeMemoryTakenBackOnlyWhereABalloonReportsIt) {
  auto device = [&](const std::string& name, const std::string& id, const std::string& bits) {
    std::filesystem::create_directories(dir_ / "virtio" / name);
    std::ofstream(dir_ / "virtio" / name / "device") << id << "\n";
    std::ofstream(dir_ / "virtio" / name / "features") << bits << "\n";
  };
  EXPECT_FALSE(hypervisor_takes_free_memory(dir_ / "virtio"));  // no such folder
  device("virtio0", "0x0001", "1111111111");                    // a network card
  EXPECT_FALSE(hypervisor_takes_free_memory(dir_ / "virtio"));
  device("virtio3", "0x0005", "1111101111");  // a balloon without reporting
  EXPECT_FALSE(hypervisor_takes_free_memory(dir_ / "virtio"));
  device("virtio3", "0x0005", "0110010100");  // with it (as on a Firecracker VM)
  EXPECT_TRUE(hypervisor_takes_free_memory(dir_ / "virtio"));
}

TEST(Buffer, ReleaseReturnsTheMemoryAndTheNextUseAllocatesAgain) {
  Device& cpu = get_device("CPU");
  Buffer b(cpu, dtypes::float32, 333);  // an odd size no other test's block has
  cpu.allocator().clear_cache();
  void* p = b.ensure_allocated();
  b.release();
  EXPECT_FALSE(b.allocated());
  EXPECT_EQ(cpu.allocator().cached_bytes(), 1344u);  // 1332 bytes, in whole cache lines
  EXPECT_EQ(b.ensure_allocated(), p);                // the cached block again
  EXPECT_EQ(cpu.allocator().cached_bytes(), 0u);
}

// A size no memory holds is a tc::Error naming it, never std::bad_alloc escaping to terminate
// (an ONNX model's shape of 2^58).
TEST(Buffer, AnAllocationNoMemoryHoldsIsAnErrorNamingItsSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan reports a failed malloc itself (allocator_may_return_null=0)";
#endif
  Buffer b(get_device("CPU"), dtypes::float32, size_t{1} << 58);
  try {
    b.ensure_allocated();
    ADD_FAILURE() << "allocated 2^60 bytes";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("CPU: out of memory allocating 1152921504606846976 "
                                             "bytes (288230376151711744 float values)"));
  }
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

// Every device kind is known; those that cannot run here say why, and are not the default.
TEST(Device, UnavailableDevicesSayWhy) {
  EXPECT_THAT(known_devices(), ::testing::ElementsAre("CUDA", "HIP", "CL", "CPU"));
  std::vector<std::string> available = available_devices();
  EXPECT_THAT(available, ::testing::Contains("CPU"));
  EXPECT_EQ(unavailable_reason("CPU"), "");
  for (const std::string& name : known_devices()) {
    if (std::find(available.begin(), available.end(), name) != available.end()) continue;
    std::string why = unavailable_reason(name);
    EXPECT_FALSE(why.empty()) << name;
    try {
      get_device(name);
      FAIL() << "no error for the unavailable device " << name;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("not available on this machine"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr(why));
    }
  }
  // the default is an accelerator when there is one, else the CPU
  const std::string& d = default_device();
  if (!std::getenv("DEVICE")) {
    EXPECT_TRUE(d == "CPU" || get_device(d).is_accelerator()) << d;
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

// What add_one computes from 41.5, compiled by `device`.
float run_add_one(Device& device) {
  float in = 41.5f, out = 0;
  void* bufs[2] = {&out, &in};
  device.compile("add_one", kAddOne)->run(bufs);
  return out;
}

// A long process that compiles ever new kernels keeps the code of those it holds and of the last
// TC_KERNEL_CACHE: before, every kernel's mappings stayed until vm.max_map_count (about 65,000)
// ran out, and a 30-minute fuzz run died with "JIT session error: Cannot allocate memory".
TEST_F(TempCacheDir, TheCodeOfKernelsNoOneHoldsIsFreed) {
  setenv("TC_KERNEL_CACHE", "4", 1);
  std::unique_ptr<Device> cpu = make_cpu_device();
  auto add = [&](int k) {  // a kernel of its own for each k: x + k
    std::string source = kAddOne;
    source.replace(source.find("1.0"), 3, std::to_string(k) + ".0");
    return cpu->compile("add_one", source);
  };
  auto mappings = [] {
    std::ifstream maps("/proc/self/maps");
    return std::count(std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>(), '\n');
  };
  std::shared_ptr<Program> kept = add(1);
  for (int k = 2; k < 10; k++) add(k);  // the cache full, the allocators warm
  int64_t before = mappings();
  for (int k = 10; k < 300; k++) {
    float in = 0.5f, out = 0;
    void* bufs[2] = {&out, &in};
    add(k)->run(bufs);
    ASSERT_EQ(out, 0.5f + static_cast<float>(k));
  }
  int64_t grown = mappings() - before;
  unsetenv("TC_KERNEL_CACHE");
  EXPECT_LT(grown, 60) << "290 kernels compiled and let go kept " << grown << " new mappings";
  float in = 41.5f, out = 0;  // the kernel held all along still runs
  void* bufs[2] = {&out, &in};
  kept->run(bufs);
  EXPECT_EQ(out, 42.5f);
}

// The machine code goes to the disk cache, and a fresh device (a new process) loads it from there
// (compiling nothing: no entry is added); a pack whose entry is cut short, replaced by junk or
// altered is read past, and the kernel compiled again.
TEST_F(TempCacheDir, MachineCodeIsCachedOnDisk) {
  EXPECT_EQ(run_add_one(*make_cpu_device()), 42.5f);
  auto stored = cache_entries("cpu");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_NE(stored[0].first.find("define void @add_one"), std::string::npos);  // keyed by source
  EXPECT_EQ(stored[0].second.substr(0, 4),
            "\x7f"
            "ELF");  // an object file
  EXPECT_EQ(run_add_one(*make_cpu_device()), 42.5f);
  EXPECT_EQ(cache_entries("cpu").size(), 1u);  // loaded from disk

  ASSERT_EQ(cache_files("cpu").size(), 1u);  // one pack
  std::string pack = cache_files("cpu")[0];
  std::optional<std::string> bytes = read_cache_file(pack);
  ASSERT_TRUE(bytes);
  std::string altered = *bytes;
  altered[altered.size() - 100] ^= 1;  // in the object code: its checksum no longer matches
  for (const std::string& damaged :
       {bytes->substr(0, bytes->size() - 10), std::string("junk"), altered}) {
    write_cache_file(pack, damaged);
    EXPECT_EQ(cache_entries("cpu").size(), 0u);
    EXPECT_EQ(run_add_one(*make_cpu_device()), 42.5f);
    ASSERT_EQ(cache_entries("cpu").size(), 1u);  // compiled again, found past the damage
    EXPECT_EQ(cache_entries("cpu")[0], stored[0]);
    EXPECT_EQ(run_add_one(*make_cpu_device()), 42.5f);
    EXPECT_EQ(cache_entries("cpu").size(), 1u);
  }
}

// Another process's pack is found: a key stored there is a hit here, once it appears.
TEST_F(TempCacheDir, EntriesOfOtherProcessesAreFound) {
  EXPECT_EQ(cache_lookup("cpu", "theirs"), std::nullopt);
  cache_store("cpu", "theirs", "their output");
  ASSERT_EQ(cache_files("cpu").size(), 1u);
  std::filesystem::path ours = cache_files("cpu")[0];
  std::filesystem::rename(ours, dir_ / "cpu" / "1-1.pack");  // as if another process wrote it
  cache_store("cpu", "mine", "my output");
  EXPECT_EQ(cache_lookup("cpu", "theirs"), "their output");
  EXPECT_EQ(cache_lookup("cpu", "mine"), "my output");
  EXPECT_EQ(cache_files("cpu").size(), 2u);
}

// A pack whose first record's header is damaged is read from the next record on, found by its
// magic: here one that straddles two of the 1 MiB pieces the search reads (the search starts one
// byte into the pack), so the overlap between pieces must catch it.
TEST_F(TempCacheDir, ARecordPastAMegabyteOfDamageIsFound) {
  const std::string key = "big";
  const size_t header = 48, straddle = (size_t{1} << 20) - 3;  // where the next magic starts
  cache_store("data", key, std::string(straddle - header - key.size(), 'x'));
  cache_store("data", "small", "after it");
  ASSERT_EQ(cache_files("data").size(), 1u);
  std::string pack = cache_files("data")[0];
  std::string bytes = read_cache_file(pack).value();
  ASSERT_EQ(bytes.substr(straddle, 6), "tcpack");  // the second record starts there
  bytes[8] ^= 1;                                   // the first header's key hash
  write_cache_file(pack, bytes);
  auto stored = cache_entries("data");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0], std::make_pair(std::string("small"), std::string("after it")));
}

// A loop: out[0] = the sum of in[0..n), n = 1000.
const char* kSum = R"(
define void @sum(ptr %bufs, i64 %core, i64 %ncores) {
entry:
  %p0 = load ptr, ptr %bufs
  %a1 = getelementptr ptr, ptr %bufs, i64 1
  %p1 = load ptr, ptr %a1
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc2, %loop ]
  %pi = getelementptr float, ptr %p1, i64 %i
  %x = load float, ptr %pi
  %acc2 = fadd float %acc, %x
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, 1000
  br i1 %done, label %exit, label %loop
exit:
  store float %acc2, ptr %p0
  ret void
}
)";

// A quick, light or tiled kernel is compiled with less optimization, a full one with all of it:
// all compute the same, and each effort is its own disk cache entry (one never stands in for
// another).
TEST_F(TempCacheDir, EachCompileEffortIsAnEntryOfItsOwn) {
  std::vector<float> in(1000);
  double want = 0;
  for (size_t i = 0; i < in.size(); i++) want += in[i] = 0.5f + static_cast<float>(i % 7);
  for (CompileEffort effort : {CompileEffort::kQuick, CompileEffort::kLight, CompileEffort::kTiled,
                               CompileEffort::kFull}) {
    LaunchSpec launch;
    launch.effort = effort;
    float out = 0;
    void* bufs[2] = {&out, in.data()};
    make_cpu_device()->compile("sum", kSum, launch)->run(bufs);
    EXPECT_EQ(out, static_cast<float>(want)) << effort_name(effort);  // integers: exact
  }
  auto stored = cache_entries("cpu");
  ASSERT_EQ(stored.size(), 4u);
  for (const char* effort : {"|light|", "|quick|", "|tiled|"})
    EXPECT_EQ(std::count_if(
                  stored.begin(), stored.end(),
                  [&](const auto& entry) { return entry.first.find(effort) != std::string::npos; }),
              1)
        << effort;
}

// A cache file of `kb` KiB last written `hours` ago.
std::filesystem::path aged_file(const std::filesystem::path& path, int kb, int hours) {
  write_cache_file(path.string(), std::string(static_cast<size_t>(kb) << 10, 'x'));
  std::filesystem::last_write_time(
      path, std::filesystem::file_time_type::clock::now() - std::chrono::hours(hours));
  return path;
}

// Over its limit, the cache loses its least recently used files until it takes 3/4 of it; under
// it, only the temporary files of writers that died.
TEST_F(TempCacheDir, PruningRemovesTheLeastRecentlyUsed) {
  std::vector<std::filesystem::path> files;  // oldest first, in two kinds
  for (int i = 0; i < 8; i++)
    files.push_back(aged_file(dir_ / (i % 2 ? "cpu" : "kernel") / std::to_string(i), 100, 8 - i));
  auto fresh_tmp = aged_file(dir_ / "cpu" / "x.bin.tmp1.0", 1, 0);
  auto dead_tmp = aged_file(dir_ / "cpu" / "y.bin.tmp2.0", 1, 2);

  EXPECT_EQ(prune_cache(1000 << 10), 1u << 10);  // under the limit: the dead writer's file only
  EXPECT_FALSE(std::filesystem::exists(dead_tmp));
  EXPECT_TRUE(std::filesystem::exists(fresh_tmp));
  for (const auto& f : files) EXPECT_TRUE(std::filesystem::exists(f)) << f;

  // 801 KiB over a 500 KiB limit: the 5 oldest go, leaving 301 KiB (under 375)
  EXPECT_EQ(prune_cache(500 << 10), 500u << 10);
  for (size_t i = 0; i < files.size(); i++)
    EXPECT_EQ(std::filesystem::exists(files[i]), i >= 5) << files[i];
  EXPECT_TRUE(std::filesystem::exists(fresh_tmp));
}

TEST_F(TempCacheDir, AHitIsRecentlyUsed) {
  cache_store("cpu", "key", "output");
  std::filesystem::path entry = cache_files("cpu").at(0);
  auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(10);
  std::filesystem::last_write_time(entry, old);
  EXPECT_EQ(cache_lookup("cpu", "key"), "output");
  EXPECT_GT(std::filesystem::last_write_time(entry), old + std::chrono::hours(9));
}

TEST(DiskCache, LimitComesFromTheEnvironment) {
  setenv("TC_CACHE_MAX_MB", "3", 1);
  EXPECT_EQ(cache_limit_bytes(), 3u << 20);
  setenv("TC_CACHE_MAX_MB", "0", 1);  // no limit
  EXPECT_EQ(cache_limit_bytes(), 0u);
  unsetenv("TC_CACHE_MAX_MB");
  EXPECT_EQ(cache_limit_bytes(), 2048u << 20);
}

TEST(CpuDevice, InvalidSourceIsAnError) {
  EXPECT_THROW(get_device("CPU").compile("broken", "define void @broken( {"), Error);
}

}  // namespace
}  // namespace tc::runtime
