#include "apps/bench/dnnl_anchors.h"

#include <dnnl_debug.h>
#include <omp.h>

#include <algorithm>
#include <dnnl.hpp>
#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace bench {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

dnnl::engine& cpu() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN's OpenMP runtime runs on omp_get_max_threads() threads of the calling thread: set before
// a primitive is made (its work split depends on the count) and before every run (the Eigen and
// tinycore code between runs must not change it).
void use_threads(int threads) { omp_set_num_threads(threads); }

// A primitive with its arguments: the timed call.
struct Run {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  dnnl::stream stream{cpu()};
  int threads;

  void operator()() {
    use_threads(threads);
    primitive.execute(stream, args);
    stream.wait();
  }
};

// A memory of layout `want` holding `data`, given in the plain layout `plain` (reordered once).
memory placed(const memory::desc& want, const memory::desc& plain, const std::vector<float>& data) {
  if (data.size() * sizeof(float) != plain.get_size())
    throw std::runtime_error("oneDNN anchor: an input of the wrong size");
  // the reorder only reads its source
  memory user(plain, cpu(), const_cast<float*>(data.data())), out(want, cpu());
  dnnl::stream s(cpu());
  dnnl::reorder(user, out).execute(s, user, out);
  s.wait();
  return out;
}

// The values of `m` (a handle) reordered into the plain layout `plain`.
std::vector<float> plain_values(memory m, const memory::desc& plain) {
  std::vector<float> v(plain.get_size() / sizeof(float));
  memory user(plain, cpu(), v.data());
  dnnl::stream s(cpu());
  dnnl::reorder(m, user).execute(s, m, user);
  s.wait();
  return v;
}

const char* pass_name(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward:
      return "forward";
    case ConvPass::kBackwardData:
      return "backward-data";
    case ConvPass::kBackwardWeights:
      return "backward-weights";
  }
  return "?";
}

std::string describe(const ConvShape& s) {
  char text[160];
  std::snprintf(text, sizeof text, "x %dx%dx%dx%d, w %dx%dx%dx%d, stride %d, pad %d", s.batch,
                s.cin, s.h, s.w, s.cout, s.cin, s.k, s.k, s.stride, s.pad);
  return text;
}

}  // namespace

OnednnConv onednn_conv(const ConvShape& s, ConvPass pass, const std::vector<float>& a,
                       const std::vector<float>& b, int threads) {
  try {
    use_threads(threads);
    const memory::dims x_dims = {s.batch, s.cin, s.h, s.w}, w_dims = {s.cout, s.cin, s.k, s.k},
                       y_dims = {s.batch, s.cout, s.out_h(), s.out_w()};
    const memory::dims strides = {s.stride, s.stride}, pad = {s.pad, s.pad};
    const memory::desc x_plain(x_dims, kF32, Tag::nchw), w_plain(w_dims, kF32, Tag::oihw),
        y_plain(y_dims, kF32, Tag::nchw);
    // format_tag::any: oneDNN picks the layouts its kernels want
    const memory::desc x_any(x_dims, kF32, Tag::any), w_any(w_dims, kF32, Tag::any),
        y_any(y_dims, kF32, Tag::any);
    const auto direct = dnnl::algorithm::convolution_direct;
    // the forward primitive is also the backward ones' hint: they take its layouts
    dnnl::convolution_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, direct, x_any, w_any, y_any, strides, pad, pad}, cpu());
    auto run = std::make_shared<Run>();
    run->threads = threads;
    memory out;
    memory::desc out_plain;
    switch (pass) {
      case ConvPass::kForward:
        run->primitive = dnnl::convolution_forward(fwd);
        out = memory(fwd.dst_desc(), cpu());
        out_plain = y_plain;
        run->args = {{DNNL_ARG_SRC, placed(fwd.src_desc(), x_plain, a)},
                     {DNNL_ARG_WEIGHTS, placed(fwd.weights_desc(), w_plain, b)},
                     {DNNL_ARG_DST, out}};
        break;
      case ConvPass::kBackwardData: {
        dnnl::convolution_backward_data::primitive_desc pd(
            {direct, x_any, w_any, y_any, strides, pad, pad}, cpu(), fwd);
        run->primitive = dnnl::convolution_backward_data(pd);
        out = memory(pd.diff_src_desc(), cpu());
        out_plain = x_plain;
        run->args = {{DNNL_ARG_DIFF_DST, placed(pd.diff_dst_desc(), y_plain, a)},
                     {DNNL_ARG_WEIGHTS, placed(pd.weights_desc(), w_plain, b)},
                     {DNNL_ARG_DIFF_SRC, out}};
        break;
      }
      case ConvPass::kBackwardWeights: {
        dnnl::convolution_backward_weights::primitive_desc pd(
            {direct, x_any, w_any, y_any, strides, pad, pad}, cpu(), fwd);
        run->primitive = dnnl::convolution_backward_weights(pd);
        out = memory(pd.diff_weights_desc(), cpu());
        out_plain = w_plain;
        run->args = {{DNNL_ARG_SRC, placed(pd.src_desc(), x_plain, a)},
                     {DNNL_ARG_DIFF_DST, placed(pd.diff_dst_desc(), y_plain, b)},
                     {DNNL_ARG_DIFF_WEIGHTS, out}};
        break;
      }
    }
    return {[run] { (*run)(); }, [out, out_plain] { return plain_values(out, out_plain); }};
  } catch (const dnnl::error& e) {
    throw std::runtime_error(std::string("oneDNN makes no ") + pass_name(pass) +
                             " convolution for " + describe(s) + ": " + e.what());
  }
}

Workload onednn_sgemm(int m, int k, int n, int threads) {
  try {
    use_threads(threads);
    const memory::desc a_md({m, k}, kF32, Tag::ab), b_md({k, n}, kF32, Tag::ab),
        c_md({m, n}, kF32, Tag::ab);
    dnnl::matmul::primitive_desc pd({a_md, b_md, c_md}, cpu());
    auto run = std::make_shared<Run>();
    run->threads = threads;
    run->primitive = dnnl::matmul(pd);
    memory a(a_md, cpu()), b(b_md, cpu());
    std::fill_n(static_cast<float*>(a.get_data_handle()), static_cast<size_t>(m) * k, 0.5f);
    std::fill_n(static_cast<float*>(b.get_data_handle()), static_cast<size_t>(k) * n, 0.25f);
    run->args = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, memory(c_md, cpu())}};
    return [run] { (*run)(); };
  } catch (const dnnl::error& e) {
    throw std::runtime_error("oneDNN makes no matmul for " + std::to_string(m) + "x" +
                             std::to_string(k) + "x" + std::to_string(n) + ": " + e.what());
  }
}

std::string onednn_info(int threads) {
  const dnnl_version_t* v = dnnl_version();
  char text[160];
  std::snprintf(text, sizeof text, "oneDNN %d.%d.%d (%s, %d threads, ISA %s)", v->major, v->minor,
                v->patch, v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "not OpenMP", threads,
                dnnl_cpu_isa2str(static_cast<dnnl_cpu_isa_t>(dnnl::get_effective_cpu_isa())));
  return text;
}

}  // namespace bench
