// (being written)
#include "tinycore/tensor.h"

namespace tc {}  // namespace tc
