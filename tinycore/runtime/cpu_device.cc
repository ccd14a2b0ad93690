#include "tinycore/runtime/cpu_device.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <mutex>
#include <unordered_map>

#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/runtime/thread_pool.h"

namespace tc::runtime {
namespace {

using KernelFn = void (*)(void* const*, int64_t core, int64_t ncores);

class CpuProgram : public Program {
 public:
  CpuProgram(KernelFn fn, ThreadPool& pool) : fn_(fn), pool_(pool) {}
  void run(void* const* bufs, int shares) override {
    if (shares <= 1) return fn_(bufs, 0, 1);
    pool_.parallel_for(shares, [&](int core) { fn_(bufs, core, shares); });
  }
  void run_part(void* const* bufs, int part, int parts) override { fn_(bufs, part, parts); }

 private:
  KernelFn fn_;
  ThreadPool& pool_;
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
    }
    jit_ = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb_).create(),
                  "creating the JIT");
  }

  const std::string& name() const override { return name_; }
  const std::string& renderer() const override { return renderer_; }
  Allocator& allocator() override { return allocator_; }
  int parallelism() const override { return pool_.size(); }
  int simd_bytes() const override { return simd_bytes_; }
  int simd_registers() const override { return simd_registers_; }

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
    // One JITDylib per kernel, so kernels with equal names never clash.
    auto jd_or = jit_->createJITDylib("kernel" + std::to_string(cache_.size()));
    if (!jd_or) throw Error(absl::StrCat("CPU device: JITDylib: ", to_string(jd_or.takeError())));
    llvm::orc::JITDylib& jd = *jd_or;
    if (auto err = jit_->addObjectFile(jd, llvm::MemoryBuffer::getMemBufferCopy(object, fn_name)))
      throw Error(absl::StrCat("CPU device: adding ", fn_name, ": ", to_string(std::move(err))));
    auto addr = unwrap(jit_->lookup(jd, fn_name), "looking up the kernel");
    auto program = std::make_shared<CpuProgram>(addr.toPtr<KernelFn>(), pool_);
    cache_[source] = program;
    return program;
  }

 private:
  // The kernel's machine code, from the disk cache when this exact source was compiled before
  // for this CPU by this LLVM with this effort (LLVM is most of a cold start). Bump the key's
  // "v1" when optimize() or the target machine's options change: the key cannot see them.
  std::string object_code(const std::string& fn_name, const std::string& source,
                          CompileEffort effort) {
    std::string key = absl::StrCat(
        "tinycore cpu object v1|LLVM " LLVM_VERSION_STRING "|", triple_, "|", cpu_, "|", features_,
        effort == CompileEffort::kFull ? "" : absl::StrCat("|", effort_name(effort)), "|\n",
        source);
    return cached_compile("cpu", key, [&] { return compile_object(fn_name, source, effort); });
  }

  std::string compile_object(const std::string& fn_name, const std::string& source,
                             CompileEffort effort) {
    auto ctx = std::make_unique<llvm::LLVMContext>();
    llvm::SMDiagnostic diag;
    auto mod = llvm::parseIR(llvm::MemoryBufferRef(source, fn_name), diag, *ctx);
    if (!mod) {
      std::string msg;
      llvm::raw_string_ostream os(msg);
      diag.print(fn_name.c_str(), os);
      throw Error(absl::StrCat("CPU device: generated kernel ", fn_name,
                               " is invalid LLVM IR (a tinycore bug): ", msg, "\n", source));
    }
    mod->setDataLayout(jit_->getDataLayout());
    mod->setTargetTriple(triple_);
    // A target machine per compiling thread and effort: LLVM's code generator may not share one
    // across threads, and one kept for the thread's next kernels keeps its subtarget (building
    // one per kernel was about 7% of a cold start's compile time).
    thread_local std::unique_ptr<llvm::TargetMachine> machines[3];
    std::unique_ptr<llvm::TargetMachine>& tm = machines[static_cast<int>(effort)];
    if (!tm) {
      llvm::orc::JITTargetMachineBuilder builder = jtmb_;
      builder.setCodeGenOptLevel(codegen_level(effort));
      tm = unwrap(builder.createTargetMachine(), "creating the target machine");
    }
    optimize(*mod, *tm, effort != CompileEffort::kFull);
    llvm::SmallVector<char, 0> object;
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      throw Error("CPU device: the target machine cannot emit object files");
    codegen.run(*mod);
    return std::string(object.begin(), object.end());
  }

  // Instruction selection and register allocation: a quick kernel's take a third of the time at
  // level None (fast instruction selection, fast register allocation), and the code is slower
  // but the kernel is small (the MNIST step's 120 quick kernels: 0.4 ms more per step, 200 ms less
  // of a cold start's CPU). Elementwise kernels over megabytes run up to 2.4x slower at None.
  static llvm::CodeGenOptLevel codegen_level(CompileEffort effort) {
    switch (effort) {
      case CompileEffort::kFull:
        return llvm::CodeGenOptLevel::Aggressive;
      case CompileEffort::kLight:
        return llvm::CodeGenOptLevel::Less;
      case CompileEffort::kQuick:
        return llvm::CodeGenOptLevel::None;
    }
    return llvm::CodeGenOptLevel::Aggressive;
  }

  // LLVM's O3 pipeline, or for a light or quick kernel only what makes plain code of it: the kernel
  // body inlined into its entry point, loop counters in registers, index arithmetic folded. (126 of
  // the MNIST first step's 176 compiled kernels are elementwise: compiling them light took that
  // process's CPU time from 3.0-3.4 s to 2.2-2.9 s, and its steady step is no slower.)
  void optimize(llvm::Module& mod, llvm::TargetMachine& tm, bool light) {
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
    if (!light) {
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(mod, mam);
      return;
    }
    llvm::ModulePassManager quick;
    if (auto err = pb.parsePassPipeline(
            quick, "always-inline,function(sroa,instcombine<no-verify-fixpoint>,simplifycfg)"))
      throw Error(absl::StrCat("CPU device: the light pipeline: ", to_string(std::move(err))));
    quick.run(mod, mam);
  }

  std::string name_ = "CPU", renderer_ = "llvm", triple_, cpu_, features_;
  int simd_bytes_ = 16, simd_registers_ = 16;
  HostAllocator allocator_;
  ThreadPool pool_{cpu_threads()};
  llvm::orc::JITTargetMachineBuilder jtmb_ =
      unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Program>> cache_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace tc::runtime
