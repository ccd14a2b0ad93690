#include "tinycore/runtime/cl_device.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/runtime/dynamic_library.h"

namespace tc::runtime {
namespace {

// Every OpenCL entry point tinycore calls, found in the loaded library by name.
// clang-format off
#define TC_CL_FUNCTIONS(X)                                                              \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)         \
  X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue)                        \
  X(clReleaseCommandQueue) X(clFinish) X(clCreateBuffer) X(clReleaseMemObject)          \
  X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clCreateProgramWithSource)           \
  X(clCreateProgramWithBinary) X(clBuildProgram) X(clGetProgramBuildInfo)               \
  X(clGetProgramInfo) X(clReleaseProgram) X(clCreateKernel) X(clGetKernelInfo)          \
  X(clGetKernelWorkGroupInfo) X(clSetKernelArg) X(clEnqueueNDRangeKernel)               \
  X(clReleaseKernel)
// clang-format on

struct ClApi {
#define TC_CL_DECLARE(fn) decltype(&::fn) fn;
  TC_CL_FUNCTIONS(TC_CL_DECLARE)
#undef TC_CL_DECLARE

  explicit ClApi(const DynamicLibrary& lib) {
#define TC_CL_LOAD(fn) fn = lib.get<decltype(&::fn)>(#fn);
    TC_CL_FUNCTIONS(TC_CL_LOAD)
#undef TC_CL_LOAD
  }
};

const char* error_name(cl_int code) {
  switch (code) {
#define TC_CL_ERROR(name) \
  case name:              \
    return #name;
    TC_CL_ERROR(CL_DEVICE_NOT_FOUND)
    TC_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    TC_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    TC_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TC_CL_ERROR(CL_OUT_OF_RESOURCES)
    TC_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    TC_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    TC_CL_ERROR(CL_INVALID_VALUE)
    TC_CL_ERROR(CL_INVALID_PLATFORM)
    TC_CL_ERROR(CL_INVALID_DEVICE)
    TC_CL_ERROR(CL_INVALID_CONTEXT)
    TC_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    TC_CL_ERROR(CL_INVALID_HOST_PTR)
    TC_CL_ERROR(CL_INVALID_MEM_OBJECT)
    TC_CL_ERROR(CL_INVALID_BINARY)
    TC_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    TC_CL_ERROR(CL_INVALID_PROGRAM)
    TC_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    TC_CL_ERROR(CL_INVALID_KERNEL_NAME)
    TC_CL_ERROR(CL_INVALID_KERNEL)
    TC_CL_ERROR(CL_INVALID_ARG_INDEX)
    TC_CL_ERROR(CL_INVALID_ARG_VALUE)
    TC_CL_ERROR(CL_INVALID_ARG_SIZE)
    TC_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    TC_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    TC_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    TC_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    TC_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    TC_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    TC_CL_ERROR(CL_INVALID_OPERATION)
#undef TC_CL_ERROR
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "an unnamed OpenCL error";
  }
}

// Throws tc::Error naming the failed call (`what`) and the error code.
void check(cl_int err, const std::string& what) {
  if (err != CL_SUCCESS)
    throw Error(absl::StrCat("CL: ", what, " failed: ", error_name(err), " (", err, ")"));
}

// The driver's library, the chosen device, its context and its in-order queue: shared by the
// device, its allocator and its programs, so whichever is destroyed last releases them.
struct ClRuntime {
  ClRuntime(std::unique_ptr<DynamicLibrary> library, std::unique_ptr<ClApi> fns)
      : lib(std::move(library)), api(std::move(fns)) {}
  ~ClRuntime() {
    if (queue) api->clReleaseCommandQueue(queue);
    if (context) api->clReleaseContext(context);
  }
  ClRuntime(const ClRuntime&) = delete;
  ClRuntime& operator=(const ClRuntime&) = delete;

  std::unique_ptr<DynamicLibrary> lib;
  std::unique_ptr<ClApi> api;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  bool gpu = false;
  // Platform, device and driver names and versions: what a program binary is built for.
  std::string target;
  std::string build_options;
};

// A string property of a platform or device (`get` is clGetPlatformInfo or clGetDeviceInfo).
template <typename Get, typename Object, typename Param>
std::string info_string(Get get, Object object, Param param) {
  size_t size = 0;
  check(get(object, param, 0, nullptr, &size), "querying an OpenCL platform or device");
  std::string s(size, '\0');
  check(get(object, param, size, s.data(), nullptr), "querying an OpenCL platform or device");
  return s.substr(0, s.find('\0'));
}
template <typename T>
T device_value(const ClApi& api, cl_device_id d, cl_device_info param) {
  T v{};
  check(api.clGetDeviceInfo(d, param, sizeof v, &v, nullptr), "clGetDeviceInfo");
  return v;
}

// One device of one platform, as the loader lists them.
struct Candidate {
  cl_platform_id platform;
  cl_device_id device;
  std::string name;
  bool gpu, usable;  // usable: available, with a compiler, and OpenCL C 1.2 or newer
};

std::vector<Candidate> list_devices(const ClApi& api) {
  cl_uint nplatforms = 0;
  cl_int err = api.clGetPlatformIDs(0, nullptr, &nplatforms);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the loader found no driver */)
    nplatforms = 0;
  else
    check(err, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(nplatforms);
  if (nplatforms)
    check(api.clGetPlatformIDs(nplatforms, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<Candidate> out;
  for (cl_platform_id p : platforms) {
    cl_uint ndevices = 0;
    err = api.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndevices);
    if (err == CL_DEVICE_NOT_FOUND || ndevices == 0) continue;
    check(err, "clGetDeviceIDs");
    std::vector<cl_device_id> devices(ndevices);
    check(api.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndevices, devices.data(), nullptr),
          "clGetDeviceIDs");
    for (cl_device_id d : devices) {
      Candidate c{p, d, info_string(api.clGetDeviceInfo, d, CL_DEVICE_NAME), false, false};
      c.gpu = device_value<cl_device_type>(api, d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU;
      int major = 0, minor = 0;
      std::string version = info_string(api.clGetDeviceInfo, d, CL_DEVICE_OPENCL_C_VERSION);
      std::sscanf(version.c_str(), "OpenCL C %d.%d", &major, &minor);
      c.usable = device_value<cl_bool>(api, d, CL_DEVICE_AVAILABLE) &&
                 device_value<cl_bool>(api, d, CL_DEVICE_COMPILER_AVAILABLE) &&
                 major * 10 + minor >= 12;
      out.push_back(std::move(c));
    }
  }
  return out;
}

// The device CL_DEVICE names, else the first usable GPU, else the first usable device; nullopt
// with `reason` set when there is none.
std::optional<Candidate> choose_device(const std::vector<Candidate>& all, std::string& reason) {
  std::vector<std::string> names;
  for (size_t i = 0; i < all.size(); i++)
    names.push_back(absl::StrCat(i, ": ", all[i].name, all[i].usable ? "" : " (unusable)"));
  std::string listing = names.empty() ? "none" : absl::StrJoin(names, ", ");
  if (const char* env = std::getenv("CL_DEVICE"); env && *env) {
    size_t index = 0;
    if (!absl::SimpleAtoi(env, &index) || index >= all.size()) {
      reason =
          absl::StrCat("CL_DEVICE=", env, " is not the index of an OpenCL device (", listing, ")");
      return std::nullopt;
    }
    if (!all[index].usable) {
      reason = absl::StrCat("CL_DEVICE=", env, " is ", all[index].name,
                            ", which is unavailable, has no compiler or lacks OpenCL C 1.2");
      return std::nullopt;
    }
    return all[index];
  }
  for (const Candidate& c : all)
    if (c.usable && c.gpu) return c;
  for (const Candidate& c : all)
    if (c.usable) return c;
  reason = all.empty() ? "no OpenCL device (no driver in /etc/OpenCL/vendors has one; Debian's "
                         "pocl-opencl-icd runs OpenCL on the CPU)"
                       : absl::StrCat("no usable OpenCL device (", listing,
                                      "): each is unavailable, has no compiler or lacks "
                                      "OpenCL C 1.2");
  return std::nullopt;
}

// Options that keep results equal to the CPU's: OpenCL C 1.2, and division and square roots
// correctly rounded where the device can (OpenCL allows 2.5 and 3 ulp by default, which GPUs
// use). -cl-fast-relaxed-math and -cl-mad-enable would trade exactness for speed.
std::string build_options(const ClApi& api, cl_device_id d) {
  std::string options = "-cl-std=CL1.2";
  if (device_value<cl_device_fp_config>(api, d, CL_DEVICE_SINGLE_FP_CONFIG) &
      CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
    options += " -cl-fp32-correctly-rounded-divide-sqrt";
  return options;
}

// The runtime on the chosen device, or nullptr with `reason` set.
std::shared_ptr<ClRuntime> open_runtime(std::string& reason) {
  // PoCL and ROCm's compiler (hiprtc) each carry an LLVM 15 whose options collide: loading the
  // OpenCL drivers into a process where hiprtc ran aborts it
  if (DynamicLibrary::is_loaded("libamd_comgr.so.2")) {
    reason =
        "ROCm's compiler (hiprtc) is loaded in this process, and OpenCL drivers such as "
        "PoCL carry an LLVM that collides with it";
    return nullptr;
  }
  auto lib =
      std::make_unique<DynamicLibrary>(std::vector<std::string>{"libOpenCL.so.1", "libOpenCL.so"});
  if (!lib->loaded()) {
    reason = "no OpenCL library: " + lib->error();
    return nullptr;
  }
  try {
    auto api = std::make_unique<ClApi>(*lib);
    auto rt = std::make_shared<ClRuntime>(std::move(lib), std::move(api));
    const ClApi& cl = *rt->api;
    std::optional<Candidate> chosen = choose_device(list_devices(cl), reason);
    if (!chosen) return nullptr;
    rt->device = chosen->device;
    rt->gpu = chosen->gpu;
    rt->build_options = build_options(cl, rt->device);
    rt->target = absl::StrCat(
        info_string(cl.clGetPlatformInfo, chosen->platform, CL_PLATFORM_NAME), " ",
        info_string(cl.clGetPlatformInfo, chosen->platform, CL_PLATFORM_VERSION), "|", chosen->name,
        "|", info_string(cl.clGetDeviceInfo, rt->device, CL_DEVICE_VERSION), "|",
        info_string(cl.clGetDeviceInfo, rt->device, CL_DRIVER_VERSION));
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(chosen->platform), 0};
    cl_int err = CL_SUCCESS;
    rt->context = cl.clCreateContext(props, 1, &rt->device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    rt->queue = cl.clCreateCommandQueue(rt->context, rt->device, 0, &err);
    check(err, "clCreateCommandQueue");
    if (debug_level() >= 1) std::printf("CL: %s\n", rt->target.c_str());
    return rt;
  } catch (const Error& e) {
    reason = e.what();
    return nullptr;
  }
}

// Buffers are cl_mem handles; the copies block, and the in-order queue makes them wait for the
// kernels enqueued before them.
class ClAllocator : public Allocator {
 public:
  explicit ClAllocator(std::shared_ptr<ClRuntime> rt) : rt_(std::move(rt)) {}
  ~ClAllocator() override { clear_cache(); }

  void copyin(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;  // OpenCL rejects empty copies
    check(rt_->api->clEnqueueWriteBuffer(rt_->queue, static_cast<cl_mem>(dst), CL_TRUE, 0, bytes,
                                         src, 0, nullptr, nullptr),
          absl::StrCat("clEnqueueWriteBuffer of ", bytes, " bytes"));
  }
  void copyout(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    check(rt_->api->clEnqueueReadBuffer(rt_->queue, static_cast<cl_mem>(const_cast<void*>(src)),
                                        CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr),
          absl::StrCat("clEnqueueReadBuffer of ", bytes, " bytes"));
  }

 protected:
  void* raw_alloc(size_t bytes) override {
    cl_int err = CL_SUCCESS;
    cl_mem m = rt_->api->clCreateBuffer(rt_->context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES) {
      clear_cache();  // blocks of other sizes may be what fills the device
      m = rt_->api->clCreateBuffer(rt_->context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    }
    check(err, absl::StrCat("clCreateBuffer of ", bytes, " bytes"));
    return m;
  }
  void raw_free(void* ptr, size_t) override {
    rt_->api->clReleaseMemObject(static_cast<cl_mem>(ptr));
  }

 private:
  std::shared_ptr<ClRuntime> rt_;
};

// One kernel with its launch sizes. A cl_kernel's arguments are state, so a launch (set the
// arguments, enqueue) holds the program's lock.
class ClProgram : public Program {
 public:
  ClProgram(std::shared_ptr<ClRuntime> rt, std::string name, cl_kernel kernel,
            const LaunchSpec& launch)
      : rt_(std::move(rt)), name_(std::move(name)), kernel_(kernel), nargs_(launch.nargs) {
    for (int d = 0; d < 3; d++) {
      local_[d] = static_cast<size_t>(launch.local[d]);
      global_[d] = static_cast<size_t>(launch.global[d]) * local_[d];
    }
    while (dims_ > 1 && global_[dims_ - 1] == 1) dims_--;
  }
  ~ClProgram() override { rt_->api->clReleaseKernel(kernel_); }
  ClProgram(const ClProgram&) = delete;
  ClProgram& operator=(const ClProgram&) = delete;

  void run(void* const* bufs, int) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < nargs_; i++)
      check(rt_->api->clSetKernelArg(kernel_, static_cast<cl_uint>(i), sizeof(cl_mem), &bufs[i]),
            absl::StrCat("kernel ", name_, ": clSetKernelArg ", i));
    check(rt_->api->clEnqueueNDRangeKernel(rt_->queue, kernel_, dims_, nullptr, global_, local_, 0,
                                           nullptr, nullptr),
          absl::StrCat("kernel ", name_, ": clEnqueueNDRangeKernel"));
  }
  // A GPU kernel has no parts to sample: the whole launch, waited for, so it can be timed.
  void run_part(void* const* bufs, int, int) override {
    run(bufs, 1);
    check(rt_->api->clFinish(rt_->queue), "clFinish");
  }

 private:
  std::shared_ptr<ClRuntime> rt_;
  std::string name_;
  cl_kernel kernel_;
  int nargs_;
  cl_uint dims_ = 3;
  size_t global_[3], local_[3];
  std::mutex mu_;
};

// OpenCL C lets the compiler fuse a*b+c into one fma (FP_CONTRACT is on by default, and PoCL
// does fuse), which rounds once where the CPU's kernels round twice: every source is built
// with contraction off, so both devices compute the same bits. (#line keeps the build log's
// line numbers those of the source.)
constexpr const char* kPrologue = "#pragma OPENCL FP_CONTRACT OFF\n#line 1\n";

class ClDevice : public Device {
 public:
  explicit ClDevice(std::shared_ptr<ClRuntime> rt) : rt_(rt), allocator_(rt) {}
  ~ClDevice() override {
    for (auto& [source, program] : builds_) rt_->api->clReleaseProgram(program);
  }

  const std::string& name() const override { return name_; }
  Language language() const override { return Language::kOpenCl; }
  Allocator& allocator() override { return allocator_; }
  bool is_accelerator() const override { return rt_->gpu; }
  void synchronize() override { check(rt_->api->clFinish(rt_->queue), "clFinish"); }

  std::shared_ptr<Program> compile(const std::string& fn_name, const std::string& source,
                                   const LaunchSpec& launch) override {
    for (int d = 0; d < 3; d++)
      if (launch.global[d] < 1 || launch.local[d] < 1)
        fail("CL: kernel %s: launch sizes must be positive (global %d, local %d in dimension %d)",
             fn_name, launch.global[d], launch.local[d], d);
    std::string key =
        absl::StrCat(absl::StrJoin(launch.global, ","), "|", absl::StrJoin(launch.local, ","), "|",
                     launch.nargs, "|", source);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = programs_.find(key); it != programs_.end()) return it->second;

    cl_int err = CL_SUCCESS;
    cl_kernel kernel = rt_->api->clCreateKernel(built(fn_name, source), fn_name.c_str(), &err);
    check(err, absl::StrCat("kernel ", fn_name, ": clCreateKernel"));
    auto program = std::make_shared<ClProgram>(rt_, fn_name, kernel, launch);
    check_launch(fn_name, kernel, launch);
    programs_[key] = program;
    return program;
  }

 private:
  // The built program of `source`: kept in memory per source, and its binary on disk.
  cl_program built(const std::string& fn_name, const std::string& source) {
    if (auto it = builds_.find(source); it != builds_.end()) return it->second;
    std::string key = absl::StrCat("tinycore cl binary v1|", rt_->target, "|", rt_->build_options,
                                   "|\n", kPrologue, source);
    cl_program program = nullptr;
    std::string binary = cached_compile("cl", key, [&] {
      program = builds_[source] = build_from_source(fn_name, source);
      return binary_of(program);
    });
    if (!program) program = build_from_binary(binary);
    if (!program) program = build_from_source(fn_name, source);  // a binary this driver rejects
    return builds_[source] = program;
  }

  cl_program build_from_source(const std::string& fn_name, const std::string& source) {
    const char* texts[2] = {kPrologue, source.c_str()};
    size_t sizes[2] = {std::char_traits<char>::length(kPrologue), source.size()};
    cl_int err = CL_SUCCESS;
    cl_program program = rt_->api->clCreateProgramWithSource(rt_->context, 2, texts, sizes, &err);
    check(err, absl::StrCat("kernel ", fn_name, ": clCreateProgramWithSource"));
    err = rt_->api->clBuildProgram(program, 1, &rt_->device, rt_->build_options.c_str(), nullptr,
                                   nullptr);
    if (err != CL_SUCCESS) {
      std::string log = build_log(program);
      rt_->api->clReleaseProgram(program);
      if (err == CL_BUILD_PROGRAM_FAILURE)
        throw Error(absl::StrCat("CL: kernel ", fn_name, " failed to build: ", log));
      check(err, absl::StrCat("kernel ", fn_name, ": clBuildProgram"));
    }
    return program;
  }

  // nullptr when the driver rejects the binary (the caller builds the source instead).
  cl_program build_from_binary(const std::string& binary) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    size_t size = binary.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program program = rt_->api->clCreateProgramWithBinary(rt_->context, 1, &rt_->device, &size,
                                                             &bytes, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS) {
      if (program) rt_->api->clReleaseProgram(program);
      return nullptr;
    }
    if (rt_->api->clBuildProgram(program, 1, &rt_->device, rt_->build_options.c_str(), nullptr,
                                 nullptr) != CL_SUCCESS) {
      rt_->api->clReleaseProgram(program);
      return nullptr;
    }
    return program;
  }

  std::string binary_of(cl_program program) {
    size_t size = 0;
    check(rt_->api->clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
          "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
    std::string binary(size, '\0');
    unsigned char* data = reinterpret_cast<unsigned char*>(binary.data());
    check(rt_->api->clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr),
          "clGetProgramInfo(CL_PROGRAM_BINARIES)");
    return binary;
  }

  std::string build_log(cl_program program) {
    size_t size = 0;
    rt_->api->clGetProgramBuildInfo(program, rt_->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    rt_->api->clGetProgramBuildInfo(program, rt_->device, CL_PROGRAM_BUILD_LOG, size, log.data(),
                                    nullptr);
    log = log.substr(0, log.find('\0'));
    absl::StripTrailingAsciiWhitespace(&log);
    return log;
  }

  // A kernel whose arguments or work-group size do not fit fails here, by name, rather than at
  // its first launch.
  void check_launch(const std::string& fn_name, cl_kernel kernel, const LaunchSpec& launch) {
    cl_uint nargs = 0;
    check(rt_->api->clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr),
          "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
    if (static_cast<int>(nargs) != launch.nargs)
      fail("CL: kernel %s takes %d arguments but is launched with %d buffers", fn_name, nargs,
           launch.nargs);
    size_t max_group = 0;
    check(rt_->api->clGetKernelWorkGroupInfo(kernel, rt_->device, CL_KERNEL_WORK_GROUP_SIZE,
                                             sizeof max_group, &max_group, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    int64_t group = launch.local[0] * launch.local[1] * launch.local[2];
    if (group > static_cast<int64_t>(max_group))
      fail("CL: kernel %s: a work-group of %d threads is more than this device runs (%d)", fn_name,
           group, max_group);
  }

  std::string name_ = "CL";
  std::shared_ptr<ClRuntime> rt_;
  ClAllocator allocator_;
  std::mutex mu_;
  std::unordered_map<std::string, cl_program> builds_;                  // by source
  std::unordered_map<std::string, std::shared_ptr<Program>> programs_;  // by launch and source
};

// Why the last make_cl_device() found no device.
struct UnavailableReason {
  std::mutex mu;
  std::string text;
};
UnavailableReason& unavailable_reason() {
  static auto* reason = new UnavailableReason();  // never destroyed: read at exit is safe
  return *reason;
}

}  // namespace

std::unique_ptr<Device> make_cl_device() {
  std::string reason;
  std::shared_ptr<ClRuntime> rt = open_runtime(reason);
  UnavailableReason& last = unavailable_reason();
  std::lock_guard<std::mutex> lock(last.mu);
  last.text = rt ? "" : reason;
  if (!rt) return nullptr;
  return std::make_unique<ClDevice>(std::move(rt));
}

bool cl_may_have_gpu() {
  // the drivers the ICD loader would load: its vendor files, or the folder OCL_ICD_VENDORS names
  std::string key = "tinycore cl gpu v1|";
  for (const char* var : {"OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "CL_DEVICE"})
    if (const char* v = std::getenv(var)) absl::StrAppend(&key, var, "=", v, "|");
  const char* folder = std::getenv("OCL_ICD_VENDORS");
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(folder ? folder : "/etc/OpenCL/vendors", ec))
    files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files)
    absl::StrAppend(&key, f, ":", read_cache_file(f).value_or(""), "|");
  std::string answer = cached_compile("devices", key, [] {
    std::unique_ptr<Device> d = make_cl_device();
    return std::string(d && d->is_accelerator() ? "gpu" : "no gpu");
  });
  return answer == "gpu";
}

std::string cl_unavailable_reason() {
  UnavailableReason& last = unavailable_reason();
  std::lock_guard<std::mutex> lock(last.mu);
  return last.text;
}

}  // namespace tc::runtime
