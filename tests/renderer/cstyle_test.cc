// The C-style renderer (CUDA C, OpenCL C, HIP): launch grids chosen for known shapes, the index
// width, the per-language constructs (thread indices, float16 handling, fp64 pragma, exact
// literals, NaN-propagating max), errors for unknown languages and SIMD lanes, and every kernel
// here compiled by each language's GPU-less compiler where it is installed.
#include "tinycore/renderer/cstyle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/error_message.h"
#include "tests/renderer/cache_dirs.h"
#include "tinycore/codegen/gpudims.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/render_check.h"
#include "tinycore/runtime/device.h"
#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/nvrtc.h"
#endif
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::renderer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const auto* const cache_dirs = ::testing::AddGlobalTestEnvironment(new CacheDirs);

runtime::Device* cl_device() {
  static runtime::Device* device = [] {
    auto names = runtime::available_devices();
    return std::find(names.begin(), names.end(), "CL") == names.end() ? nullptr
                                                                      : &runtime::get_device("CL");
  }();
  return device;
}

struct Program {
  std::string name;
  std::vector<UOpRef> uops;
  int output_dims = 0;
};

// The last kernel of `t`'s schedule, lowered as the GPU devices lower it (no opts).
Program program_of(const Tensor& t, const codegen::KernelOpts& opts = {}) {
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({t.uop()});
  codegen::LinearKernel k = codegen::linearize_kernel(codegen::lower(items.back().ast), opts);
  return {k.name, k.program, k.output_dims};
}

// out[i...] = in[i...] + 1 over `dims`, the loops numbered outermost first, built by hand so
// the shapes may be larger than memory.
Program elementwise(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  auto global = [&](int64_t i) {
    return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.as_ptr(), {}, std::vector<int64_t>{i, n});
  };
  UOpRef out = global(0), in = global(1), idx;
  for (size_t i = 0; i < dims.size(); i++) {
    UOpRef r =
        UOp::make(Ops::RANGE, dtypes::index, {index_const(dims[i])}, static_cast<int64_t>(i));
    idx = i == 0 ? r : idx * dims[i] + r;
  }
  UOpRef x = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, in->dtype, {in, idx})});
  UOpRef y = alu(Ops::ADD, x, UOp::const_(dtypes::float32, 1));
  UOpRef st =
      UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, out->dtype, {out, idx}), y});
  return {"E_test", codegen::linearize(UOp::sink({st})), static_cast<int>(dims.size())};
}

RenderedKernel render(const std::string& lang, const Program& p) {
  return codegen::render_gpu(runtime::language_named(lang), p.name, p.uops, p.output_dims);
}

// The C dialects' names ("cuda", "opencl", "hip"), as the tests key their kernels.
std::vector<std::string> dialects() {
  std::vector<std::string> names;
  for (runtime::Language l : cstyle_languages()) names.push_back(runtime::language_name(l));
  return names;
}

// The languages compiled here: NVRTC's CUDA (where the toolkit is) and the OpenCL device's
// (PoCL in CI). hiprtc is left to CHECK_RENDER=hip: ROCm 5.2's compiler and PoCL each carry a
// clang 15 that aborts on loading into a process that has loaded the other.
bool compiles_here(const std::string& lang) {
  static bool said = false;
  std::string why;
  if (lang == "cuda") {
#ifdef TC_HAVE_CUDA
    runtime::nvrtc_available(&why);
#else
    why = "tinycore was built without the CUDA toolkit";
#endif
  } else if (lang == "opencl" && !cl_device()) {
    why = "no OpenCL device: " + runtime::unavailable_reason("CL");
  }
  if (!why.empty() && !said)
    std::printf("%s kernels are not compiled: %s\n", lang.c_str(), why.c_str());
  said = said || !why.empty();
  return lang != "hip" && why.empty();
}

void compile(const std::string& lang, const std::string& name, const RenderedKernel& k) {
  codegen::compile_offline(runtime::language_named(lang), name, k);
}

// Renders `p` in every language, compiling each where its compiler is here; returns the
// kernels by language.
std::map<std::string, RenderedKernel> render_all(const Program& p) {
  std::map<std::string, RenderedKernel> out;
  for (const std::string& lang : dialects()) {
    RenderedKernel k = render(lang, p);
    if (compiles_here(lang)) {
      EXPECT_NO_THROW(compile(lang, p.name, k)) << lang << ":\n" << k.source;
    }
    out[lang] = k;
  }
  return out;
}

void expect_launch(const runtime::LaunchSpec& l, std::array<int64_t, 3> global,
                   std::array<int64_t, 3> local, int nargs) {
  EXPECT_EQ(l.global, global);
  EXPECT_EQ(l.local, local);
  EXPECT_EQ(l.nargs, nargs);
}

TEST(CStyle, KnowsItsLanguages) {
  EXPECT_EQ(dialects(), (std::vector<std::string>{"cuda", "opencl", "hip"}));
  EXPECT_THAT(error_message([] { render("metal", elementwise({4})); }),
              HasSubstr("unknown language 'metal' (known: llvm, cuda, opencl, hip)"));
  EXPECT_THAT(error_message([] { render("llvm", elementwise({4})); }),
              HasSubstr("C-style renderer: llvm is not a C dialect"));
}

TEST(CStyle, InnermostLoopIsXWithWholeWorkGroups) {
  // (4, 1000): x runs the 1000 in 4 groups of 256, guarded; y the 4 rows, one thread a group
  for (const auto& [lang, k] : render_all(elementwise({4, 1000}))) {
    expect_launch(k.launch, {4, 4, 1}, {256, 1, 1}, 2);
    EXPECT_THAT(k.source, HasSubstr("if (ridx1 < 1000) {")) << lang;
    EXPECT_THAT(k.source, Not(HasSubstr("if (ridx0"))) << lang;  // 4 groups of 1: no check
    EXPECT_THAT(k.source, Not(HasSubstr("for ("))) << lang;
    EXPECT_THAT(k.source, Not(HasSubstr("long"))) << lang;  // 32-bit index math
  }
  std::map<std::string, RenderedKernel> k = render_all(elementwise({4, 1000}));
  EXPECT_THAT(k["cuda"].source,
              HasSubstr("extern \"C\" __global__ void __launch_bounds__(256) E_test(float* "
                        "__restrict__ data0, const float* __restrict__ data1) {"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("int ridx1 = (int)blockIdx.x * 256 + threadIdx.x;"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("int ridx0 = (int)blockIdx.y;"));
  EXPECT_THAT(k["hip"].source, HasSubstr("__launch_bounds__(256)"));
  EXPECT_THAT(k["opencl"].source, HasSubstr("__kernel void E_test(__global float* restrict data0, "
                                            "__global const float* restrict data1) {"));
  EXPECT_THAT(k["opencl"].source,
              HasSubstr("int ridx1 = (int)get_group_id(0) * 256 + get_local_id(0);"));
}

TEST(CStyle, SmallDimsShareOneWorkGroup) {
  // (3, 5): x takes 8 threads, y the next power of two, 4; one work-group, guarded on both
  RenderedKernel k = render("cuda", elementwise({3, 5}));
  expect_launch(k.launch, {1, 1, 1}, {8, 4, 1}, 2);
  EXPECT_THAT(k.source, HasSubstr("__launch_bounds__(32)"));
  EXPECT_THAT(k.source, HasSubstr("int ridx1 = (int)threadIdx.x;"));
  EXPECT_THAT(k.source, HasSubstr("if (ridx0 < 3) {"));
  EXPECT_THAT(k.source, HasSubstr("if (ridx1 < 5) {"));
}

TEST(CStyle, OuterLoopsMergeIntoZ) {
  // (2, 3, 4, 5): x = 5 (8 threads), y = 4 (4 threads), z = the 2 x 3 merged (8 threads)
  for (const auto& [lang, k] : render_all(elementwise({2, 3, 4, 5}))) {
    expect_launch(k.launch, {1, 1, 1}, {8, 4, 8}, 2);
    EXPECT_THAT(k.source, HasSubstr("int ridx0 = gidx2 / 3;")) << lang;
    EXPECT_THAT(k.source, HasSubstr("int ridx1 = gidx2 % 3;")) << lang;
    EXPECT_THAT(k.source, HasSubstr("if (gidx2 < 6) {")) << lang;
    EXPECT_THAT(k.source, Not(HasSubstr("for ("))) << lang;
  }
}

TEST(CStyle, TooManyWorkGroupsStayALoop) {
  // (70000, 256): y would need 70000 work-groups, past CUDA's and HIP's 65535, so there it
  // stays a loop in each thread; OpenCL has no such limit
  Program p = elementwise({70000, 256});
  for (std::string lang : {"cuda", "hip"}) {
    RenderedKernel k = render(lang, p);
    expect_launch(k.launch, {1, 1, 1}, {256, 1, 1}, 2);
    EXPECT_THAT(k.source, HasSubstr("for (int ridx0 = 0; ridx0 < 70000; ridx0++) {")) << lang;
  }
  expect_launch(render("opencl", p).launch, {1, 70000, 1}, {256, 1, 1}, 2);
}

TEST(CStyle, IndexIs64BitOnlyWhenItMustBe) {
  // 3 x 2^30 elements: the linear index passes 2^31
  Program big = elementwise({3, int64_t{1} << 30});
  std::map<std::string, RenderedKernel> k = render_all(big);
  expect_launch(k["cuda"].launch, {int64_t{1} << 22, 3, 1}, {256, 1, 1}, 2);
  EXPECT_THAT(k["cuda"].source,
              HasSubstr("long long ridx1 = (long long)blockIdx.x * 256 + threadIdx.x;"));
  EXPECT_THAT(k["hip"].source, HasSubstr("long long ridx1"));
  EXPECT_THAT(k["opencl"].source, HasSubstr("long ridx1 = (long)get_group_id(0) * 256"));
  EXPECT_THAT(k["opencl"].source, HasSubstr("1073741824L"));
  EXPECT_THAT(render("cuda", elementwise({2, 1 << 30})).source, HasSubstr("int ridx1 ="));
}

TEST(CStyle, ShortReduceWithNoOutputLoopsIsOneThread) {
  Tensor a = Tensor::empty({12});  // too short for a work-group to share (see group_test.cc)
  for (const auto& [lang, k] : render_all(program_of(a.sum()))) {
    expect_launch(k.launch, {1, 1, 1}, {1, 1, 1}, 2);
    EXPECT_THAT(k.source, HasSubstr("for (int ridx0 = 0; ridx0 < 12; ridx0++) {")) << lang;
    EXPECT_THAT(k.source, HasSubstr("acc0 = acc0 + val")) << lang;
  }
}

TEST(CStyle, ReduceLoopRunsInsideEachThread) {
  // 4096 outputs: a thread each (the 200 are too short for a work-group to share)
  Tensor a = Tensor::empty({4096, 200}, dtypes::float32);
  for (const auto& [lang, k] : render_all(program_of(a.max(1)))) {
    expect_launch(k.launch, {16, 1, 1}, {256, 1, 1}, 2);
    EXPECT_THAT(k.source, HasSubstr("ridx1 < 200; ridx1++) {")) << lang;
    // max propagates NaN, as the CPU's does
    EXPECT_THAT(k.source, HasSubstr("return a > b ? a : b > a ? b : a != a ? a : b != b ? b"))
        << lang;
    EXPECT_THAT(k.source, HasSubstr("acc0 = tc_max_f32(acc0, val")) << lang;
    EXPECT_THAT(k.source, HasSubstr("float acc0 = ")) << lang;  // the identity, -inf, from its bits
    EXPECT_THAT(k.source, HasSubstr("0xFF800000u")) << lang;
  }
}

TEST(CStyle, MatmulAndConvRender) {
  Tensor a = Tensor::empty({64, 24}), b = Tensor::empty({24, 64});
  for (const auto& [lang, k] : render_all(program_of(a.matmul(b))))
    expect_launch(k.launch, {1, 16, 1}, {64, 4, 1}, 3);
  Tensor x = Tensor::empty({2, 3, 32, 32}), w = Tensor::empty({4, 3, 3, 3});
  for (const auto& [lang, k] : render_all(program_of(x.conv2d(w, {.padding = 1}).relu())))
    EXPECT_THAT(k.source, HasSubstr("acc0 = acc0 + val")) << lang;
  for (const auto& [lang, k] : render_all(program_of(x.pad({{0, 0}, {0, 0}, {1, 1}, {2, 0}}))))
    EXPECT_THAT(k.source, HasSubstr(" ? data1[")) << lang;  // the padding: gated loads
}

TEST(CStyle, HalfIsNativeOnCudaAndHipAndStorageOnOpenCL) {
  Tensor a = Tensor::empty({4, 32}, dtypes::float16);
  std::map<std::string, RenderedKernel> k = render_all(program_of((a * 2 + 1).exp()));
  EXPECT_THAT(k["cuda"].source, HasSubstr("#include <cuda_fp16.h>"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("half* __restrict__ data0"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("__half2float("));
  EXPECT_THAT(k["cuda"].source, HasSubstr("__float2half_rn("));
  EXPECT_THAT(k["hip"].source, HasSubstr("_Float16* __restrict__ data0"));
  EXPECT_THAT(k["hip"].source, Not(HasSubstr("cuda_fp16")));
  // OpenCL without cl_khr_fp16 holds halves as floats, rounded to half precision per op
  EXPECT_THAT(k["opencl"].source, HasSubstr("__global half* restrict data0"));
  EXPECT_THAT(k["opencl"].source, HasSubstr("vload_half("));
  EXPECT_THAT(k["opencl"].source, HasSubstr("vstore_half_rte("));
  EXPECT_THAT(k["opencl"].source, HasSubstr("tc_round_half_f32("));
  EXPECT_THAT(k["opencl"].source, Not(HasSubstr("cl_khr_fp16")));
}

TEST(CStyle, CastsBetweenEveryDtypePairRender) {
  std::vector<DType> all = {dtypes::bool_,  dtypes::int8,    dtypes::int16,    dtypes::int32,
                            dtypes::int64,  dtypes::uint8,   dtypes::uint16,   dtypes::uint32,
                            dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                            dtypes::float64};
  for (DType from : all) {
    // each cast renders alone; all of them, back to float32 and summed, compile as one kernel
    Tensor a = Tensor::empty({7}, from), sum = Tensor::zeros({7});
    for (DType to : all) {
      if (to == from) continue;
      for (const std::string& lang : dialects())
        EXPECT_NO_THROW(render(lang, program_of(a.cast(to)))) << from.name() << " -> " << to.name();
      sum = sum + a.cast(to).cast(dtypes::float32);
    }
    render_all(program_of(sum));
  }
}

TEST(CStyle, DtypeSpecifics) {
  // double: OpenCL's extension pragma; bool buffers are bytes; bfloat16 rounds by a helper
  Tensor d = Tensor::empty({5}, dtypes::float64);
  std::map<std::string, RenderedKernel> k = render_all(program_of(d.sqrt()));
  EXPECT_THAT(k["opencl"].source, HasSubstr("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
  EXPECT_THAT(k["opencl"].source, HasSubstr("sqrt(val"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("sqrt(val"));
  Tensor f = Tensor::empty({5});
  k = render_all(program_of(f.lt(f.sqrt())));
  EXPECT_THAT(k["cuda"].source, HasSubstr("unsigned char* __restrict__ data0"));
  EXPECT_THAT(k["opencl"].source, HasSubstr("__global uchar* restrict data0"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("sqrtf(val"));
  EXPECT_THAT(k["opencl"].source, Not(HasSubstr("cl_khr_fp64")));
  k = render_all(program_of(f.cast(dtypes::bfloat16)));
  EXPECT_THAT(k["cuda"].source, HasSubstr("unsigned short tc_f32_to_bf16(float x)"));
  EXPECT_THAT(k["opencl"].source, HasSubstr("ushort tc_f32_to_bf16(float x)"));
}

TEST(CStyle, IntegerDivisionByZeroAndMinusOneIsDefined) {
  Tensor a = Tensor::empty({6}, dtypes::int32), b = Tensor::empty({6}, dtypes::int32);
  // codegen::safe_divisions: a divisor that may be 0 or -1 is 1 there, the result selected
  for (const auto& [lang, k] : render_all(program_of(a.idiv(b) + a.mod(b)))) {
    EXPECT_THAT(k.source, HasSubstr("bool val5 = val1 | val2;")) << lang;  // b == 0 | b == -1
    EXPECT_THAT(k.source, HasSubstr("int val6 = val5 ? 1 : val0;")) << lang;
    EXPECT_THAT(k.source, HasSubstr("int val7 = val3 / val6;")) << lang;
    EXPECT_THAT(k.source, HasSubstr("int val8 = val2 ? val4 : val7;")) << lang;  // -a for -1
    EXPECT_THAT(k.source, HasSubstr("int val9 = val1 ? 0 : val8;")) << lang;
    EXPECT_THAT(k.source, HasSubstr("int val10 = val3 % val6;")) << lang;
  }
  // a divisor known to be neither (a constant) divides as it is
  for (const auto& [lang, k] : render_all(program_of(a.idiv(Tensor::full({6}, 3, dtypes::int32)))))
    EXPECT_THAT(k.source, Not(HasSubstr("? 1 :"))) << lang;
}

TEST(CStyle, FloatToIntSaturates) {
  Tensor f = Tensor::empty({6});
  std::map<std::string, RenderedKernel> k = render_all(program_of(f.cast(dtypes::int8)));
  EXPECT_THAT(k["opencl"].source, HasSubstr("convert_char_sat(val"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("<= (-128.0f) ? (-128) : "));
  EXPECT_THAT(k["cuda"].source, HasSubstr(">= 128.0f ? 127 : (signed char)"));
}

TEST(CStyle, LiteralsAreExact) {
  Tensor f = Tensor::empty({6});
  std::map<std::string, RenderedKernel> k =
      render_all(program_of(f * 0.1f + static_cast<float>(1.0 / 3) + 16777216.0f));
  EXPECT_THAT(k["cuda"].source, HasSubstr("0.1f"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("0.33333334f"));
  EXPECT_THAT(k["cuda"].source, HasSubstr("16777216.0f"));
}

TEST(CStyle, SimdLanesAreRejected) {
  Tensor a = Tensor::empty({4, 32}), b = Tensor::empty({4, 32});
  codegen::KernelOpts opts;
  opts.lane_axis = 1;
  opts.lanes = 8;
  Program p = program_of(a + b, opts);
  for (const std::string& lang : dialects())
    EXPECT_THAT(error_message([&] { render(lang, p); }),
                HasSubstr("C-style renderer: SIMD lanes are not supported"));
}

}  // namespace
}  // namespace tc::renderer
