// nn ops and losses: softmax and its kin, layernorm, batchnorm, scaled dot-product attention,
// dropout (in training mode) and the classification / regression losses, composed from the Tensor
// ops (log_softmax, where, sum ...) as the seeds' tinygrad Tensor. Labels become one-hot masks by
// comparing against an arange.
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {
namespace {

void check_reduction(const char* op, const std::string& reduction) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    fail("Tensor.%s: reduction must be one of \"mean\", \"sum\" or \"none\", got \"%s\"", op,
         reduction);
}

Tensor do_reduction(const Tensor& t, const std::string& reduction) {
  if (reduction == "mean") return t.mean();
  if (reduction == "sum") return t.sum();
  return t;
}

void check_smoothing(const char* op, double label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    fail("Tensor.%s: label_smoothing must be in [0, 1], got %g", op, label_smoothing);
}

// Labels must be integers of the logits' shape without the class axis `ax`.
void check_labels(const char* op, const Tensor& x, const Tensor& y, int ax) {
  if (!dtypes::is_int(y.dtype()))
    fail("Tensor.%s: labels must have an integer dtype, got %s (labels of shape %s)", op,
         y.dtype().name(), fmt_shape(y.shape()));
  Shape want = x.shape();
  want.erase(want.begin() + ax);
  if (y.shape() != want)
    fail(
        "Tensor.%s: labels of shape %s do not match logits of shape %s (expected labels of shape "
        "%s)",
        op, fmt_shape(y.shape()), fmt_shape(x.shape()), fmt_shape(want));
}

// (labels == c) for every class c, as bool with the class axis inserted at `ax` of the result.
Tensor one_hot_at(const Tensor& labels, int64_t classes, int ax) {
  Shape s(labels.ndim() + 1, 1);
  s[ax] = classes;
  Tensor cls = Tensor::arange(0, static_cast<double>(classes), 1, labels.dtype()).reshape(s);
  return labels.unsqueeze(ax).eq(cls);
}

// True where a label is outside [0, classes).
Tensor out_of_range(const Tensor& labels, int64_t classes) {
  return labels.lt(ConstValue(0))
      .bitwise_or(labels.ge(ConstValue(static_cast<long long>(classes))));
}

// `loss` with NaN where `bad` is true: a label out of range makes its loss (and a reduction over
// it) NaN instead of silently 0.
Tensor poison(const Tensor& loss, const Tensor& bad) {
  return bad.where(ConstValue(std::numeric_limits<double>::quiet_NaN()), loss);
}

std::atomic<bool> training_flag{false};

}  // namespace

// ---------------------------------------------------------------- softmax

Tensor Tensor::softmax(int axis, std::optional<DType> dtype) const {
  if (ndim() == 0)
    return on_scalar("softmax", axis, [&](const Tensor& v) { return v.softmax(0, dtype); });
  detail::resolve_dim("softmax", *this, axis);
  Tensor m = sub(max(axis, true).detach());
  if (dtype) m = m.cast(*dtype);
  Tensor e = m.exp();
  return e.div(e.sum(axis, true));
}

Tensor Tensor::log_softmax(int axis, std::optional<DType> dtype) const {
  if (ndim() == 0)
    return on_scalar("log_softmax", axis, [&](const Tensor& v) { return v.log_softmax(0, dtype); });
  detail::resolve_dim("log_softmax", *this, axis);
  Tensor m = sub(max(axis, true).detach());
  if (dtype) m = m.cast(*dtype);
  return m.sub(m.exp().sum(axis, true).log());
}

Tensor Tensor::softmin(int axis, std::optional<DType> dtype) const {
  return neg().softmax(axis, dtype);
}

// ---------------------------------------------------------------- normalization

Tensor Tensor::layernorm(Axes axis, double eps) const {
  reduce_axes("layernorm", axis);
  if (!dtypes::is_float(dtype()))
    fail("Tensor.layernorm: needs a float tensor, got %s of shape %s", dtype().name(),
         fmt_shape(shape()));
  Tensor y = sub(mean(axis, true));
  return y.mul(y.mul(y).mean(axis, true).add(ConstValue(eps)).rsqrt());
}

Tensor Tensor::batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                         const Tensor& mean, const Tensor& invstd, Axes axis) const {
  std::vector<int64_t> axes = reduce_axes("batchnorm", axis);
  Shape s(ndim(), 1), kept;
  for (int64_t a : axes) {
    s[a] = shape()[a];
    kept.push_back(shape()[a]);
  }
  int64_t n = shape_numel(kept);
  auto param = [&](const Tensor& t, const char* name) {
    if (t.numel() != n)
      fail(
          "Tensor.batchnorm: %s of shape %s does not hold one value per position %s of the "
          "normalized axes of shape %s",
          name, fmt_shape(t.shape()), fmt_shape(kept), fmt_shape(shape()));
    return t.reshape(s);
  };
  Tensor x = sub(param(mean, "mean"));
  if (weight) x = x.mul(param(*weight, "weight"));
  Tensor inv = invstd.ndim() == static_cast<int>(axes.size()) ? param(invstd, "invstd") : invstd;
  broadcast_shape("batchnorm", {x.shape(), inv.shape()});
  Tensor ret = x.mul(inv);
  return bias ? ret.add(param(*bias, "bias")) : ret;
}

Tensor Tensor::normalize(double p, int dim, double eps) const {
  detail::resolve_dim("normalize", *this, dim, detail::Dims::kExisting);
  Tensor norm = p == 0 ? ne(ConstValue(0)).sum(dim, true)
                       : abs().pow(ConstValue(p)).sum(dim, true).pow(ConstValue(1.0 / p));
  return div(norm.maximum(ConstValue(eps)));
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                            const std::optional<Tensor>& attn_mask,
                                            const AttentionOpts& opts) const {
  const char* op = "Tensor.scaled_dot_product_attention";
  if (ndim() < 2 || key.ndim() < 2 || value.ndim() < 2)
    fail("%s: query, key and value need at least 2 dimensions, got %s, %s and %s", op,
         fmt_shape(shape()), fmt_shape(key.shape()), fmt_shape(value.shape()));
  if (!dtypes::is_float(dtype())) fail("%s: the query must be float, got %s", op, dtype().name());
  if (key.shape().back() != shape().back())
    fail("%s: query %s and key %s differ in the last (embedding) dimension", op, fmt_shape(shape()),
         fmt_shape(key.shape()));
  if (key.shape()[key.ndim() - 2] != value.shape()[value.ndim() - 2])
    fail("%s: key %s and value %s differ in the sequence dimension (-2)", op,
         fmt_shape(key.shape()), fmt_shape(value.shape()));
  if (!(opts.dropout_p >= 0 && opts.dropout_p <= 1))
    fail("%s: dropout_p must be in [0, 1], got %g", op, opts.dropout_p);
  if (opts.is_causal && attn_mask) fail("%s: cannot set attn_mask when is_causal is true", op);
  Tensor k = key, v = value;
  if (opts.enable_gqa) {  // repeat_interleave of the kv heads (dim -3) to the query's
    auto repeat_heads = [&](const Tensor& t, const char* name) {
      if (ndim() < 3 || t.ndim() < 3)
        fail("%s: enable_gqa needs a head dimension (-3), got query %s and %s %s", op,
             fmt_shape(shape()), name, fmt_shape(t.shape()));
      int64_t hq = shape()[ndim() - 3], hk = t.shape()[t.ndim() - 3];
      if (hk == 0 || hq % hk != 0)
        fail("%s: enable_gqa: the query's %d heads are not a multiple of the %s's %d", op, hq, name,
             hk);
      Shape e = t.shape();
      e.insert(e.end() - 2, hq / hk);
      Shape out = t.shape();
      out[out.size() - 3] = hq;
      return t.unsqueeze(-3).expand(e).reshape(out);
    };
    k = repeat_heads(k, "key");
    v = repeat_heads(v, "value");
  }
  DType acc = least_upper_dtype({dtype(), k.dtype(), dtypes::float32});
  Tensor qk = matmul(k.transpose(-2, -1), false, acc)
                  .div(ConstValue(std::sqrt(static_cast<double>(shape().back()))));
  if (opts.is_causal || attn_mask) {
    Tensor m = opts.is_causal ? Tensor::full(qk.shape(), true, dtypes::bool_).tril() : *attn_mask;
    broadcast_shape("scaled_dot_product_attention", {qk.shape(), m.shape()});
    if (dtypes::is_bool(m.dtype()))
      m = m.where(ConstValue(0.0), ConstValue(-std::numeric_limits<double>::infinity()));
    qk = qk.add(m);
  }
  Tensor w = qk.cast(dtype()).softmax(-1);
  w = w.dropout(opts.dropout_p);  // only in training mode
  return w.matmul(v);
}

// ---------------------------------------------------------------- dropout

bool Tensor::training() { return training_flag.load(); }
void Tensor::set_training(bool mode) { training_flag.store(mode); }
Tensor::Train::Train(bool mode) : prev_(training_flag.exchange(mode)) {}
Tensor::Train::~Train() { training_flag.store(prev_); }

Tensor Tensor::dropout(double p) const {
  if (!(p >= 0 && p <= 1)) fail("Tensor.dropout: p=%g is out of range [0, 1]", p);
  if (!training() || p == 0) return *this;
  if (p == 1) return zeros_like(*this);
  Tensor keep = rand(shape(), dtypes::default_float, false).ge(ConstValue(p)).contiguous();
  return keep.where(*this, ConstValue(0)).div(ConstValue(1.0 - p));
}

// ---------------------------------------------------------------- losses

Tensor Tensor::binary_crossentropy(const Tensor& Y, const std::string& reduction) const {
  check_reduction("binary_crossentropy", reduction);
  broadcast_shape("binary_crossentropy", {shape(), Y.shape()});
  // log clamped at -100 as PyTorch's BCELoss, so 0 * log(0) is 0, not NaN
  Tensor log_p = log().maximum(ConstValue(-100.0));
  Tensor log_1mp = sub(ConstValue(1.0), true).log().maximum(ConstValue(-100.0));
  Tensor loss = Y.mul(log_p).add(Y.sub(ConstValue(1.0), true).mul(log_1mp)).neg();
  return do_reduction(loss, reduction);
}

Tensor Tensor::binary_crossentropy_logits(const Tensor& Y, const std::string& reduction,
                                          const std::optional<Tensor>& pos_weight) const {
  check_reduction("binary_crossentropy_logits", reduction);
  broadcast_shape("binary_crossentropy_logits", {shape(), Y.shape()});
  Tensor pos = Y.mul(logsigmoid());
  if (pos_weight) {
    broadcast_shape("binary_crossentropy_logits", {pos.shape(), pos_weight->shape()});
    pos = pos.mul(*pos_weight);
  }
  Tensor loss = pos.add(Y.sub(ConstValue(1.0), true).mul(neg().logsigmoid())).neg();
  return do_reduction(loss, reduction);
}

Tensor Tensor::sparse_categorical_crossentropy(const Tensor& Y,
                                               const SparseCrossEntropyOpts& opts) const {
  const char* op = "sparse_categorical_crossentropy";
  check_reduction(op, opts.reduction);
  check_smoothing(op, opts.label_smoothing);
  if (ndim() < 1) fail("Tensor.%s: logits must have a class axis, got a scalar", op);
  check_labels(op, *this, Y, ndim() - 1);
  int64_t classes = shape().back();
  Tensor log_probs = log_softmax(-1);
  Tensor mask = opts.ignore_index != -1
                    ? Y.ne(ConstValue(static_cast<long long>(opts.ignore_index)))
                    : Tensor::full(Y.shape(), true, dtypes::bool_);
  Tensor hot = one_hot_at(Y, classes, Y.ndim());
  Tensor picked = hot.where(log_probs, ConstValue(0.0)).sum(-1);
  double ls = opts.label_smoothing;
  Tensor smoothing = mask.where(log_probs.mean(-1), ConstValue(0.0)).mul(ConstValue(ls));
  Tensor unreduced = mask.where(picked, ConstValue(0.0)).mul(ConstValue(1.0 - ls)).add(smoothing);
  unreduced = poison(unreduced, out_of_range(Y, classes).bitwise_and(mask));
  if (opts.reduction == "mean") return unreduced.sum().div(mask.sum()).neg();
  if (opts.reduction == "sum") return unreduced.sum().neg();
  return unreduced.neg();
}

Tensor Tensor::cross_entropy(const Tensor& Y, const std::string& reduction,
                             double label_smoothing) const {
  const char* op = "cross_entropy";
  check_reduction(op, reduction);
  check_smoothing(op, label_smoothing);
  if (ndim() < 1) fail("Tensor.%s: logits must have a class axis, got a scalar", op);
  int ax = ndim() >= 2 ? 1 : 0;
  int64_t classes = shape()[ax];
  Tensor log_probs = log_softmax(ax);
  Tensor loss = log_probs;
  if (dtypes::is_float(Y.dtype())) {  // class probabilities
    if (Y.shape() != shape())
      fail("Tensor.%s: class probabilities of shape %s do not match logits of shape %s", op,
           fmt_shape(Y.shape()), fmt_shape(shape()));
    Tensor target = Y.mul(ConstValue(1.0 - label_smoothing))
                        .add(ConstValue(label_smoothing / static_cast<double>(classes)));
    loss = log_probs.mul(target).sum(ax).neg();
  } else {  // class indices
    check_labels(op, *this, Y, ax);
    Tensor picked = one_hot_at(Y, classes, ax).where(log_probs, ConstValue(0.0)).sum(ax);
    Tensor smooth = log_probs.mean(ax).mul(ConstValue(label_smoothing));
    loss = picked.mul(ConstValue(1.0 - label_smoothing)).add(smooth).neg();
    loss = poison(loss, out_of_range(Y, classes));
  }
  return do_reduction(loss, reduction);
}

Tensor Tensor::nll_loss(const Tensor& Y, const std::optional<Tensor>& weight,
                        std::optional<int64_t> ignore_index, const std::string& reduction) const {
  const char* op = "nll_loss";
  check_reduction(op, reduction);
  if (ndim() < 1) fail("Tensor.%s: log-probabilities must have a class axis, got a scalar", op);
  int ax = ndim() >= 2 ? 1 : 0;
  int64_t classes = shape()[ax];
  check_labels(op, *this, Y, ax);
  Tensor hot = one_hot_at(Y, classes, ax);
  Tensor w = Tensor::full(Y.shape(), 1.0, dtypes::float32);
  if (weight) {
    if (weight->shape() != Shape{classes})
      fail("Tensor.%s: weight of shape %s needs one value per class (%d) of input %s", op,
           fmt_shape(weight->shape()), classes, fmt_shape(shape()));
    Shape s(ndim(), 1);
    s[ax] = classes;
    w = hot.where(weight->reshape(s), ConstValue(0.0)).sum(ax);
  }
  Tensor bad = out_of_range(Y, classes);
  if (ignore_index) {
    Tensor keep = Y.ne(ConstValue(static_cast<long long>(*ignore_index)));
    w = keep.where(w, ConstValue(0.0));
    bad = bad.bitwise_and(keep);
  }
  Tensor nll = poison(hot.where(*this, ConstValue(0.0)).sum(ax).neg().mul(w), bad);
  if (reduction == "mean") return nll.sum().div(w.sum());
  return do_reduction(nll, reduction);
}

}  // namespace tc
