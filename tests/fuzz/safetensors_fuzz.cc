// libFuzzer target for the safetensors header parser: any bytes must give a header or a
// FormatError, never a crash, a hang or a read out of bounds (ASan and UBSan watch), and every
// range of an accepted header must lie inside the input.
#include <cstdint>
#include <cstdlib>

#include "nn/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tc::safetensors::Header h = tc::safetensors::parse_header(data, size);
    for (const tc::safetensors::TensorInfo& t : h.tensors)
      if (t.begin > t.end || h.data_offset + t.end > size) std::abort();
  } catch (const tc::safetensors::FormatError&) {
  }
  return 0;
}
