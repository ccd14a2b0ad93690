#include "tinycore/runtime/cpu_device.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <unistd.h>

#include <mutex>
#include <unordered_map>

#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/runtime/thread_pool.h"

namespace tc::runtime {
namespace {

using KernelFn = void (*)(void* const*, int64_t core, int64_t ncores);

// A compiled kernel. Its code lives in a JITDylib of its own, removed (its memory unmapped) when
// the last holder lets go of the program.
class CpuProgram : public Program {
 public:
  CpuProgram(KernelFn fn, ThreadPool& pool, llvm::orc::ExecutionSession& session,
             llvm::orc::JITDylib& dylib)
      : fn_(fn), pool_(pool), session_(session), dylib_(dylib) {}
  ~CpuProgram() override { llvm::consumeError(session_.removeJITDylib(dylib_)); }
  void run(void* const* bufs, int shares) override {
    if (shares <= 1) return fn_(bufs, 0, 1);
    pool_.parallel_for(shares, [&](int core) { fn_(bufs, core, shares); });
  }
  void run_part(void* const* bufs, int part, int parts) override { fn_(bufs, part, parts); }

 private:
  KernelFn fn_;
  ThreadPool& pool_;
  llvm::orc::ExecutionSession& session_;
  llvm::orc::JITDylib& dylib_;
};

std::string to_string(llvm::Error err) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << err;
  return s;
}

template <typename T>
T unwrap(llvm::Expected<T> v, const char* what) {
  if (!v) throw Error(absl::StrCat("CPU device: ", what, ": ", to_string(v.takeError())));
  return std::move(*v);
}

class CpuDevice : public Device {
 public:
  CpuDevice() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    jtmb_.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    triple_ = jtmb_.getTargetTriple().str();
    cpu_ = jtmb_.getCPU();
    features_ = jtmb_.getFeatures().getString();
    for (const std::string& f : jtmb_.getFeatures().getFeatures()) {
      if (f == "+avx512f") simd_bytes_ = 64, simd_registers_ = 32;
      if (f == "+avx2" && simd_bytes_ < 32) simd_bytes_ = 32;
      if (f == "+avx512vnni") byte_dot_ = true;
    }
    jit_ = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb_).create(),
                  "creating the JIT");
  }

  const std::string& name() const override { return name_; }
  Language language() const override { return Language::kLlvm; }
  Allocator& allocator() override { return allocator_; }
  bool uses_host_memory() const override { return true; }
  int parallelism() const override { return pool_.size(); }
  int simd_bytes() const override { return simd_bytes_; }
  int simd_registers() const override { return simd_registers_; }
  // CPU_BYTE_DOT=0 renders DOT4 without it (its generic form, as on CPUs that lack it)
  bool byte_dot() const override { return byte_dot_ && getenv_int("CPU_BYTE_DOT", 1); }
  int64_t cache_bytes() const override {
    static const int64_t l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);  // 0 or -1 where glibc cannot tell
    return l2 > 0 ? l2 : Device::cache_bytes();
  }

  int compile_threads() const override { return pool_.size(); }

  // Several threads may compile at once: LLVM's optimizer and code generator run outside the
  // lock, each with a target machine of its own; only the JIT's symbol tables are shared.
  std::shared_ptr<Program> compile(const std::string& fn_name, const std::string& source,
                                   const LaunchSpec& launch) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = cache_.find(source); it != cache_.end()) return it->second;
    }
    std::string object = object_code(fn_name, source, launch.effort);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(source); it != cache_.end()) return it->second;  // raced: one wins
    // A long process that compiles ever new kernels (a fuzzer, a server seeing new shapes) would
    // run out of memory mappings (vm.max_map_count, about 65,000: a few per kernel): past the
    // limit the cache starts again, and the code of kernels no one holds is unmapped.
    if (cache_.size() >= static_cast<size_t>(kernel_cache_limit())) cache_.clear();
    // One JITDylib per kernel, so kernels with equal names never clash.
    auto jd_or = jit_->createJITDylib("kernel" + std::to_string(dylibs_made_++));
    if (!jd_or) throw Error(absl::StrCat("CPU device: JITDylib: ", to_string(jd_or.takeError())));
    llvm::orc::JITDylib& jd = *jd_or;
    if (auto err = jit_->addObjectFile(jd, llvm::MemoryBuffer::getMemBufferCopy(object, fn_name)))
      throw Error(absl::StrCat("CPU device: adding ", fn_name, ": ", to_string(std::move(err))));
    auto addr = unwrap(jit_->lookup(jd, fn_name), "looking up the kernel");
    auto program = std::make_shared<CpuProgram>(addr.toPtr<KernelFn>(), pool_,
                                                jit_->getExecutionSession(), jd);
    cache_[source] = program;
    return program;
  }

 private:
  // The kernel's machine code, from the disk cache when this exact source was compiled before
  // for this CPU by this LLVM with this effort (LLVM is most of a cold start). Bump the key's
  // "v1" when optimize() or the target machine's options change: the key cannot see them.
  std::string object_code(const std::string& fn_name, const std::string& source,
                          CompileEffort effort) {
    std::string key =
        absl::StrCat("tinycore cpu object v1|LLVM " LLVM_VERSION_STRING "|", triple_, "|", cpu_,
                     "|", features_, "|", effort_name(effort), "|\n", source);
    return cached_compile("cpu", key, [&] { return compile_object(fn_name, source, effort); });
  }

  std::string compile_object(const std::string& fn_name, const std::string& source,
                             CompileEffort effort) {
    auto ctx = std::make_unique<llvm::LLVMContext>();
    llvm::SMDiagnostic diag;
    auto mod = llvm::parseIR(llvm::MemoryBufferRef(source, fn_name), diag, *ctx);
    // IR that parses but does not verify (a value used where its definition does not reach)
    // is compiled into code that may read anywhere: refused like IR that does not parse
    std::string msg;
    llvm::raw_string_ostream why(msg);
    if (!mod) diag.print(fn_name.c_str(), why);
    if (!mod || llvm::verifyModule(*mod, &why))
      throw Error(absl::StrCat("CPU device: generated kernel ", fn_name,
                               " is invalid LLVM IR (a tinycore bug): ", msg, "\n", source));
    mod->setDataLayout(jit_->getDataLayout());
    mod->setTargetTriple(triple_);
    // A target machine per compiling thread and effort: LLVM's code generator may not share one
    // across threads, and one kept for the thread's next kernels keeps its subtarget (building
    // one per kernel was about 7% of a cold start's compile time).
    thread_local std::unique_ptr<llvm::TargetMachine> machines[4];
    std::unique_ptr<llvm::TargetMachine>& tm = machines[static_cast<int>(effort)];
    if (!tm) {
      llvm::orc::JITTargetMachineBuilder builder = jtmb_;
      builder.setCodeGenOptLevel(plan(effort).codegen);
      tm = unwrap(builder.createTargetMachine(), "creating the target machine");
    }
    optimize(*mod, *tm, plan(effort).passes);
    llvm::SmallVector<char, 0> object;
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      throw Error("CPU device: the target machine cannot emit object files");
    codegen.run(*mod);
    return std::string(object.begin(), object.end());
  }

  // What each effort gets: the optimizer's pass list (null: LLVM's O3 pipeline), and the code
  // generator's level. Measured one kernel at a time against O3 at Aggressive (the MNIST step's,
  // the bench's GEMMs, convs, reduces and models', single-threaded, best of 8 runs):
  //  - a scalar reduce keeps O3: ResNet's max-pool gradient runs 2.4-2.9x slower without it;
  //  - a vectorized reduce's register tiles need only SROA, LICM, full unrolling of short loops and
  //    instcombine: 269 kernels in 0.99x the time, compiled in 0.57x (its plain instcombine list
  //    left short reduces 1.3-2.2x slower);
  //  - an elementwise kernel needs no loop pass (the MNIST step's: no slower, compiled in 2/3 of
  //    the CPU time), and code generation at Less;
  //  - a quick kernel's code generation at None (fast instruction selection and register
  //    allocation) takes a third of the time at Less: the MNIST step's 120 small kernels run
  //    0.4 ms slower in all, for 200 ms less of a cold start's CPU; one over megabytes would run
  //    up to 2.4x slower.
  struct Plan {
    const char* passes;
    llvm::CodeGenOptLevel codegen;
  };
  static constexpr const char* kPlain =
      "always-inline,function(sroa,instcombine<no-verify-fixpoint>,simplifycfg)";
  static constexpr const char* kTilePasses =
      "always-inline,function(sroa,instcombine<no-verify-fixpoint>,simplifycfg,"
      "loop-mssa(loop-rotate,licm),loop(indvars,loop-unroll-full),"
      "instcombine<no-verify-fixpoint>,simplifycfg)";
  static Plan plan(CompileEffort effort) {
    switch (effort) {
      case CompileEffort::kFull:
        return {nullptr, llvm::CodeGenOptLevel::Aggressive};
      case CompileEffort::kTiled:
        return {kTilePasses, llvm::CodeGenOptLevel::Aggressive};
      case CompileEffort::kLight:
        return {kPlain, llvm::CodeGenOptLevel::Less};
      case CompileEffort::kQuick:
        return {kPlain, llvm::CodeGenOptLevel::None};
    }
    return {nullptr, llvm::CodeGenOptLevel::Aggressive};
  }

  void optimize(llvm::Module& mod, llvm::TargetMachine& tm, const char* passes) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions options;
    options.LoopVectorization = true;
    options.SLPVectorization = true;
    llvm::PassBuilder pb(&tm, options);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    if (!passes) {
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(mod, mam);
      return;
    }
    llvm::ModulePassManager pipeline;
    if (auto err = pb.parsePassPipeline(pipeline, passes))
      throw Error(
          absl::StrCat("CPU device: the pass list ", passes, ": ", to_string(std::move(err))));
    pipeline.run(mod, mam);
  }

  std::string name_ = "CPU", triple_, cpu_, features_;
  int simd_bytes_ = 16, simd_registers_ = 16;
  bool byte_dot_ = false;
  HostAllocator allocator_;
  ThreadPool pool_{cpu_threads()};
  llvm::orc::JITTargetMachineBuilder jtmb_ =
      unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Program>> cache_;
  int64_t dylibs_made_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace tc::runtime
