#include "tinycore/runtime/cuda_device.h"

#include <cuda.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tinycore/error.h"
#include "tinycore/runtime/dynamic_library.h"
#include "tinycore/runtime/nvrtc.h"

namespace tc::runtime {
namespace {

// The driver API entry points tinycore uses: each as cuda.h names it (which may be a macro for a
// versioned function, e.g. cuMemAlloc for cuMemAlloc_v2), and the symbol with that ABI.
#define TC_CUDA_FUNCTIONS(X)                                                    \
  X(cuInit, "cuInit")                                                           \
  X(cuGetErrorString, "cuGetErrorString")                                       \
  X(cuGetErrorName, "cuGetErrorName")                                           \
  X(cuDriverGetVersion, "cuDriverGetVersion")                                   \
  X(cuDeviceGetCount, "cuDeviceGetCount")                                       \
  X(cuDeviceGet, "cuDeviceGet")                                                 \
  X(cuDeviceGetName, "cuDeviceGetName")                                         \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                               \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2")                                    \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                       \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")                  \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                         \
  X(cuStreamCreate, "cuStreamCreate")                                           \
  X(cuStreamDestroy, "cuStreamDestroy_v2")                                      \
  X(cuStreamSynchronize, "cuStreamSynchronize")                                 \
  X(cuMemAlloc, "cuMemAlloc_v2")                                                \
  X(cuMemFree, "cuMemFree_v2")                                                  \
  X(cuMemHostAlloc, "cuMemHostAlloc")                                           \
  X(cuMemFreeHost, "cuMemFreeHost")                                             \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")                                  \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")                                  \
  X(cuModuleLoadData, "cuModuleLoadData")                                       \
  X(cuModuleUnload, "cuModuleUnload")                                           \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                 \
  X(cuLaunchKernel, "cuLaunchKernel")                                           \
  X(cuEventCreate, "cuEventCreate")                                             \
  X(cuEventDestroy, "cuEventDestroy_v2")                                        \
  X(cuEventRecord, "cuEventRecord")                                             \
  X(cuEventSynchronize, "cuEventSynchronize")                                   \
  /* _v2 (CUDA 12.8) has the same signature; the original is in every driver */ \
  X(cuEventElapsedTime, "cuEventElapsedTime")                                   \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2")                            \
  X(cuStreamEndCapture, "cuStreamEndCapture")                                   \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags")                          \
  X(cuGraphLaunch, "cuGraphLaunch")                                             \
  X(cuGraphExecDestroy, "cuGraphExecDestroy")                                   \
  X(cuGraphDestroy, "cuGraphDestroy")

// libcuda, loaded and initialized once per process; `unavailable` says why it cannot be used.
struct CudaDriver {
  DynamicLibrary lib{{"libcuda.so.1"}};
  std::string unavailable;
#define TC_DECLARE(fn, symbol) decltype(&::fn) fn = nullptr;
  TC_CUDA_FUNCTIONS(TC_DECLARE)
#undef TC_DECLARE

  CudaDriver() {
    if (!lib.loaded()) {
      unavailable = "the NVIDIA driver is not installed: " + lib.error();
      return;
    }
    try {
#define TC_LOAD(fn, symbol) fn = lib.get<decltype(&::fn)>(symbol);
      TC_CUDA_FUNCTIONS(TC_LOAD)
#undef TC_LOAD
    } catch (const Error& e) {
      unavailable = absl::StrCat("the NVIDIA driver is too old: ", e.what());
      return;
    }
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) {
      unavailable = "the NVIDIA driver failed to initialize: cuInit: " + describe(r);
      return;
    }
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count); r != CUDA_SUCCESS)
      unavailable = "the NVIDIA driver cannot count GPUs: cuDeviceGetCount: " + describe(r);
    else if (count == 0)
      unavailable = "the NVIDIA driver finds no CUDA GPU";
  }

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string describe(CUresult r) const {
    const char *name = nullptr, *text = nullptr;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) return absl::StrCat("CUDA error ", r);
    if (cuGetErrorString(r, &text) != CUDA_SUCCESS || !text) return name;
    return absl::StrCat(name, " (", text, ")");
  }
  void check(CUresult r, std::string_view call) const {
    if (r != CUDA_SUCCESS) fail("CUDA: %s failed: %s", call, describe(r));
  }
};

const CudaDriver& driver() {
  static const CudaDriver d;
  return d;
}

// Why the last make_cuda_device() that found a driver and a GPU still failed.
std::mutex failure_mu;
std::string& creation_failure() {
  static std::string s;
  return s;
}

CUdeviceptr handle(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// GPU 0's primary context and the stream every launch and copy goes to; shared by the device,
// its allocator, programs and graphs, so it outlives them all.
class CudaContext {
 public:
  explicit CudaContext(const CudaDriver& cu) : cu(cu) {
    cu.check(cu.cuDeviceGet(&device, 0), "cuDeviceGet");
    cu.check(cu.cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
    try {
      make_current();
      cu.check(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    } catch (const Error&) {
      cu.cuDevicePrimaryCtxRelease(device);
      throw;
    }
  }
  ~CudaContext() {
    cu.cuCtxSetCurrent(ctx);
    cu.cuStreamDestroy(stream);
    cu.cuDevicePrimaryCtxRelease(device);
  }
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  // The driver API acts on the calling thread's current context, and kernels are launched from
  // whichever thread realizes a tensor: every entry point sets it (a cheap thread-local store).
  void make_current() const { cu.check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); }
  void synchronize() const {
    make_current();
    cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }

  const CudaDriver& cu;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
};

// Device memory. Copies go through the device's stream, so they are ordered after the launches
// before them; a copy to the host waits for it.
class CudaAllocator : public Allocator {
 public:
  explicit CudaAllocator(std::shared_ptr<CudaContext> ctx) : ctx_(std::move(ctx)) {}
  ~CudaAllocator() override { clear_cache(); }

  void copyin(void* dst, const void* src, size_t bytes) override {
    ctx_->make_current();
    // Returns once pageable `src` is staged, so the caller may reuse it at once. From pinned
    // memory the DMA reads `src` itself, after the call returns: it is waited for, so a loader
    // may refill the batch as soon as the tensor is made.
    ctx_->cu.check(ctx_->cu.cuMemcpyHtoDAsync(handle(dst), src, bytes, ctx_->stream),
                   "cuMemcpyHtoDAsync");
    if (is_pinned(src)) ctx_->synchronize();
  }
  void copyout(void* dst, const void* src, size_t bytes) override {
    ctx_->make_current();
    ctx_->cu.check(ctx_->cu.cuMemcpyDtoHAsync(dst, handle(src), bytes, ctx_->stream),
                   "cuMemcpyDtoHAsync");
    ctx_->synchronize();
  }
  void* pinned_alloc(size_t bytes) override {
    ctx_->make_current();
    void* p = nullptr;
    ctx_->cu.check(
        ctx_->cu.cuMemHostAlloc(&p, std::max<size_t>(bytes, 1), CU_MEMHOSTALLOC_PORTABLE),
        absl::StrCat("cuMemHostAlloc of ", bytes, " bytes"));
    std::lock_guard<std::mutex> lock(pinned_mu_);
    pinned_[static_cast<const char*>(p)] = bytes;
    return p;
  }
  void pinned_free(void* ptr, size_t) override {
    if (!ptr) return;
    {
      std::lock_guard<std::mutex> lock(pinned_mu_);
      pinned_.erase(static_cast<const char*>(ptr));
    }
    ctx_->make_current();
    ctx_->cu.cuMemFreeHost(ptr);  // called from destructors: nothing to do on failure
  }

 protected:
  void* raw_alloc(size_t bytes) override {
    ctx_->make_current();
    CUdeviceptr p = 0;
    CUresult r = ctx_->cu.cuMemAlloc(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {  // blocks cached for other sizes may make room
      clear_cache();
      r = ctx_->cu.cuMemAlloc(&p, bytes);
    }
    ctx_->cu.check(r, absl::StrCat("cuMemAlloc of ", bytes, " bytes"));
    return reinterpret_cast<void*>(p);
  }
  void raw_free(void* ptr, size_t) override {
    ctx_->make_current();
    ctx_->cu.cuMemFree(handle(ptr));  // called from destructors: nothing to do on failure
  }

 private:
  // Whether `p` lies in a block from pinned_alloc.
  bool is_pinned(const void* p) const {
    const char* c = static_cast<const char*>(p);
    std::lock_guard<std::mutex> lock(pinned_mu_);
    auto it = pinned_.upper_bound(c);
    if (it == pinned_.begin()) return false;
    --it;
    return c < it->first + it->second;
  }

  std::shared_ptr<CudaContext> ctx_;
  mutable std::mutex pinned_mu_;
  std::map<const char*, size_t> pinned_;  // pinned blocks by start address: their sizes
};

// A loaded module; unloaded when the last program from it is gone.
struct CudaModule {
  CudaModule(std::shared_ptr<CudaContext> context, const std::string& name,
             const std::string& image)
      : ctx(std::move(context)) {
    const CudaDriver& cu = ctx->cu;
    ctx->make_current();
    if (CUresult r = cu.cuModuleLoadData(&module, image.c_str()); r != CUDA_SUCCESS) {
      // Code from an NVRTC newer than the driver is the usual cause: say both versions.
      int version = 0;
      cu.cuDriverGetVersion(&version);
      fail(
          "CUDA: loading kernel %s failed: cuModuleLoadData: %s (the driver supports CUDA "
          "%d.%d; NVRTC is %s and needs a driver at least as new)",
          name, cu.describe(r), version / 1000, version % 1000 / 10, nvrtc_version());
    }
  }
  ~CudaModule() {
    ctx->make_current();
    ctx->cu.cuModuleUnload(module);
  }
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;
  std::shared_ptr<CudaContext> ctx;
  CUmodule module = nullptr;
};

class CudaProgram : public Program {
 public:
  CudaProgram(std::shared_ptr<CudaModule> module, const std::string& name, const LaunchSpec& launch)
      : module_(std::move(module)), name_(name), launch_(launch) {
    module_->ctx->cu.check(
        module_->ctx->cu.cuModuleGetFunction(&fn_, module_->module, name.c_str()),
        absl::StrCat("cuModuleGetFunction of kernel ", name));
  }

  // One launch of the whole grid: a GPU kernel cannot be split into shares.
  void run(void* const* bufs, int) override {
    const CudaContext& ctx = *module_->ctx;
    ctx.make_current();
    // cuLaunchKernel takes a pointer to each argument: here, to each buffer's handle.
    constexpr int kInline = 16;
    void* inline_params[kInline];
    std::vector<void*> heap_params;
    void** params = inline_params;
    if (launch_.nargs > kInline) heap_params.resize(launch_.nargs), params = heap_params.data();
    for (int i = 0; i < launch_.nargs; i++) params[i] = const_cast<void**>(&bufs[i]);
    const auto& g = launch_.global;
    const auto& l = launch_.local;
    ctx.cu.check(ctx.cu.cuLaunchKernel(fn_, static_cast<unsigned>(g[0]),
                                       static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2]),
                                       static_cast<unsigned>(l[0]), static_cast<unsigned>(l[1]),
                                       static_cast<unsigned>(l[2]), 0, ctx.stream, params, nullptr),
                 absl::StrCat("cuLaunchKernel of kernel ", name_));
  }
  // A sample of the work is the whole launch, waited for so that it can be timed.
  void run_part(void* const* bufs, int, int) override {
    run(bufs, 1);
    module_->ctx->synchronize();
  }

 private:
  std::shared_ptr<CudaModule> module_;
  std::string name_;
  LaunchSpec launch_;
  CUfunction fn_ = nullptr;
};

class CudaEvent {
 public:
  explicit CudaEvent(const CudaDriver& cu) : cu_(cu) {
    cu.check(cu.cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~CudaEvent() { cu_.cuEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CUevent get() const { return event_; }

 private:
  const CudaDriver& cu_;
  CUevent event_ = nullptr;
};

class CudaGraphImpl : public CudaGraph {
 public:
  CudaGraphImpl(std::shared_ptr<CudaContext> ctx, CUgraph graph)
      : ctx_(std::move(ctx)), graph_(graph) {
    ctx_->cu.check(ctx_->cu.cuGraphInstantiate(&exec_, graph_, 0), "cuGraphInstantiate");
  }
  ~CudaGraphImpl() override {
    ctx_->make_current();
    if (exec_) ctx_->cu.cuGraphExecDestroy(exec_);
    ctx_->cu.cuGraphDestroy(graph_);
  }
  void replay() override {
    ctx_->make_current();
    ctx_->cu.check(ctx_->cu.cuGraphLaunch(exec_, ctx_->stream), "cuGraphLaunch");
  }

 private:
  std::shared_ptr<CudaContext> ctx_;
  CUgraph graph_;
  CUgraphExec exec_ = nullptr;
};

class CudaDeviceImpl : public CudaDevice {
 public:
  explicit CudaDeviceImpl(const CudaDriver& cu)
      : cu_(cu), ctx_(std::make_shared<CudaContext>(cu)), allocator_(ctx_) {
    char name[256] = {};
    cu.check(cu.cuDeviceGetName(name, sizeof name, ctx_->device), "cuDeviceGetName");
    gpu_name_ = name;
    cu.check(cu.cuDeviceTotalMem(&total_memory_, ctx_->device), "cuDeviceTotalMem");
    int cc = 10 * attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
             attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    arch_ = absl::StrCat("sm_", cc);
    max_threads_ = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    max_local_ = {attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                  attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                  attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    max_global_ = {attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                   attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                   attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    // CUBIN for an architecture NVRTC knows; else PTX for the newest one below it, which the
    // driver compiles for the GPU.
    int newest_below = 0;
    for (int a : nvrtc_supported_archs()) {
      if (a == cc) cubin_ = true;
      if (a <= cc) newest_below = std::max(newest_below, a);
    }
    if (!newest_below)
      fail("CUDA: the GPU (%s, %s) is older than NVRTC %s supports", gpu_name_, arch_,
           nvrtc_version());
    compile_arch_ = cubin_ ? arch_ : absl::StrCat("sm_", newest_below);
  }

  const std::string& name() const override { return name_; }
  Language language() const override { return Language::kCuda; }
  Allocator& allocator() override { return allocator_; }
  bool is_accelerator() const override { return true; }
  void synchronize() override { ctx_->synchronize(); }

  const std::string& arch() const override { return arch_; }
  const std::string& gpu_name() const override { return gpu_name_; }
  size_t total_memory() const override { return total_memory_; }
  void* stream() const override { return ctx_->stream; }
  void make_current() const override { ctx_->make_current(); }

  std::shared_ptr<Program> compile(const std::string& fn_name, const std::string& source,
                                   const LaunchSpec& launch) override {
    check_launch(fn_name, launch);
    std::string key =
        absl::StrCat(absl::StrJoin(launch.global, ","), ";", absl::StrJoin(launch.local, ","), ";",
                     launch.nargs, "\n", source);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    std::string image = nvrtc_compile(fn_name, source, compile_arch_, cubin_);
    auto program = std::make_shared<CudaProgram>(std::make_shared<CudaModule>(ctx_, fn_name, image),
                                                 fn_name, launch);
    cache_[key] = program;
    return program;
  }

  double time_ms(const std::function<void()>& launches) override {
    ctx_->make_current();
    CudaEvent start(cu_), end(cu_);
    cu_.check(cu_.cuEventRecord(start.get(), ctx_->stream), "cuEventRecord");
    launches();
    cu_.check(cu_.cuEventRecord(end.get(), ctx_->stream), "cuEventRecord");
    cu_.check(cu_.cuEventSynchronize(end.get()), "cuEventSynchronize");
    float ms = 0;
    cu_.check(cu_.cuEventElapsedTime(&ms, start.get(), end.get()), "cuEventElapsedTime");
    return ms;
  }

  std::unique_ptr<CudaGraph> capture(const std::function<void()>& launches) override {
    ctx_->make_current();
    cu_.check(cu_.cuStreamBeginCapture(ctx_->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              "cuStreamBeginCapture");
    CUgraph graph = nullptr;
    try {
      launches();
    } catch (...) {
      if (cu_.cuStreamEndCapture(ctx_->stream, &graph) == CUDA_SUCCESS && graph)
        cu_.cuGraphDestroy(graph);
      throw;
    }
    cu_.check(cu_.cuStreamEndCapture(ctx_->stream, &graph), "cuStreamEndCapture");
    try {
      return std::make_unique<CudaGraphImpl>(ctx_, graph);
    } catch (const Error&) {
      cu_.cuGraphDestroy(graph);
      throw;
    }
  }

 private:
  int attribute(CUdevice_attribute a) const {
    int v = 0;
    cu_.check(cu_.cuDeviceGetAttribute(&v, a, ctx_->device), "cuDeviceGetAttribute");
    return v;
  }

  // A launch the GPU cannot run is a tinycore bug (codegen sizes launches): say what is wrong
  // before the driver's bare "invalid argument".
  void check_launch(const std::string& fn_name, const LaunchSpec& l) const {
    int64_t threads = 1;
    for (int d = 0; d < 3; d++) {
      if (l.global[d] < 1 || l.global[d] > max_global_[d] || l.local[d] < 1 ||
          l.local[d] > max_local_[d])
        fail(
            "CUDA: kernel %s: launch of [%s] blocks of [%s] threads is outside the GPU's "
            "limits ([%s] blocks of [%s] threads)",
            fn_name, absl::StrJoin(l.global, ", "), absl::StrJoin(l.local, ", "),
            absl::StrJoin(max_global_, ", "), absl::StrJoin(max_local_, ", "));
      threads *= l.local[d];
    }
    if (threads > max_threads_)
      fail("CUDA: kernel %s: %d threads per block, more than the GPU's %d", fn_name, threads,
           max_threads_);
    if (l.nargs < 0) fail("CUDA: kernel %s: %d arguments", fn_name, l.nargs);
  }

  const CudaDriver& cu_;
  std::shared_ptr<CudaContext> ctx_;
  CudaAllocator allocator_;
  std::string name_ = "CUDA", gpu_name_, arch_, compile_arch_;
  size_t total_memory_ = 0;
  bool cubin_ = false;
  int max_threads_ = 0;
  std::array<int64_t, 3> max_local_{}, max_global_{};
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Program>> cache_;
};

// Why a device cannot be made here, before trying: no driver or GPU, or no NVRTC.
std::string probe() {
  if (!driver().unavailable.empty()) return driver().unavailable;
  std::string why;
  if (!nvrtc_available(&why)) return why;
  return "";
}

}  // namespace

std::unique_ptr<Device> make_cuda_device() {
  if (!probe().empty()) return nullptr;
  std::lock_guard<std::mutex> lock(failure_mu);
  try {
    auto device = std::make_unique<CudaDeviceImpl>(driver());
    creation_failure().clear();
    return device;
  } catch (const Error& e) {  // a GPU that cannot be used now (busy, out of memory) is absent
    creation_failure() = e.what();
    return nullptr;
  }
}

std::string cuda_unavailable_reason() {
  if (std::string why = probe(); !why.empty()) return why;
  std::lock_guard<std::mutex> lock(failure_mu);
  return creation_failure();
}

}  // namespace tc::runtime
