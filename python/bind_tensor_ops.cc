// tinycore.Tensor's operations, bound with tinygrad's names, keyword arguments and defaults.
// Methods whose Python forms vary (reshape(*shape), pad's formats, x[...]) are bound here under a
// leading underscore and given their Python signature in tinycore/tensor.py.
#include <string>
#include <utility>

#include "python/bindings.h"

namespace tc::python {

namespace {

using Opt = std::optional<Tensor>;

// The other operand of a binary op: a Tensor, or a scalar made into one.
Tensor operand(const Tensor& self, py::handle x, const char* op) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (auto c = to_const(x)) return self.scalar_like(*c);
  throw py::type_error(std::string("Tensor.") + op + ": expected a Tensor or a number, got " +
                       std::string(py::str(py::type::of(x).attr("__name__"))));
}

// Binds `name(x, reverse=False)` for an op of two tensors.
template <typename F>
void binary(py::class_<Tensor>& cls, const char* name, F f) {
  cls.def(
      name,
      [f, name](const Tensor& self, py::object x, bool reverse) {
        Tensor o = operand(self, x, name);
        return reverse ? f(o, self) : f(self, o);
      },
      py::arg("x"), py::arg("reverse") = false);
}

std::optional<Shape> opt_shape(py::object o) {
  if (o.is_none()) return std::nullopt;
  return o.cast<Shape>();
}

}  // namespace

void bind_tensor_ops(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));

  // ---- unary and elementwise math ----
#define TC_UNARY(name) cls.def(#name, &Tensor::name);
  TC_UNARY(neg)
  TC_UNARY(logical_not)
  TC_UNARY(reciprocal)
  TC_UNARY(sqrt)
  TC_UNARY(rsqrt)
  TC_UNARY(exp) TC_UNARY(exp2) TC_UNARY(log) TC_UNARY(log2) TC_UNARY(sin) TC_UNARY(cos) TC_UNARY(
      tan) TC_UNARY(trunc) TC_UNARY(relu) TC_UNARY(abs) TC_UNARY(sigmoid) TC_UNARY(square)
      TC_UNARY(tanh) TC_UNARY(sinh) TC_UNARY(cosh) TC_UNARY(sign) TC_UNARY(ceil) TC_UNARY(floor)
          TC_UNARY(round) TC_UNARY(isnan) TC_UNARY(isfinite) TC_UNARY(log10) TC_UNARY(
              quick_gelu) TC_UNARY(silu) TC_UNARY(swish) TC_UNARY(relu6) TC_UNARY(hardswish)
              TC_UNARY(softsign) TC_UNARY(mish) TC_UNARY(logsigmoid) TC_UNARY(asin) TC_UNARY(
                  acos) TC_UNARY(atan) TC_UNARY(asinh) TC_UNARY(acosh) TC_UNARY(atanh) TC_UNARY(erf)
                  TC_UNARY(bitwise_not) TC_UNARY(contiguous) TC_UNARY(half) TC_UNARY(
                      bfloat16) TC_UNARY(byte) TC_UNARY(hash)
#undef TC_UNARY
                      cls.def("float", &Tensor::float_)
                          .def("double", &Tensor::double_)
                          .def("int", &Tensor::int_)
                          .def("long", &Tensor::long_)
                          .def("short", &Tensor::short_)
                          .def("char", &Tensor::char_)
                          .def("bool", &Tensor::bool_)
                          .def("contiguous_backward", [](const Tensor& t) { return t; })
                          .def(
                              "cast",
                              [](const Tensor& t, py::object d) { return t.cast(to_dtype(d)); },
                              py::arg("dtype"))
                          .def(
                              "bitcast",
                              [](const Tensor& t, py::object d) { return t.bitcast(to_dtype(d)); },
                              py::arg("dtype"))
                          .def("isinf", &Tensor::isinf, py::arg("detect_positive") = true,
                               py::arg("detect_negative") = true)
                          .def("hardsigmoid", &Tensor::hardsigmoid, py::arg("alpha") = 1.0 / 6,
                               py::arg("beta") = 0.5)
                          .def("hardtanh", &Tensor::hardtanh, py::arg("min_val") = -1,
                               py::arg("max_val") = 1)
                          .def("elu", &Tensor::elu, py::arg("alpha") = 1.0)
                          .def("celu", &Tensor::celu, py::arg("alpha") = 1.0)
                          .def("selu", &Tensor::selu, py::arg("alpha") = 1.67326,
                               py::arg("gamma") = 1.0507)
                          .def("leaky_relu", &Tensor::leaky_relu, py::arg("neg_slope") = 0.01)
                          .def("softplus", &Tensor::softplus, py::arg("beta") = 1)
                          .def(
                              "lshift",
                              [](const Tensor& t, py::object x, bool reverse) {
                                Tensor n = operand(t, x, "lshift");
                                return reverse ? n.lshift(t) : t.lshift(n);
                              },
                              py::arg("x"), py::arg("reverse") = false)
                          .def(
                              "rshift",
                              [](const Tensor& t, py::object x, bool reverse) {
                                Tensor n = operand(t, x, "rshift");
                                return reverse ? n.rshift(t) : t.rshift(n);
                              },
                              py::arg("x"), py::arg("reverse") = false)
                          .def("clamp", &Tensor::clamp, py::arg("min_") = py::none(),
                               py::arg("max_") = py::none())
                          .def("clip", &Tensor::clip, py::arg("min_") = py::none(),
                               py::arg("max_") = py::none())
                          .def(
                              "isclose",
                              [](const Tensor& t, py::object other, double rtol, double atol,
                                 bool equal_nan) {
                                return t.isclose(operand(t, other, "isclose"), rtol, atol,
                                                 equal_nan);
                              },
                              py::arg("other"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08,
                              py::arg("equal_nan") = false)
                          .def(
                              "lerp",
                              [](const Tensor& t, const Tensor& end,
                                 py::object w) { return t.lerp(end, operand(t, w, "lerp")); },
                              py::arg("end"), py::arg("weight"))
                          .def(
                              "copysign",
                              [](const Tensor& t,
                                 py::object o) { return t.copysign(operand(t, o, "copysign")); },
                              py::arg("other"))
                          .def("gelu", &Tensor::gelu, py::arg("approximate") = "tanh")
                          .def(
                              "fmod",
                              [](const Tensor& t,
                                 py::object x) { return t.fmod(operand(t, x, "fmod")); },
                              py::arg("x"))
                          .def(
                              "logaddexp",
                              [](const Tensor& t,
                                 py::object
                                     other) { return t.logaddexp(operand(t, other, "logaddexp")); },
                              py::arg("other"));

  // ---- binary, with broadcasting and promotion ----
  binary(cls, "add", [](const Tensor& a, const Tensor& b) { return a.add(b); });
  binary(cls, "sub", [](const Tensor& a, const Tensor& b) { return a.sub(b); });
  binary(cls, "mul", [](const Tensor& a, const Tensor& b) { return a.mul(b); });
  binary(cls, "idiv", [](const Tensor& a, const Tensor& b) { return a.idiv(b); });
  binary(cls, "mod", [](const Tensor& a, const Tensor& b) { return a.mod(b); });
  binary(cls, "bitwise_and", [](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); });
  binary(cls, "bitwise_or", [](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); });
  binary(cls, "bitwise_xor", [](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); });
  binary(cls, "maximum", [](const Tensor& a, const Tensor& b) { return a.maximum(b); });
  binary(cls, "minimum", [](const Tensor& a, const Tensor& b) { return a.minimum(b); });
  binary(cls, "lt", [](const Tensor& a, const Tensor& b) { return a.lt(b); });
  binary(cls, "gt", [](const Tensor& a, const Tensor& b) { return a.gt(b); });
  binary(cls, "le", [](const Tensor& a, const Tensor& b) { return a.le(b); });
  binary(cls, "ge", [](const Tensor& a, const Tensor& b) { return a.ge(b); });
  binary(cls, "eq", [](const Tensor& a, const Tensor& b) { return a.eq(b); });
  binary(cls, "ne", [](const Tensor& a, const Tensor& b) { return a.ne(b); });
  cls.def(
      "div",
      [](const Tensor& self, py::object x, bool reverse, std::optional<std::string> mode) {
        Tensor o = operand(self, x, "div");
        const Tensor& a = reverse ? o : self;
        const Tensor& b = reverse ? self : o;
        return mode ? a.div(b, mode->c_str()) : a.div(b);
      },
      py::arg("x"), py::arg("reverse") = false, py::arg("rounding_mode") = py::none());
  cls.def(
      "pow",
      [](const Tensor& self, py::object x, bool reverse) {
        if (auto c = to_const(x); c && !reverse) return self.pow(*c);
        if (auto c = to_const(x)) return self.pow(*c, true);
        Tensor o = operand(self, x, "pow");
        return reverse ? o.pow(self) : self.pow(o);
      },
      py::arg("x"), py::arg("reverse") = false);
  cls.def(
      "where",
      [](const Tensor& cond, py::object x, py::object y) {
        auto cx = to_const(x), cy = to_const(y);
        if (cx && cy) return cond.where(*cx, *cy);
        if (cx) return cond.where(*cx, y.cast<Tensor>());
        if (cy) return cond.where(x.cast<Tensor>(), *cy);
        return cond.where(x.cast<Tensor>(), y.cast<Tensor>());
      },
      py::arg("x"), py::arg("y"));
  cls.def(
      "masked_fill",
      [](const Tensor& t, const Tensor& mask, py::object v) {
        if (auto c = to_const(v)) return t.masked_fill(mask, *c);
        return t.masked_fill(mask, v.cast<Tensor>());
      },
      py::arg("mask"), py::arg("value"));

  // ---- movement (Python forms in tensor.py) ----
  cls.def("_reshape", &Tensor::reshape)
      .def("_expand", &Tensor::expand)
      .def("_permute", &Tensor::permute)
      .def("_flip", &Tensor::flip)
      .def("_shrink", &Tensor::shrink)
      .def("shrink_from", &Tensor::shrink_from, py::arg("dim"), py::arg("start"), py::arg("length"))
      .def("_pad", [](const Tensor& t, std::vector<std::pair<int64_t, int64_t>> p, std::string mode,
                      ConstValue v) { return t.pad(std::move(p), mode, v); })
      .def("_repeat", &Tensor::repeat)
      .def("_roll",
           [](const Tensor& t, std::vector<int64_t> s, std::vector<int> d) { return t.roll(s, d); })
      .def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0)
      .def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("unflatten", &Tensor::unflatten, py::arg("dim"), py::arg("sizes"))
      .def("squeeze", &Tensor::squeeze, py::arg("dim") = py::none())
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"))
      .def_property_readonly("T", &Tensor::t)
      .def("pad_to", &Tensor::pad_to)
      .def("triu", &Tensor::triu, py::arg("diagonal") = 0)
      .def("tril", &Tensor::tril, py::arg("diagonal") = 0)
      .def("diag", &Tensor::diag)
      .def("diagonal", &Tensor::diagonal, py::arg("offset") = 0, py::arg("dim1") = 0,
           py::arg("dim2") = 1)
      .def("unfold", &Tensor::unfold, py::arg("dim"), py::arg("size"), py::arg("step"))
      .def(
          "split",
          [](const Tensor& t, py::object sizes, int dim) {
            if (py::isinstance<py::int_>(sizes)) return t.split(sizes.cast<int64_t>(), dim);
            return t.split(sizes.cast<std::vector<int64_t>>(), dim);
          },
          py::arg("sizes"), py::arg("dim") = 0)
      .def("chunk", &Tensor::chunk, py::arg("chunks"), py::arg("dim") = 0)
      .def("repeat_interleave", &Tensor::repeat_interleave, py::arg("repeats"),
           py::arg("dim") = py::none())
      .def("_rearrange", &Tensor::rearrange)
      .def("_one_hot", &Tensor::one_hot)
      .def_static("_cat",
                  [](const std::vector<Tensor>& ts, int dim) { return Tensor::cat(ts, dim); })
      .def_static("_stack",
                  [](const std::vector<Tensor>& ts, int dim) { return Tensor::stack(ts, dim); })
      .def_static("_meshgrid", &Tensor::meshgrid)
      .def("contiguous_view", [](const Tensor& t) { return t; });

  // ---- indexing ----
  cls.def("_getitem", &Tensor::getitem)
      .def("_setitem",
           [](Tensor& t, const std::vector<IndexItem>& idx, py::object v) {
             if (auto c = to_const(v))
               t.setitem(idx, *c);
             else
               t.setitem(idx, v.cast<Tensor>());
           })
      .def("_setitem_view", &Tensor::setitem_view)
      .def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"))
      .def(
          "scatter",
          [](const Tensor& t, int dim, const Tensor& index, py::object src, py::object reduce) {
            std::string r = reduce.is_none() ? "" : reduce.cast<std::string>();
            if (auto c = to_const(src)) return t.scatter(dim, index, *c, r);
            return t.scatter(dim, index, src.cast<Tensor>(), r);
          },
          py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce") = py::none())
      .def("scatter_reduce", &Tensor::scatter_reduce, py::arg("dim"), py::arg("index"),
           py::arg("src"), py::arg("reduce"), py::arg("include_self") = true)
      .def(
          "masked_select",
          [](const Tensor& t, const Tensor& mask, std::optional<int64_t> size, ConstValue fill) {
            return t.masked_select(mask, size, fill);
          },
          py::arg("mask"), py::arg("size") = py::none(), py::arg("fill_value") = 0)
      .def(
          "nonzero",
          [](const Tensor& t, std::optional<int64_t> size, ConstValue fill) {
            return t.nonzero(size, fill);
          },
          py::arg("size") = py::none(), py::arg("fill_value") = 0);

  // ---- reductions and scans ----
  auto sum_like = [](Tensor (Tensor::*f)(Axes, bool) const) {
    return [f](const Tensor& t, Axes axis, bool keepdim, py::object dtype) {
      Tensor x = dtype.is_none() ? t : t.cast(to_dtype(dtype));
      return (x.*f)(axis, keepdim);
    };
  };
  cls.def("sum", sum_like(&Tensor::sum), py::arg("axis") = py::none(), py::arg("keepdim") = false,
          py::arg("dtype") = py::none())
      .def("prod", sum_like(&Tensor::prod), py::arg("axis") = py::none(),
           py::arg("keepdim") = false, py::arg("dtype") = py::none())
      .def("max", &Tensor::max, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("min", &Tensor::min, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("any", &Tensor::any, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("all", &Tensor::all, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("mean", &Tensor::mean, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("var", &Tensor::var, py::arg("axis") = py::none(), py::arg("keepdim") = false,
           py::arg("correction") = 1)
      .def("std", &Tensor::std, py::arg("axis") = py::none(), py::arg("keepdim") = false,
           py::arg("correction") = 1)
      .def("var_mean", &Tensor::var_mean, py::arg("axis") = py::none(), py::arg("keepdim") = false,
           py::arg("correction") = 1)
      .def("std_mean", &Tensor::std_mean, py::arg("axis") = py::none(), py::arg("keepdim") = false,
           py::arg("correction") = 1)
      .def(
          "softmax",
          [](const Tensor& t, int axis, py::object d) {
            return t.softmax(axis, to_optional_dtype(d));
          },
          py::arg("axis") = -1, py::arg("dtype") = py::none())
      .def(
          "log_softmax",
          [](const Tensor& t, int axis, py::object d) {
            return t.log_softmax(axis, to_optional_dtype(d));
          },
          py::arg("axis") = -1, py::arg("dtype") = py::none())
      .def("logsumexp", &Tensor::logsumexp, py::arg("axis") = py::none(),
           py::arg("keepdim") = false)
      .def("logcumsumexp", &Tensor::logcumsumexp, py::arg("axis") = 0)
      .def("argmax", &Tensor::argmax, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("argmin", &Tensor::argmin, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("cumsum", &Tensor::cumsum, py::arg("axis") = 0)
      .def("cumprod", &Tensor::cumprod, py::arg("axis"))
      .def("cummax", &Tensor::cummax_with_indices, py::arg("axis") = 0)  // (values, indices)
      .def("cummin", &Tensor::cummin, py::arg("axis") = 0)
      .def(
          "softmin",
          [](const Tensor& t, int axis, py::object d) {
            return t.softmin(axis, to_optional_dtype(d));
          },
          py::arg("axis") = -1, py::arg("dtype") = py::none())
      .def("normalize", &Tensor::normalize, py::arg("p") = 2.0, py::arg("dim") = 1,
           py::arg("eps") = 1e-12)
      .def("sort", &Tensor::sort, py::arg("dim") = -1, py::arg("descending") = false)
      .def("argsort", &Tensor::argsort, py::arg("dim") = -1, py::arg("descending") = false)
      .def("topk", &Tensor::topk, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true,
           py::arg("sorted_") = true);

  // ---- products, convolutions, pools ----
  cls.def(
         "dot",
         [](const Tensor& t, const Tensor& w, py::object d) {
           return t.dot(w, to_optional_dtype(d));
         },
         py::arg("w"), py::arg("dtype") = py::none())
      .def(
          "matmul",
          [](const Tensor& t, const Tensor& x, bool reverse, py::object d) {
            return t.matmul(x, reverse, to_optional_dtype(d));
          },
          py::arg("x"), py::arg("reverse") = false, py::arg("dtype") = py::none())
      .def("linear", &Tensor::linear, py::arg("weight"), py::arg("bias") = py::none())
      .def("_pool", &Tensor::pool)
      .def(
          "conv2d",
          [](const Tensor& t, const Tensor& w, Opt bias, int64_t groups, IntTuple stride,
             IntTuple dilation, IntTuple padding, py::object d) {
            return t.conv2d(w, bias,
                            ConvOpts{groups, stride, dilation, padding, to_optional_dtype(d)});
          },
          py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1,
          py::arg("stride") = 1, py::arg("dilation") = 1, py::arg("padding") = 0,
          py::arg("dtype") = py::none())
      .def(
          "conv_transpose2d",
          [](const Tensor& t, const Tensor& w, Opt bias, int64_t groups, IntTuple stride,
             IntTuple dilation, IntTuple padding, IntTuple output_padding) {
            return t.conv_transpose2d(
                w, bias, ConvTransposeOpts{groups, stride, dilation, padding, output_padding});
          },
          py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1,
          py::arg("stride") = 1, py::arg("dilation") = 1, py::arg("padding") = 0,
          py::arg("output_padding") = 0)
      .def(
          "avg_pool2d",
          [](const Tensor& t, IntTuple k, py::object stride, IntTuple dilation, IntTuple padding,
             bool ceil_mode, bool count_include_pad) {
            IntTuple s =
                stride.is_none() ? IntTuple(std::vector<int64_t>{}) : stride.cast<IntTuple>();
            return t.avg_pool2d(PoolOpts{k, s, dilation, padding, ceil_mode, count_include_pad});
          },
          py::arg("kernel_size") = std::vector<int64_t>{2, 2}, py::arg("stride") = py::none(),
          py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("ceil_mode") = false,
          py::arg("count_include_pad") = true)
      .def(
          "max_pool2d",
          [](const Tensor& t, IntTuple k, py::object stride, IntTuple dilation, IntTuple padding,
             bool ceil_mode, bool return_indices) -> py::object {
            IntTuple s =
                stride.is_none() ? IntTuple(std::vector<int64_t>{}) : stride.cast<IntTuple>();
            PoolOpts o{k, s, dilation, padding, ceil_mode, true};
            if (return_indices) return py::cast(t.max_pool2d_with_indices(o));
            return py::cast(t.max_pool2d(o));
          },
          py::arg("kernel_size") = std::vector<int64_t>{2, 2}, py::arg("stride") = py::none(),
          py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("ceil_mode") = false,
          py::arg("return_indices") = false)
      .def(
          "max_unpool2d",
          [](const Tensor& t, const Tensor& idx, IntTuple k, py::object stride, IntTuple dilation,
             IntTuple padding, py::object output_size) {
            IntTuple s =
                stride.is_none() ? IntTuple(std::vector<int64_t>{}) : stride.cast<IntTuple>();
            return t.max_unpool2d(idx, UnpoolOpts{k, s, dilation, padding, opt_shape(output_size)});
          },
          py::arg("indices"), py::arg("kernel_size") = std::vector<int64_t>{2, 2},
          py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0,
          py::arg("output_size") = py::none())
      .def("interpolate", &Tensor::interpolate, py::arg("size"), py::arg("mode") = "linear",
           py::arg("align_corners") = false)
      .def_static("_einsum",
                  [](const std::string& f, const std::vector<Tensor>& ops, py::object d) {
                    return Tensor::einsum(f, ops, to_optional_dtype(d));
                  });

  // ---- nn ops and losses ----
  cls.def("layernorm", &Tensor::layernorm, py::arg("axis") = -1, py::arg("eps") = 1e-5)
      .def("batchnorm", &Tensor::batchnorm, py::arg("weight"), py::arg("bias"), py::arg("mean"),
           py::arg("invstd"), py::arg("axis") = 1)
      .def("dropout", &Tensor::dropout, py::arg("p") = 0.5)
      .def(
          "scaled_dot_product_attention",
          [](const Tensor& q, const Tensor& k, const Tensor& v, Opt mask, double dropout_p,
             bool is_causal, bool enable_gqa) {
            return q.scaled_dot_product_attention(k, v, mask,
                                                  AttentionOpts{dropout_p, is_causal, enable_gqa});
          },
          py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
          py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("enable_gqa") = false)
      .def("binary_crossentropy", &Tensor::binary_crossentropy, py::arg("Y"),
           py::arg("reduction") = "mean")
      .def("binary_crossentropy_logits", &Tensor::binary_crossentropy_logits, py::arg("Y"),
           py::arg("reduction") = "mean", py::arg("pos_weight") = py::none())
      .def(
          "sparse_categorical_crossentropy",
          [](const Tensor& t, const Tensor& Y, int64_t ignore_index, double label_smoothing,
             std::string reduction) {
            return t.sparse_categorical_crossentropy(
                Y, SparseCrossEntropyOpts{ignore_index, label_smoothing, reduction});
          },
          py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0,
          py::arg("reduction") = "mean")
      .def("cross_entropy", &Tensor::cross_entropy, py::arg("Y"), py::arg("reduction") = "mean",
           py::arg("label_smoothing") = 0.0)
      .def("nll_loss", &Tensor::nll_loss, py::arg("Y"), py::arg("weight") = py::none(),
           py::arg("ignore_index") = py::none(), py::arg("reduction") = "mean")
      .def(
          "sequential",
          [](const Tensor& t, py::iterable layers) {
            py::object x = py::cast(t);
            for (py::handle f : layers) x = f(x);
            return x;
          },
          py::arg("ll"))
      .def(
          "keccak",
          [](const Tensor& t, py::object cfg) {
            if (py::isinstance<py::str>(cfg)) return t.keccak(cfg.cast<std::string>());
            auto [rate, ds] = cfg.cast<std::pair<int, int>>();
            return t.keccak(rate, ds);
          },
          py::arg("cfg") = "sha3_256");

  // ---- state: assign, copies, devices ----
  cls.def(
         "assign",
         [](py::object self, py::object x) {
           // tinygrad's: Python data takes the tensor's dtype, and the value broadcasts to its
           // shape; the same Python object comes back (t += 1 keeps t)
           Tensor& t = self.cast<Tensor&>();
           Tensor v = tensor_from_python(
               x, py::isinstance<Tensor>(x) ? std::nullopt : std::optional<DType>(t.dtype()));
           if (v.shape() != t.shape()) {
             try {
               v = v.expand(t.shape());
             } catch (const Error&) {  // assign() names the mismatch
             }
           }
           t.assign(v);
           return self;
         },
         py::arg("x"))
      .def(
          "replace", [](Tensor& t, const Tensor& x) { return t.replace(x); }, py::arg("x"))
      .def(
          "clone",
          [](const Tensor& t, py::object device) {
            Tensor c = t.clone();
            return device.is_none() ? c : c.to(device.cast<std::string>());
          },
          py::arg("device") = py::none())
      // a tuple of devices: a whole copy on each (tinygrad's multi-device to)
      .def(
          "to",
          [](const Tensor& t, py::object device) {
            if (py::isinstance<py::tuple>(device))
              return t.shard(device.cast<std::vector<std::string>>());
            return device.is_none() ? t : t.to(device.cast<std::string>());
          },
          py::arg("device"))
      .def(
          "to_",
          [](py::object self, py::object device) {
            Tensor& t = self.cast<Tensor&>();
            if (py::isinstance<py::tuple>(device))
              t.shard_(device.cast<std::vector<std::string>>());
            else if (!device.is_none())
              t.to_(device.cast<std::string>());
            return self;
          },
          py::arg("device"))
      .def("shard", &Tensor::shard, py::arg("devices"), py::arg("axis") = py::none())
      .def(
          "shard_",
          [](py::object self, const std::vector<std::string>& devices, std::optional<int> axis) {
            self.cast<Tensor&>().shard_(devices, axis);
            return self;
          },
          py::arg("devices"), py::arg("axis") = py::none())
      .def_property_readonly("shard_axis", &Tensor::shard_axis)
      .def("const_like", &Tensor::const_like, py::arg("b"))
      .def("multinomial", &Tensor::multinomial, py::arg("num_samples") = 1,
           py::arg("replacement") = false);

  // ---- creation (static; Python forms with *shape and device= in tensor.py) ----
  cls.def_static("_full", [](Shape s, ConstValue v,
                             py::object d) { return Tensor::full(s, v, to_optional_dtype(d)); })
      .def_static("_empty", [](Shape s, py::object d) { return Tensor::empty(s, to_dtype(d)); })
      .def_static("_arange",
                  [](double start, double stop, double step, py::object d) {
                    return Tensor::arange(start, stop, step, to_optional_dtype(d));
                  })
      .def_static("_eye", [](int64_t n, std::optional<int64_t> m,
                             py::object d) { return Tensor::eye(n, m, to_dtype(d)); })
      .def_static("_linspace", [](double a, double b, int64_t n,
                                  py::object d) { return Tensor::linspace(a, b, n, to_dtype(d)); })
      .def_static("_rand",
                  [](Shape s, py::object d, bool contiguous) {
                    return Tensor::rand(s, to_optional_dtype(d), contiguous);
                  })
      .def_static("_randn",
                  [](Shape s, py::object d) { return Tensor::randn(s, to_optional_dtype(d)); })
      .def_static("_randint",
                  [](Shape s, int64_t low, int64_t high, py::object d) {
                    return Tensor::randint(s, RandintOptions{low, high, to_dtype(d)});
                  })
      .def_static("_normal",
                  [](Shape s, double mean, double std, py::object d) {
                    return Tensor::normal(s, NormalOptions{mean, std, to_optional_dtype(d)});
                  })
      .def_static("_uniform",
                  [](Shape s, double low, double high, py::object d) {
                    return Tensor::uniform(s, UniformOptions{low, high, to_optional_dtype(d)});
                  })
      .def_static(
          "_scaled_uniform",
          [](Shape s, py::object d) { return Tensor::scaled_uniform(s, to_optional_dtype(d)); })
      .def_static(
          "_glorot_uniform",
          [](Shape s, py::object d) { return Tensor::glorot_uniform(s, to_optional_dtype(d)); })
      .def_static("_kaiming_uniform",
                  [](Shape s, double a, py::object d) {
                    return Tensor::kaiming_uniform(s, a, to_optional_dtype(d));
                  })
      .def_static("_kaiming_normal",
                  [](Shape s, double a, py::object d) {
                    return Tensor::kaiming_normal(s, a, to_optional_dtype(d));
                  })
      .def_static("_randperm",
                  [](int64_t n, py::object d) { return Tensor::randperm(n, to_dtype(d)); })
      .def_static("manual_seed", &Tensor::manual_seed, py::arg("seed") = 0)
      .def_property_static(
          "training", [](py::object) { return Tensor::training(); },
          [](py::object, bool v) { Tensor::set_training(v); })
      .def_static("_training", &Tensor::training)
      .def_static("_set_training", &Tensor::set_training)
      .def_static("_no_grad", &Tensor::no_grad);

  // NewAxis / Ellipsis / slices / tensors inside an index, from tensor.py's normalized list
  py::class_<IndexItem>(m, "_IndexItem")
      .def_static("int", [](int64_t i) { return IndexItem(static_cast<long long>(i)); })
      .def_static("slice", [](std::optional<int64_t> a, std::optional<int64_t> b,
                              std::optional<int64_t> c) { return IndexItem(Slice(a, b, c)); })
      .def_static("newaxis", [] { return IndexItem(NewAxis); })
      .def_static("ellipsis", [] { return IndexItem(Ellipsis); })
      .def_static("tensor", [](const Tensor& t) { return IndexItem(t); });
  py::class_<NoGrad>(m, "_NoGrad").def(py::init<>());
}

}  // namespace tc::python
