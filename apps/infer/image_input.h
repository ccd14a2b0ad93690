// Encoded image bytes (PNG, JPEG, BMP, ... as stb_image decodes them) as a model's input: decoded
// to the model's channels, resized (area averaging when shrinking) and laid out as planes (CHW).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tinycore/error.h"

namespace tc::infer {

// What decode_image throws for an image over the limits (other bad bytes: a plain tc::Error), so
// a server can answer 413 rather than 422.
class ImageTooLarge : public Error {
 public:
  using Error::Error;
};

struct ImageLimits {
  int64_t max_bytes = 16 << 20;  // encoded size
  int64_t max_side = 4096;       // width and height, checked before decoding
};

// channels x height x width values in 0..255 (gray, gray+alpha, RGB or RGBA as stb converts to
// `channels`). Throws ImageTooLarge past the limits, tc::Error ("image: ...") for bytes that are
// not a decodable image. Thread safe.
std::vector<float> decode_image(std::string_view bytes, int64_t channels, int64_t height,
                                int64_t width, const ImageLimits& limits = {});

}  // namespace tc::infer
