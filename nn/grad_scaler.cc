#include "nn/grad_scaler.h"

#include "tinycore/error.h"

namespace tc::nn {

GradScaler::GradScaler(GradScalerOpts opts)
    : o_(opts), scale_(state_tensor({}, opts.init_scale)), growth_tracker_(state_tensor({}, 0)) {
  if (!(o_.init_scale > 0)) fail("GradScaler: init_scale must be positive, got %g", o_.init_scale);
  if (!(o_.growth_factor > 1))
    fail("GradScaler: growth_factor must be above 1, got %g", o_.growth_factor);
  if (!(o_.backoff_factor > 0 && o_.backoff_factor < 1))
    fail("GradScaler: backoff_factor must be in (0, 1), got %g", o_.backoff_factor);
  if (o_.growth_interval < 1)
    fail("GradScaler: growth_interval must be at least 1, got %d", o_.growth_interval);
}

Tensor GradScaler::scale(const Tensor& loss) const { return loss * scale_.cast(loss.dtype()); }

Tensor GradScaler::unscale(const std::vector<Tensor>& params) const {
  Tensor finite = Tensor::full({}, true);
  for (size_t i = 0; i < params.size(); i++) {
    std::optional<Tensor> g = params[i].grad();
    if (!g)
      fail("GradScaler.unscale: parameter %d (shape %s) has no gradient; call backward() first", i,
           fmt_shape(params[i].shape()));
    Tensor unscaled = (*g / scale_).cast(g->dtype());
    finite = finite.bitwise_and(unscaled.isfinite().all());
    Tensor p = params[i];
    p.set_grad(unscaled);
  }
  return finite;
}

std::vector<Tensor> GradScaler::update(const Tensor& finite) {
  Tensor good = finite.where(growth_tracker_ + 1.0, 0.0);
  Tensor grow = good.ge(static_cast<double>(o_.growth_interval));
  scale_.assign(
      finite.where(grow.where(scale_ * o_.growth_factor, scale_), scale_ * o_.backoff_factor));
  growth_tracker_.assign(grow.where(0.0, good));
  return {scale_, growth_tracker_};
}

StateDict GradScaler::state_dict() const {
  return {{"scale", scale_}, {"growth_tracker", growth_tracker_}};
}

}  // namespace tc::nn
