#include "apps/infer/image_input.h"

#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_format.h"

namespace tc::infer {

std::vector<float> decode_image(std::string_view bytes, int64_t channels, int64_t height,
                                int64_t width, const ImageLimits& limits) {
  if (bytes.empty()) fail("image: the body is empty");
  if (channels < 1 || channels > 4 || height < 1 || width < 1 || height > 65536 || width > 65536)
    fail("image: cannot make %d channels of %dx%d (expected 1..4 channels, sides 1..65536)",
         channels, height, width);
  if (static_cast<int64_t>(bytes.size()) > limits.max_bytes)
    throw ImageTooLarge(absl::StrFormat("image: %d bytes is more than the limit of %d",
                                        bytes.size(), limits.max_bytes));
  auto data = reinterpret_cast<const stbi_uc*>(bytes.data());
  int len = static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)), w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(data, len, &w, &h, &comp))
    fail("image: not a decodable image (PNG, JPEG, BMP, GIF, TGA, PNM, PSD, HDR): %s",
         stbi_failure_reason());
  if (w > limits.max_side || h > limits.max_side)
    throw ImageTooLarge(absl::StrFormat("image: %dx%d is larger than the limit of %dx%d", w, h,
                                        limits.max_side, limits.max_side));
  int c = static_cast<int>(channels), oh = static_cast<int>(height), ow = static_cast<int>(width);
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(data, len, &w, &h, &comp, c), stbi_image_free);
  if (!pixels) fail("image: decoding failed: %s", stbi_failure_reason());
  std::vector<stbi_uc> resized(static_cast<size_t>(oh) * ow * c);
  if (w == ow && h == oh)
    std::copy_n(pixels.get(), resized.size(), resized.begin());
  else if (!stbir_resize_uint8(pixels.get(), w, h, 0, resized.data(), ow, oh, 0, c))
    fail("image: resizing %dx%d to %dx%d failed", w, h, ow, oh);
  // stb gives rows of interleaved channels (HWC); models take planes (CHW).
  std::vector<float> out(resized.size());
  const size_t plane = static_cast<size_t>(oh) * ow;
  for (size_t ch = 0; ch < static_cast<size_t>(c); ch++)
    for (size_t p = 0; p < plane; p++) out[ch * plane + p] = resized[p * c + ch];
  return out;
}

}  // namespace tc::infer
