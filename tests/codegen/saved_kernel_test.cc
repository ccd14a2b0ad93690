// Saved kernels: a kernel get_kernel built is read back from disk (as a warm start reads it) with
// the same name, source, launch, opts and counts, and computes the right values; an entry that
// does not parse is no kernel; the key changes with everything that steers codegen.
#include "tinycore/codegen/saved_kernel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "tests/codegen/random_values.h"
#include "tests/temp_cache_dir.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::codegen {
namespace {

// relu(a @ b + 0.25) for a (m, k) and b (k, n): a reduce with an epilogue, one kernel.
struct Product {
  int64_t m = 16, k, n = 32;
  std::vector<float> a = random_values(m * k, 1), b = random_values(k * n, 2);
  schedule::ScheduleItem item;
  explicit Product(int64_t shared = 40) : k(shared) {
    Tensor ta = Tensor(a, Shape{m, k}).realize(), tb = Tensor(b, Shape{k, n}).realize();
    std::vector<schedule::ScheduleItem> items =
        schedule::create_schedule({(ta.matmul(tb) + 0.25f).relu().uop()});
    EXPECT_EQ(items.size(), 1u);
    item = items.back();
  }
  runtime::Device& device() const { return item.bufs[0]->buffer->device(); }
  // The kernel run on the item's buffers, its output read back.
  std::vector<float> run(const Kernel& kernel) const {
    std::vector<void*> ptrs;
    for (const UOpRef& b : item.bufs) ptrs.push_back(b->buffer->ensure_allocated());
    std::vector<float> poison(item.bufs[0]->buffer->size(), -7.f);
    item.bufs[0]->buffer->copyin(poison.data(), poison.size() * 4);
    kernel.binary->run(ptrs.data(), launch_shares(kernel, device()));
    std::vector<float> out(poison.size());
    item.bufs[0]->buffer->copyout(out.data(), out.size() * 4);
    return out;
  }
  void expect_right(const std::vector<float>& got) const {
    ASSERT_EQ(got.size(), static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double want = 0.25;
        for (int64_t l = 0; l < k; l++) want += static_cast<double>(a[i * k + l]) * b[l * n + j];
        ASSERT_NEAR(got[i * n + j], std::max(want, 0.0), 1e-4) << "element " << i << "," << j;
      }
  }
};

TEST_F(TempCacheDir, BuiltKernelIsReadBackWhole) {
  Product p;
  forget_built_kernels();  // built here, whichever test ran before
  std::shared_ptr<const Kernel> built = get_kernel(p.item.ast, p.device());
  ASSERT_EQ(runtime::cache_entries("kernel").size(), 1u);
  std::shared_ptr<Kernel> loaded =
      load_kernel(saved_kernel_key(p.item.ast, p.device()), p.device());
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->name, built->name);
  EXPECT_EQ(loaded->source, built->source);
  EXPECT_EQ(loaded->opts.key(), built->opts.key());
  EXPECT_EQ(loaded->flops, built->flops);
  EXPECT_EQ(loaded->bytes, built->bytes);
  EXPECT_EQ(loaded->parallel, built->parallel);
  EXPECT_EQ(loaded->launch.global, built->launch.global);
  EXPECT_EQ(loaded->launch.local, built->launch.local);
  EXPECT_EQ(loaded->launch.nargs, built->launch.nargs);
  // 16x32 outputs of 40 products each: compiled quickly
  EXPECT_EQ(built->launch.effort, runtime::CompileEffort::kQuick);
  EXPECT_EQ(loaded->launch.effort, built->launch.effort);
  EXPECT_GT(built->flops, 2.0 * p.m * p.n * p.k - 1);
  EXPECT_TRUE(loaded->program.empty());
  p.expect_right(p.run(*built));
  p.expect_right(p.run(*loaded));
}

// A reduce small enough to run on one core is compiled quickly (a device may spend least on it);
// past 1e6 flops and bytes it is compiled as the tiles the heuristic gave it, or with the full
// effort when it is scalar (NOOPT=1), and all compute the product. An elementwise kernel past that
// size is compiled light.
TEST_F(TempCacheDir, EachKernelGetsTheCompileEffortItsWorkNeeds) {
  for (int64_t k : {40, 1000}) {
    Product p(k);
    std::shared_ptr<const Kernel> built = get_kernel(p.item.ast, p.device());
    bool small = built->flops + built->bytes <= 1e6;
    EXPECT_EQ(small, k == 40) << "k " << k << ": " << built->flops << " flops";
    EXPECT_GT(built->opts.lanes, 1) << "k " << k;
    EXPECT_EQ(built->launch.effort,
              small ? runtime::CompileEffort::kQuick : runtime::CompileEffort::kTiled)
        << "k " << k;
    EXPECT_EQ(small_kernel(*built), small) << "k " << k;
    p.expect_right(p.run(*built));
  }
  {
    const char* before = std::getenv("NOOPT");
    std::string saved = before ? before : "";
    setenv("NOOPT", "1", 1);
    Product p(1000);
    std::shared_ptr<const Kernel> scalar = get_kernel(p.item.ast, p.device());
    if (before)
      setenv("NOOPT", saved.c_str(), 1);
    else
      unsetenv("NOOPT");
    EXPECT_EQ(scalar->opts.lanes, 1);
    EXPECT_EQ(scalar->launch.effort, runtime::CompileEffort::kFull);
    p.expect_right(p.run(*scalar));
  }
  std::vector<float> v(1 << 20);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % 1000);
  Tensor x = Tensor(v, Shape{1 << 20}).realize();
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({(x * 2 + 1).uop()});
  ASSERT_EQ(items.size(), 1u);
  std::shared_ptr<const Kernel> big = get_kernel(items[0].ast, items[0].bufs[0]->buffer->device());
  EXPECT_FALSE(small_kernel(*big)) << big->flops + big->bytes;
  EXPECT_EQ(big->launch.effort, runtime::CompileEffort::kLight);
  Tensor y = x * 2 + 1;
  std::vector<float> got = y.data<float>();
  for (size_t i = 0; i < v.size(); i += 4099) ASSERT_EQ(got[i], v[i] * 2 + 1) << i;
}

TEST_F(TempCacheDir, WarmStartLoadsTheSavedKernel) {
  Product p(24);
  forget_built_kernels();
  std::shared_ptr<const Kernel> built = get_kernel(p.item.ast, p.device());
  forget_built_kernels();  // as a new process starts
  std::shared_ptr<const Kernel> loaded = get_kernel(p.item.ast, p.device());
  EXPECT_NE(loaded, built);
  EXPECT_FALSE(built->program.empty());
  EXPECT_TRUE(loaded->program.empty()) << "read from disk, not lowered again";
  EXPECT_EQ(loaded->source, built->source);
  EXPECT_EQ(get_kernel(p.item.ast, p.device()), loaded) << "then kept in memory";
  p.expect_right(p.run(*loaded));
}

TEST_F(TempCacheDir, EntryThatDoesNotParseIsNoKernel) {
  Product p;
  std::string key = saved_kernel_key(p.item.ast, p.device());
  for (const char* junk : {
           "",
           "E_4\n",
           "E_4\n1 2 x\n",
           "E_4\n1 2 0 1 1 1 1 1 1 2 2\n0 4 9 9 0 - 1\nsource",  // an axis past the kernel's
           "E_4\n1 2 0 1 1 1 1 1 1 2 2\nnot opts\nsource",
           "E_4\n1 2 0 1 1 1 1 1 1 2 2\n-1 1 -1 1 0 - 1",           // no source, no last newline
           "E_4\n1 2 0 0 1 1 1 1 1 2 2\n-1 1 -1 1 0 - 1\nsource",   // a grid of 0
           "E_4\n1 2 0 1 1 1 1 1 1 -2 2\n-1 1 -1 1 0 - 1\nsource",  // -2 arguments
           "E_4\n1 2 0 1 1 1 1 1 1 2 2\n-1 1 -1 1 0 - 1\nnot LLVM IR",
       }) {
    runtime::cache_store("kernel", key, junk);
    EXPECT_EQ(load_kernel(key, p.device()), nullptr) << "entry '" << junk << "'";
  }
  // a record cut short is a miss too
  std::shared_ptr<const Kernel> built = get_kernel(p.item.ast, p.device());
  std::filesystem::remove_all(dir_ / "kernel");
  save_kernel(key, *built);
  ASSERT_EQ(runtime::cache_entries("kernel").size(), 1u);
  ASSERT_EQ(cache_files("kernel").size(), 1u);  // one pack
  std::filesystem::resize_file(cache_files("kernel")[0],
                               std::filesystem::file_size(cache_files("kernel")[0]) - 10);
  EXPECT_EQ(runtime::cache_entries("kernel").size(), 0u);
  EXPECT_EQ(load_kernel(key, p.device()), nullptr);
}

TEST(SavedKernel, KeyChangesWithWhatSteersCodegen) {
  Product p;
  std::string plain = saved_kernel_key(p.item.ast, p.device());
  size_t at = plain.find("|build ");
  ASSERT_NE(at, std::string::npos) << "the key names this build";
  std::string id = plain.substr(at + 7, plain.find('|', at + 1) - at - 7);
  EXPECT_EQ(id.size(), 40u) << id;  // ld's default build ID: a SHA-1, in hex
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  for (const char* var : {"NOOPT", "BEAM", "TRANSCENDENTAL", "CHECK_RENDER"}) {
    const char* before = std::getenv(var);
    std::string saved = before ? before : "";
    setenv(var, "3", 1);
    EXPECT_NE(saved_kernel_key(p.item.ast, p.device()), plain) << var;
    if (before)
      setenv(var, saved.c_str(), 1);
    else
      unsetenv(var);
  }
  EXPECT_EQ(saved_kernel_key(p.item.ast, p.device()), plain);
  EXPECT_EQ(saved_kernel_key(Product().item.ast, p.device()), plain);  // new buffers, same AST
  EXPECT_NE(saved_kernel_key(Product(8).item.ast, p.device()), plain);
}

}  // namespace
}  // namespace tc::codegen
