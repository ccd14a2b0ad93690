// libFuzzer target for the GGUF parser: any bytes must parse or give a FormatError, never a crash,
// a hang, an unbounded allocation or a read out of bounds (ASan and UBSan watch). On a file that
// parses, every tensor's bytes must lie inside the input and match its type's block size, and
// every accessor on every key must give a value or a FormatError.
#include <cstdint>
#include <cstdlib>

#include "frontends/llm/gguf.h"

namespace gguf = tc::gguf;

template <typename F>
void accessor(F f) {
  try {
    f();
  } catch (const gguf::FormatError&) {
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gguf::File f;
  try {
    f = gguf::parse(data, size);
  } catch (const gguf::FormatError&) {
    return 0;
  }
  for (const gguf::TensorInfo& t : f.tensors) {
    const gguf::TypeInfo& info = gguf::type_info(t.type);  // parse() accepted it: must not throw
    if (t.offset < f.data_offset || t.offset > size || t.bytes > size - t.offset ||
        t.offset % f.alignment != 0 || t.dims[0] % info.block_elems != 0 ||
        static_cast<uint64_t>(t.numel() / info.block_elems * info.block_bytes) != t.bytes)
      std::abort();
  }
  const gguf::Metadata& m = f.metadata;
  for (const auto& kv : m.values) {
    const std::string& key = kv.first;
    accessor([&] { m.get_string(key); });
    accessor([&] { m.get_int(key); });
    accessor([&] { m.get_float(key); });
    accessor([&] { m.get_bool(key); });
    accessor([&] { m.get_strings(key); });
    accessor([&] { m.get_ints(key); });
    accessor([&] { m.get_floats(key); });
  }
  return 0;
}
