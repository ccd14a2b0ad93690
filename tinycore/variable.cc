#include "tinycore/variable.h"

#include "tinycore/error.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"

namespace tc {

Variable::Variable(std::string name, int64_t min, int64_t max)
    : name_(std::move(name)),
      min_(min),
      max_(max),
      value_(min),
      tensor_(
          Tensor(schedule::new_buffer(runtime::default_device(), dtypes::int32, 1)).reshape({})) {
  if (min > max) fail("Variable %s: min %d is greater than max %d", name_, min, max);
  if (min < INT32_MIN || max > INT32_MAX)
    fail("Variable %s: range [%d, %d] does not fit int32", name_, min, max);
  bind(min);
}

Variable& Variable::bind(int64_t value) {
  if (value < min_ || value > max_)
    fail("Variable %s: value %d is outside its range [%d, %d]", name_, value, min_, max_);
  value_ = value;
  int32_t v = static_cast<int32_t>(value);
  schedule::base_buffer(tensor_.uop())->buffer->copyin(&v, sizeof v);
  return *this;
}

}  // namespace tc
