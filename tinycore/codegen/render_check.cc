#include "tinycore/codegen/render_check.h"

#include <algorithm>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tinycore/codegen/gpudims.h"
#include "tinycore/codegen/program.h"
#include "tinycore/error.h"
#include "tinycore/renderer/cstyle.h"
#include "tinycore/runtime/device.h"
#include "tinycore/runtime/hiprtc.h"
#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/nvrtc.h"
#endif

namespace tc::codegen {

const std::vector<runtime::Language>& render_check_languages() {
  static const std::vector<runtime::Language> langs = [] {
    std::vector<runtime::Language> out;
    const char* env = std::getenv("CHECK_RENDER");
    if (!env) return out;
    const auto& known = renderer::cstyle_languages();
    for (absl::string_view part : absl::StrSplit(env, ',', absl::SkipWhitespace())) {
      std::string name(part);
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      auto it = std::find_if(known.begin(), known.end(), [&](runtime::Language l) {
        return name == runtime::language_name(l);
      });
      if (it == known.end()) {
        std::vector<std::string> names;
        for (runtime::Language l : known) names.push_back(runtime::language_name(l));
        fail("CHECK_RENDER: unknown language '%s' (known: %s)", name, absl::StrJoin(names, ", "));
      }
      out.push_back(*it);
    }
    return out;
  }();
  return langs;
}

std::string compile_offline(runtime::Language language, const std::string& name,
                            const renderer::RenderedKernel& kernel) {
  const std::string& source = kernel.source;
  if (language == runtime::Language::kCuda) {
#ifdef TC_HAVE_CUDA
    return runtime::nvrtc_compile(name, source, "sm_90", /*cubin=*/false);
#else
    fail("CUDA: cannot compile kernel %s: tinycore was built without the CUDA toolkit", name);
#endif
  }
  if (language == runtime::Language::kHip) return runtime::hiprtc_compile(name, source, "gfx90a");
  if (language == runtime::Language::kOpenCl) {
    runtime::Device& cl = runtime::get_device("CL");
    cl.compile(name, source, kernel.launch);
    return source;
  }
  fail("no offline compiler for language '%s'", runtime::language_name(language));
}

namespace {

#ifdef TC_HAVE_CUDA
// CUDA checks go to NVRTC in batches of kBatch kernels (see nvrtc_check); finish_render_checks
// compiles the last one. Not at exit: NVRTC's own statics may be gone by then, so a program that
// does not call it leaves its last batch unchecked.
class CudaBatch {
 public:
  static constexpr size_t kBatch = 64;
  static CudaBatch& get() {
    static auto* b = new CudaBatch();
    return *b;
  }
  void add(std::string name, std::string source) {
    std::vector<runtime::NamedSource> full;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.push_back({std::move(name), std::move(source)});
      if (pending_.size() >= kBatch) full.swap(pending_);
    }
    if (!full.empty()) runtime::nvrtc_check(full, "sm_90");
  }
  void finish() {
    std::vector<runtime::NamedSource> rest;
    {
      std::lock_guard<std::mutex> lock(mu_);
      rest.swap(pending_);
    }
    if (!rest.empty()) runtime::nvrtc_check(rest, "sm_90");
  }

 private:
  std::mutex mu_;
  std::vector<runtime::NamedSource> pending_;
};
#endif

}  // namespace

void check_render(const LoweredKernel& plain) {
  const std::vector<runtime::Language>& langs = render_check_languages();
  if (langs.empty()) return;
  static std::mutex mu;
  static auto* checked = new absl::flat_hash_set<UOpRef>();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!checked->insert(plain.ast).second) return;
  }
  LinearKernel k = linearize_kernel(plain, KernelOpts{});
  for (runtime::Language lang : langs) {
    renderer::RenderedKernel r = render_gpu(lang, k.name, k.program, k.output_dims);
#ifdef TC_HAVE_CUDA
    if (lang == runtime::Language::kCuda) {
      CudaBatch::get().add(k.name, std::move(r.source));
      continue;
    }
#endif
    compile_offline(lang, k.name, r);
  }
}

void finish_render_checks() {
#ifdef TC_HAVE_CUDA
  CudaBatch::get().finish();
#endif
}

}  // namespace tc::codegen
